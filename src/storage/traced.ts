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
  const { books, students, idempotency, apiKeys, events, webhooks, imports } = repositories
  return {
    engine: repositories.engine,
    books: {
      list: async (query, limit, after, feedPosition, caller) => traced('books.list', () => books.list(query, limit, after, feedPosition, caller)),
      // The span covers opening the snapshot; the rows are read as the response is sent.
      export: async (query, options) => traced('books.export', () => books.export(query, options)),
      get: async id => traced('books.get', () => books.get(id)),
      create: async (values, remember, given) => traced('books.create', () => books.create(values, remember, given)),
      createMany: async records => traced('books.createMany', () => books.createMany(records)),
      replace: async (id, values, expected) => traced('books.replace', () => books.replace(id, values, expected)),
      delete: async (id, expected) => traced('books.delete', () => books.delete(id, expected))
    },
    students: {
      list: async (query, limit, after, feedPosition, caller) => traced('students.list', () => students.list(query, limit, after, feedPosition, caller)),
      // The span covers opening the snapshot; the rows are read as the response is sent.
      export: async (query, options) => traced('students.export', () => students.export(query, options)),
      get: async id => traced('students.get', () => students.get(id)),
      create: async (values, remember, given) => traced('students.create', () => students.create(values, remember, given)),
      createMany: async records => traced('students.createMany', () => students.createMany(records)),
      replace: async (id, values, expected) => traced('students.replace', () => students.replace(id, values, expected))
    },
    idempotency: {
      find: async (scope, key, now) => traced('idempotency.find', () => idempotency.find(scope, key, now))
    },
    apiKeys: {
      create: async key => traced('apiKeys.create', () => apiKeys.create(key)),
      find: async keyId => traced('apiKeys.find', () => apiKeys.find(keyId)),
      list: async () => traced('apiKeys.list', () => apiKeys.list()),
      revoke: async keyId => traced('apiKeys.revoke', () => apiKeys.revoke(keyId)),
      // The start's work, before any request.
      createFirst: apiKeys.createFirst.bind(apiKeys),
      rename: apiKeys.rename.bind(apiKeys),
      // What streams hear: no request's call.
      onRevoked: apiKeys.onRevoked.bind(apiKeys)
    },
    events: {
      head: async () => traced('events.head', () => events.head()),
      oldest: async () => traced('events.oldest', () => events.oldest()),
      check: async position => traced('events.check', () => events.check(position)),
      read: async (after, types, limit, lane) => traced('events.read', () => events.read(after, types, limit, lane)),
      // Background work of the node, not of a request.
      prune: events.prune.bind(events),
      onCommit: events.onCommit.bind(events)
    },
    imports: {
      start: async (started, runner, leaseUntil) => traced('imports.start', () => imports.start(started, runner, leaseUntil)),
      get: async importId => traced('imports.get', () => imports.get(importId)),
      list: async (keyId, limit) => traced('imports.list', () => imports.list(keyId, limit)),
      update: async (importId, changes, lease, fingerprint) => traced('imports.update', () => imports.update(importId, changes, lease, fingerprint)),
      // A file's rows and an import's batches: many calls per request or none, in the runner's own time.
      stage: imports.stage.bind(imports),
      conflicts: imports.conflicts.bind(imports),
      staged: imports.staged.bind(imports),
      unstage: imports.unstage.bind(imports),
      discard: async importId => traced('imports.discard', () => imports.discard(importId)),
      claim: imports.claim.bind(imports)
    },
    webhooks: {
      create: async (endpoint, max, perKey) => traced('webhooks.create', () => webhooks.create(endpoint, max, perKey)),
      list: async owner => traced('webhooks.list', () => webhooks.list(owner)),
      get: async (endpointId, owner) => traced('webhooks.get', () => webhooks.get(endpointId, owner)),
      delete: async (endpointId, owner) => traced('webhooks.delete', () => webhooks.delete(endpointId, owner)),
      rotate: async (endpointId, owner, secret, expires) => traced('webhooks.rotate', () => webhooks.rotate(endpointId, owner, secret, expires)),
      enable: async (endpointId, owner, position) => traced('webhooks.enable', () => webhooks.enable(endpointId, owner, position)),
      // The delivery worker's, not a request's: background work of the node, like pruning.
      enqueue: webhooks.enqueue.bind(webhooks),
      claim: webhooks.claim.bind(webhooks),
      succeeded: webhooks.succeeded.bind(webhooks),
      failed: webhooks.failed.bind(webhooks),
      disable: webhooks.disable.bind(webhooks)
    },
    // Not part of answering a caller: the secret is read once at start, and a probe is a health check's.
    cursorSecret: async () => repositories.cursorSecret(),
    probe: async () => repositories.probe(),
    usage: () => repositories.usage(),
    close: async () => repositories.close()
  }
}
