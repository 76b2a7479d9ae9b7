// Storage with a span per call, when tracing is on: a decorator over any engine, so that neither engines nor handlers know of tracing.
import { type Attributes, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api'
import { ATTR_DB_SYSTEM_NAME, DB_SYSTEM_NAME_VALUE_POSTGRESQL } from '@opentelemetry/semantic-conventions'
import type { Repositories } from './types.js'

/**
 * Each call becomes a span named after the store and method (`books.get`), a child of the span
 * current at the call, normally the request's. INTERNAL, not a database CLIENT span: a call may be
 * answered from a cache, or share one commit with other requests' writes (group commit).
 */
export function tracedRepositories (repositories: Repositories, tracer: Tracer): Repositories {
  const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: repositories.engine === 'postgres' ? DB_SYSTEM_NAME_VALUE_POSTGRESQL : 'sqlite' }
  const options = { kind: SpanKind.INTERNAL, attributes }
  async function traced<R> (name: string, call: () => Promise<R>): Promise<R> {
    const span = tracer.startSpan(name, options)
    try {
      const result = await call()
      span.end()
      return result
    } catch (error) {
      span.recordException(error as Error)
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message })
      span.end()
      throw error
    }
  }
  const { books, students, idempotency, apiKeys } = repositories
  return {
    engine: repositories.engine,
    books: {
      list: async (query, limit, after) => traced('books.list', () => books.list(query, limit, after)),
      get: async id => traced('books.get', () => books.get(id)),
      create: async (values, remember) => traced('books.create', () => books.create(values, remember)),
      replace: async (id, values, expected) => traced('books.replace', () => books.replace(id, values, expected)),
      delete: async (id, expected) => traced('books.delete', () => books.delete(id, expected))
    },
    students: {
      list: async (query, limit, after) => traced('students.list', () => students.list(query, limit, after)),
      get: async id => traced('students.get', () => students.get(id)),
      create: async (values, remember) => traced('students.create', () => students.create(values, remember)),
      replace: async (id, values, expected) => traced('students.replace', () => students.replace(id, values, expected))
    },
    idempotency: {
      find: async (scope, key, now) => traced('idempotency.find', () => idempotency.find(scope, key, now))
    },
    apiKeys: {
      create: async key => traced('apiKeys.create', () => apiKeys.create(key)),
      find: async keyId => traced('apiKeys.find', () => apiKeys.find(keyId)),
      list: async () => traced('apiKeys.list', () => apiKeys.list()),
      revoke: async keyId => traced('apiKeys.revoke', () => apiKeys.revoke(keyId))
    },
    // Not part of answering a caller: the secret is read once at start, and a probe is a health check's.
    cursorSecret: async () => repositories.cursorSecret(),
    probe: async () => repositories.probe(),
    usage: () => repositories.usage(),
    close: async () => repositories.close()
  }
}
