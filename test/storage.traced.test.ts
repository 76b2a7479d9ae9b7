// The repository contract through the tracing decorator: spans for every call, and nothing else a caller could notice.
import { SpanKind } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { DuplicateError } from '../src/errors.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tracedRepositories } from '../src/storage/traced.js'
import { tempDatabase } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'
import { storageContract } from './storage-contract.js'

const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test')

storageContract(t, async t => {
  const path = tempDatabase(t)
  return async () => tracedRepositories(openSqliteRepositories(path), tracer)
})

t.test('every call of the contract above made a span named after its store and method, and only those', async t => {
  const names = new Set(exporter.getFinishedSpans().map(span => span.name))
  t.same([...names].sort(), [
    'apiKeys.create', 'apiKeys.find', 'apiKeys.list', 'apiKeys.revoke',
    'books.create', 'books.delete', 'books.get', 'books.list', 'books.replace',
    'idempotency.find',
    'students.create', 'students.get', 'students.list', 'students.replace'
  ])
  t.ok(exporter.getFinishedSpans().every(span => span.kind === SpanKind.INTERNAL && span.attributes['db.system.name'] === 'sqlite'))
  t.ok(exporter.getFinishedSpans().some(span => span.status.message === 'Another student already has this email' && span.events[0]?.name === 'exception'), 'a refused write is recorded on its span')
})

await withPostgres(t, t => {
  t.test('on PostgreSQL the spans say postgresql, and a refused write is still refused', async t => {
    exporter.reset()
    const repositories = tracedRepositories(await openPostgresRepositories({ url: await testDatabase(t), connections: 1, connectTimeout: 2000, statementTimeout: 5000 }, { apiKeyCacheTtl: 2000 }), tracer)
    t.teardown(() => repositories.close())
    const ada = { name: 'Ada', email: 'ada@example.org', enrollment_year: 2025, status: 'active' as const }
    await repositories.students.create(ada)
    await t.rejects(repositories.students.create(ada), new DuplicateError('student', 'email'))
    t.match(exporter.getFinishedSpans(), [
      { name: 'students.create', attributes: { 'db.system.name': 'postgresql' } },
      { name: 'students.create', attributes: { 'db.system.name': 'postgresql' }, status: { code: 2 } }
    ])
  })
})
