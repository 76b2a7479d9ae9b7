// The repository contract through the tracing decorator: spans for every call, and nothing else a caller could notice.
import { SpanKind } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { ValueTakenError } from '../src/domain/outcomes.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tracedRepositories } from '../src/storage/traced.js'
import { tempDatabase } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'
import { feedContract } from './feed-contract.js'
import { storageContract } from './storage-contract.js'

const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test')

storageContract(t, async t => {
  const path = tempDatabase(t)
  return async () => tracedRepositories(openSqliteRepositories(path), tracer)
})

feedContract(t, async t => {
  const path = tempDatabase(t)
  return async () => tracedRepositories(openSqliteRepositories(path), tracer)
})

t.test('the webhook endpoints\' management through the decorator', async t => {
  const repositories = tracedRepositories(openSqliteRepositories(':memory:'), tracer)
  t.teardown(() => repositories.close())
  const { webhooks } = repositories
  const endpoint = { endpointId: '0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e', url: 'https://example.org/hooks', types: ['book.created'], description: null, keyId: 'admin', secret: 'whsec_AAAA', createdAt: '2026-11-25T00:00:00.000Z', position: await repositories.events.head() }
  t.match(await webhooks.create(endpoint, 10), { endpointId: endpoint.endpointId, status: 'enabled' })
  t.equal((await webhooks.list(null)).length, 1)
  t.match(await webhooks.rotate(endpoint.endpointId, null, 'whsec_BBBB', Date.now() + 1000), { secret: 'whsec_BBBB', previousSecret: 'whsec_AAAA' })
  t.match(await webhooks.enable(endpoint.endpointId, null, endpoint.position), { status: 'enabled' })
  t.equal(await webhooks.delete(endpoint.endpointId, null), true)
  t.equal(await webhooks.get(endpoint.endpointId, null), null)
})

t.test('every call of the contract above made a span named after its store and method, and only those', async t => {
  const names = new Set(exporter.getFinishedSpans().map(span => span.name))
  t.same([...names].sort(), [
    'apiKeys.create', 'apiKeys.find', 'apiKeys.list', 'apiKeys.revoke',
    'books.create', 'books.createMany', 'books.delete', 'books.export', 'books.get', 'books.list', 'books.replace',
    'events.check', 'events.head', 'events.oldest', 'events.read',
    'idempotency.find',
    'imports.discard', 'imports.get', 'imports.list', 'imports.start', 'imports.update',
    'students.create', 'students.createMany', 'students.export', 'students.get', 'students.list', 'students.replace',
    'webhooks.create', 'webhooks.delete', 'webhooks.enable', 'webhooks.get', 'webhooks.list', 'webhooks.rotate'
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
    await t.rejects(repositories.students.create(ada), new ValueTakenError('student', 'email'))
    t.match(exporter.getFinishedSpans(), [
      { name: 'students.create', attributes: { 'db.system.name': 'postgresql' } },
      { name: 'students.create', attributes: { 'db.system.name': 'postgresql' }, status: { code: 2 } }
    ])
  })
})
