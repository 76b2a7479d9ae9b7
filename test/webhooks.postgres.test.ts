// Two nodes on one PostgreSQL database: each event is queued once per endpoint and each attempt made by one node.
import pg from 'pg'
import t from 'tap'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { AddressPolicy } from '../src/webhooks/address-policy.js'
import { newSecret } from '../src/webhooks/signature.js'
import { WebhookWorker } from '../src/webhooks/worker.js'
import { EndpointCapError } from '../src/storage/webhook-rows.js'
import { testDatabase, withPostgres } from './postgres.js'
import { eventually } from './helper.js'
import { fakeClock, FakeFeed, receiver } from './webhook-helpers.js'

const settings = (url: string) => ({ url, connections: 2, connectTimeout: 2000, statementTimeout: 10_000 })

t.test('two workers racing on one database make every attempt exactly once', t => withPostgres(t, async t => {
  const url = await testDatabase(t)
  const feed = new FakeFeed()
  const clock = fakeClock()
  // Every event fails once, then succeeds: two attempts per event, each by one node.
  const seen = new Map<string, number>()
  const hook = await receiver(t, () => ({ status: 200 }))
  const failing = await receiver(t, n => ({ status: n <= 60 ? 500 : 200 }))
  const nodes = await Promise.all([1, 2].map(async () => {
    const repositories = { ...await openPostgresRepositories(settings(url)), events: feed }
    t.teardown(() => repositories.close())
    const worker = new WebhookWorker({
      repositories,
      policy: new AddressPolicy(['127.0.0.1']),
      config: { adminApiKey: 'a'.repeat(40), webhookTimeout: 2000, webhookDisableAfterHours: 120, webhookPollInterval: 1000 },
      log: { warn: () => {} },
      clock,
      random: () => 0.5
    })
    return { repositories, worker }
  }))
  const [a, b] = nodes as [typeof nodes[0], typeof nodes[0]]
  for (const target of [hook.url, failing.url]) {
    await a.repositories.webhooks.create({
      endpointId: crypto.randomUUID(), url: target, types: ['book.created'], description: null, keyId: 'admin', secret: newSecret(), createdAt: new Date().toISOString(), position: await feed.head()
    }, 100)
  }
  t.equal((await b.repositories.webhooks.list(null)).length, 2)
  for (let i = 0; i < 60; i++) feed.add('book.created')
  await Promise.all([a.worker.runOnce(), b.worker.runOnce(), a.worker.runOnce(), b.worker.runOnce()])
  for (const { headers } of hook.received) seen.set(String(headers['webhook-id']), (seen.get(String(headers['webhook-id'])) ?? 0) + 1)
  t.equal(hook.received.length, 60, 'each event delivered once')
  t.same([...new Set(seen.values())], [1])
  t.equal(failing.received.length, 60, 'each first attempt made once')
  clock.advance(5000)
  await Promise.all([a.worker.runOnce(), b.worker.runOnce()])
  t.equal(failing.received.length, 120, 'each retry made once')
  t.equal(new Set(failing.received.slice(60).map(r => r.headers['webhook-id'])).size, 60)
  const [endpoint] = (await a.repositories.webhooks.list(null)).filter(e => e.url === failing.url)
  t.equal(endpoint!.failingSince, null, 'the successes cleared failing_since')
  t.same(await a.repositories.webhooks.claim(clock.now() + 1e9, clock.now() + 2e9, 10), [], 'nothing left to deliver')
}))

t.test('a burst of registrations from one key takes its cap, no more, though the statements would reach the database together', t => withPostgres(t, async t => {
  const url = await testDatabase(t)
  const repositories = await openPostgresRepositories({ ...settings(url), connections: 4 })
  t.teardown(() => repositories.close())
  // Another session holds the table, so that whatever statements are sent meanwhile wait, and all start at once when it lets go.
  const holder = new pg.Client({ connectionString: url })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('BEGIN')
  await holder.query('LOCK TABLE webhook_endpoints IN SHARE MODE')
  const burst = Promise.allSettled(Array.from({ length: 12 }, async () => repositories.webhooks.create({
    endpointId: crypto.randomUUID(), url: 'https://hooks.example.org/', types: ['book.created'], description: null, keyId: 'k', secret: 's', createdAt: '2026-11-24T00:00:00.000Z', position: '0'
  }, 100, 3)))
  const waiting = async () => Number((await holder.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0]!.n)
  await eventually(waiting, n => n >= 1, 'a registration waiting for the table')
  await holder.query('COMMIT')
  const outcomes = await burst
  t.equal(outcomes.filter(outcome => outcome.status === 'fulfilled').length, 3)
  t.equal((await repositories.webhooks.list('k')).length, 3)
}))

t.test('the PostgreSQL repository: limit, rotate, enable, disable, delete', t => withPostgres(t, async t => {
  const repositories = await openPostgresRepositories(settings(await testDatabase(t)))
  t.teardown(() => repositories.close())
  const { webhooks } = repositories
  const endpointId = crypto.randomUUID()
  const created = await webhooks.create({ endpointId, url: 'https://hooks.example.org/', types: ['book.created', 'book.deleted'], description: 'd', keyId: 'k', secret: 's', createdAt: '2026-11-24T00:00:00.000Z', position: '0' }, 1)
  t.match(created, { endpointId, types: ['book.created', 'book.deleted'], createdAt: '2026-11-24T00:00:00.000Z', status: 'enabled', failingSince: null })
  const another = (keyId: string) => ({ endpointId: crypto.randomUUID(), url: 'u', types: ['book.created'], description: null, keyId, secret: 's', createdAt: '2026-11-24T00:00:00.000Z', position: '0' })
  await t.rejects(webhooks.create(another('k'), 1), new EndpointCapError('deployment', 1), 'the deployment\'s cap')
  await t.rejects(webhooks.create(another('other'), 1, 5), new EndpointCapError('deployment', 0), 'whoever registers')
  await t.rejects(webhooks.create(another('k'), 10, 1), new EndpointCapError('key', 1), 'the key\'s cap, first')
  t.equal((await webhooks.list(null)).length, 1, 'nothing stored')
  t.match(await webhooks.rotate(endpointId, null, 's2', 1234), { secret: 's2', previousSecret: 's', previousSecretExpiresAt: 1234 })
  const queue = { endpointId, lane: 'live' as const, events: [{ position: '1', body: '{}' }], now: 0, max: 2 }
  t.equal(await webhooks.enqueue({ ...queue, from: '0', to: '2' }), true)
  t.equal(await webhooks.enqueue({ ...queue, from: '0', to: '3' }), false, 'the cursor moved on')
  const [claimed] = await webhooks.claim(10, 100, 5)
  t.equal(await webhooks.failed(claimed!, { status: 500, error: 'answered 500', nextAttemptAt: 50, now: 10 }), true, 'the first failure begins a run')
  t.equal((await webhooks.get(endpointId, null))!.failingSince, 10)
  t.equal(await webhooks.failed(claimed!, { status: 500, error: 'answered 500', nextAttemptAt: 60, now: 20 }), false, 'the next one continues it')
  t.equal((await webhooks.get(endpointId, null))!.failingSince, 10)
  t.equal(await webhooks.disable(endpointId, 'failing'), true)
  t.equal(await webhooks.disable(endpointId, 'gone'), false, 'disabled already: the first reason stays')
  t.match(await webhooks.get(endpointId, null), { status: 'disabled', disabledReason: 'failing' })
  t.same(await webhooks.claim(1000, 2000, 5), [])
  t.match(await webhooks.enable(endpointId, null, '9'), { status: 'enabled', disabledReason: null, failingSince: null, positions: { live: '9', imported: '9' } })
  t.equal(await webhooks.rotate(crypto.randomUUID(), null, 'x', 1), null)
  t.equal(await webhooks.delete(endpointId, null), true)
  t.equal(await webhooks.delete(endpointId, null), false)
  t.equal(await webhooks.get(endpointId, null), null)
}))
