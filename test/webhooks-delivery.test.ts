// Webhook delivery: signed attempts, the retry schedule on a fake clock, disabling, restarts, and the SSRF guard at connection time.
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createKey } from '../src/access/api-keys.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { AddressPolicy, type Resolve } from '../src/webhooks/address-policy.js'
import { send } from '../src/webhooks/send.js'
import { newSecret } from '../src/webhooks/signature.js'
import { laneBacklog, retryDelay, retrySchedule, WebhookWorker } from '../src/webhooks/worker.js'
import { tempDatabase } from './helper.js'
import { fakeClock, FakeFeed, receiver, verifies } from './webhook-helpers.js'

interface SetupOptions { allowed?: string[], timeout?: number, disableAfter?: number, resolve?: Resolve, path?: string, feed?: FakeFeed, clock?: ReturnType<typeof fakeClock> }

function setup (t: Test, { allowed = ['127.0.0.1'], timeout = 2000, disableAfter = 120, resolve, path = ':memory:', feed = new FakeFeed(), clock = fakeClock() }: SetupOptions = {}) {
  const repositories = { ...openSqliteRepositories(path), events: feed }
  t.teardown(() => repositories.close())
  const warnings: string[] = []
  const logged: { details: object, message: string }[] = []
  const counted: string[] = []
  const worker = new WebhookWorker({
    repositories,
    policy: new AddressPolicy(allowed, resolve),
    config: { adminApiKey: 'a'.repeat(40), webhookTimeout: timeout, webhookDisableAfterHours: disableAfter, webhookPollInterval: 1000 },
    clock,
    random: () => 0.5,
    log: { warn: (details, message) => { warnings.push(message); logged.push({ details, message }) } },
    metrics: { webhookAttempted: outcome => counted.push(outcome), webhookEndpointDisabled: reason => counted.push(`disabled: ${reason}`) }
  })
  async function endpoint (url: string, types = ['book.created'], keyId = 'admin') {
    const secret = newSecret()
    const created = await repositories.webhooks.create({
      endpointId: crypto.randomUUID(), url, types, description: null, keyId, secret, createdAt: new Date(clock.now()).toISOString(), position: await feed.head()
    }, 100)
    return { ...created!, secret }
  }
  const get = async (id: string) => (await repositories.webhooks.get(id, null))!
  return { repositories, worker, feed, clock, endpoint, get, warnings, logged, counted }
}

t.test('a delivery is POSTed with Standard Webhooks headers whose signature verifies; delivered once', async t => {
  const hook = await receiver(t)
  const { worker, feed, endpoint } = setup(t)
  const { secret } = await endpoint(hook.url, ['book.created', 'book.deleted'])
  const event = feed.add('book.created')
  feed.add('student.created')
  await worker.runOnce()
  await worker.runOnce()
  t.equal(hook.received.length, 1, 'one delivery: student events were not asked for, and a delivered event is not sent again')
  const [{ headers, body }] = hook.received as [typeof hook.received[0]]
  t.equal(headers['webhook-id'], event.position)
  t.equal(headers['content-type'], 'application/json')
  t.equal(headers['webhook-timestamp'], String(Math.floor(Date.parse('2026-11-24T00:00:00Z') / 1000)))
  t.same(verifies(secret, headers, body), [true])
  t.same(JSON.parse(body), { id: event.position, ...JSON.parse(event.envelope) })
})

t.test('failures are retried at 5 s, then 5 min; a success clears failing_since', async t => {
  const statuses = [500, 500, 200]
  const hook = await receiver(t, n => ({ status: statuses[n - 1]! }))
  const { worker, feed, endpoint, clock, get } = setup(t)
  const { endpointId } = await endpoint(hook.url)
  feed.add('book.created')
  const start = clock.now()
  await worker.runOnce()
  t.equal(hook.received.length, 1)
  t.equal((await get(endpointId)).failingSince, start, 'failing since the first failure')
  clock.advance(4999)
  await worker.runOnce()
  t.equal(hook.received.length, 1, 'not before 5 s')
  clock.advance(1)
  await worker.runOnce()
  t.equal(hook.received.length, 2, 'the second attempt at 5 s')
  t.equal(hook.received[1]!.headers['webhook-id'], hook.received[0]!.headers['webhook-id'], 'the same webhook-id')
  t.not(hook.received[1]!.headers['webhook-timestamp'], hook.received[0]!.headers['webhook-timestamp'], 'the timestamp of this attempt')
  clock.advance(5 * 60_000 - 1)
  await worker.runOnce()
  t.equal(hook.received.length, 2, 'not before 5 min more')
  clock.advance(1)
  await worker.runOnce()
  t.equal(hook.received.length, 3)
  t.equal((await get(endpointId)).failingSince, null, 'a success clears failing_since')
  clock.advance(10 * 3600_000)
  await worker.runOnce()
  t.equal(hook.received.length, 3, 'done')
})

t.test('the retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 10 h, ±10 %', async t => {
  t.same(retrySchedule.map(ms => ms / 1000), [5, 300, 1800, 7200, 18000, 36000])
  t.equal(retryDelay(1, () => 0.5), 5000)
  t.equal(retryDelay(1, () => 0), 4500)
  t.equal(retryDelay(1, () => 1), 5500)
  t.equal(retryDelay(9, () => 0.5), 36_000_000)
})

t.test('Retry-After is honoured when longer than the schedule', async t => {
  const hook = await receiver(t, n => n === 1 ? { status: 503, headers: { 'retry-after': '60' } } : n === 2 ? { status: 429, headers: { 'retry-after': 'soon' } } : { status: 200 })
  const { worker, feed, endpoint, clock } = setup(t)
  await endpoint(hook.url)
  feed.add('book.created')
  await worker.runOnce()
  clock.advance(59_999)
  await worker.runOnce()
  t.equal(hook.received.length, 1, 'waits the 60 s asked for')
  clock.advance(1)
  await worker.runOnce()
  t.equal(hook.received.length, 2)
  clock.advance(5 * 60_000)
  await worker.runOnce()
  t.equal(hook.received.length, 3, 'an unusable Retry-After is ignored')
})

t.test('an HTTP-date Retry-After counts from now', async t => {
  const { clock } = setup(t)
  const hook = await receiver(t, n => n === 1 ? { status: 503, headers: { 'retry-after': new Date(clock.now() + 3600_000).toUTCString() } } : { status: 200 })
  const { worker, feed, endpoint } = setup(t, { clock })
  await endpoint(hook.url)
  feed.add('book.created')
  await worker.runOnce()
  clock.advance(3599_000)
  await worker.runOnce()
  t.equal(hook.received.length, 1)
  clock.advance(1000)
  await worker.runOnce()
  t.equal(hook.received.length, 2)
})

t.test('410 disables the endpoint (gone) and drops its deliveries', async t => {
  const hook = await receiver(t, () => ({ status: 410 }))
  const { worker, feed, endpoint, get, clock } = setup(t)
  const { endpointId } = await endpoint(hook.url)
  feed.add('book.created')
  feed.add('book.created')
  await worker.runOnce()
  t.match(await get(endpointId), { status: 'disabled', disabledReason: 'gone' })
  const attempts = hook.received.length
  feed.add('book.created')
  clock.advance(100 * 3600_000)
  await worker.runOnce()
  t.equal(hook.received.length, attempts, 'nothing more is sent')
})

t.test('a run of failures is logged once, at its first failure, without the URL, secret or body; each attempt is counted', async t => {
  const statuses = [500, 500, 500, 200, 200, 503]
  const hook = await receiver(t, n => ({ status: statuses[n - 1]! }))
  const { worker, feed, endpoint, clock, logged, counted } = setup(t)
  const { endpointId, secret } = await endpoint(`${hook.url}?token=t0ps3cret`)
  const failures = () => logged.filter(line => line.message.startsWith('webhook delivery failed'))
  feed.add('book.created')
  feed.add('book.created')
  await worker.runOnce()
  t.equal(failures().length, 1, 'two deliveries failing together begin one run')
  t.same(failures()[0]!.details, { endpoint: endpointId, status: 500, error: 'answered 500' })
  clock.advance(5000)
  await worker.runOnce()
  t.equal(hook.received.length, 4)
  t.equal(failures().length, 1, 'the run goes on: no line more')
  clock.advance(5 * 60_000)
  feed.add('book.created')
  await worker.runOnce()
  t.equal(failures().length, 2, 'after a success, the next failure begins a new run')
  t.same(counted, ['failed', 'failed', 'failed', 'delivered', 'delivered', 'failed'])
  const text = JSON.stringify(logged)
  for (const secretThing of ['t0ps3cret', secret.slice(6), hook.url, 'book.created']) t.notMatch(text, secretThing)
})

t.test('disabling is logged and counted once, however many deliveries meet it', async t => {
  const hook = await receiver(t, () => ({ status: 410 }))
  const { worker, feed, endpoint, logged, counted } = setup(t)
  const { endpointId } = await endpoint(hook.url)
  for (let i = 0; i < 3; i++) feed.add('book.created')
  await worker.runOnce()
  t.equal(hook.received.length, 3, 'three attempts in one batch, each answered 410')
  t.same(logged.filter(line => line.message.startsWith('webhook endpoint disabled')).map(line => line.details), [{ endpoint: endpointId, reason: 'gone' }])
  t.same(counted.toSorted(), ['disabled: gone', 'failed', 'failed', 'failed'], 'a 410 is a failed attempt, and the endpoint is disabled once')
})

t.test('a 3xx is a failure and is not followed', async t => {
  const target = await receiver(t)
  const hook = await receiver(t, () => ({ status: 302, headers: { location: target.url } }))
  const { worker, feed, endpoint, get } = setup(t)
  const { endpointId } = await endpoint(hook.url)
  feed.add('book.created')
  await worker.runOnce()
  t.equal(target.received.length, 0, 'the redirect was not followed')
  t.not((await get(endpointId)).failingSince, null)
})

t.test('a receiver that does not answer in WEBHOOK_TIMEOUT_MS fails the attempt', async t => {
  const hook = await receiver(t, n => n === 1 ? { status: 200, hang: true } : { status: 200 })
  const { worker, feed, endpoint, get, clock } = setup(t, { timeout: 200 })
  const { endpointId } = await endpoint(hook.url)
  feed.add('book.created')
  await worker.runOnce()
  t.not((await get(endpointId)).failingSince, null, 'failed')
  clock.advance(5000)
  await worker.runOnce()
  t.equal(hook.received.length, 2)
  t.equal((await get(endpointId)).failingSince, null)
})

t.test('WEBHOOK_TIMEOUT_MS bounds the whole attempt: a receiver trickling its answer cannot hold it past the deadline', async t => {
  // Each byte comes well within the deadline, as an idle timeout would allow; the answer as a whole, long after.
  const server = createNetServer(socket => {
    socket.once('data', () => {
      const answer = 'HTTP/1.1 200 OK\r\nX-Slowly: ' + 'x'.repeat(40) + '\r\ncontent-length: 0\r\n\r\n'
      let sent = 0
      const drip = setInterval(() => {
        if (socket.destroyed || sent === answer.length) return clearInterval(drip)
        socket.write(answer[sent++]!)
      }, 25)
      socket.on('close', () => clearInterval(drip))
      socket.on('error', () => {})
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  const attempt = await send(new AddressPolicy(['127.0.0.1']), url, {}, '{}', 200, new AbortController().signal, Date.now())
  t.same(attempt, { status: null, retryAfter: null, error: 'no answer within 200 ms' })
})

t.test('an endpoint whose key is revoked is disabled (key_revoked), at fan-out or at delivery', async t => {
  const hook = await receiver(t)
  const { worker, feed, endpoint, get, repositories } = setup(t)
  const key = await createKey(repositories.apiKeys, 'hooks', ['books:read', 'webhooks:manage'])
  const queued = await endpoint(hook.url, ['book.created', 'student.created'], key.key_id)
  const idle = await endpoint(hook.url, ['book.created'], key.key_id)
  feed.add('book.created')
  feed.add('student.created')
  // Queue without attempting: the attempt then meets the revocation.
  await repositories.webhooks.enqueue({ endpointId: queued.endpointId, lane: 'live', from: queued.positions.live, to: await feed.head(), events: [{ position: '0000000000000001', body: '{}' }], now: 0, max: 10 })
  await repositories.apiKeys.revoke(key.key_id)
  await worker.runOnce()
  t.equal(hook.received.length, 0)
  t.match(await get(queued.endpointId), { status: 'disabled', disabledReason: 'key_revoked' })
  t.match(await get(idle.endpointId), { status: 'disabled', disabledReason: 'key_revoked' })
})

t.test('a delivery queued before its key was revoked is not attempted: the endpoint is disabled at the attempt', async t => {
  const hook = await receiver(t)
  const { feed, endpoint, get, repositories, counted } = setup(t)
  const key = await createKey(repositories.apiKeys, 'hooks', ['books:read', 'webhooks:manage'])
  const queued = await endpoint(hook.url, ['book.created'], key.key_id)
  await repositories.webhooks.enqueue({ endpointId: queued.endpointId, lane: 'live', from: queued.positions.live, to: await feed.head(), events: [{ position: '0000000000000001', body: '{}' }], now: 0, max: 10 })
  await repositories.apiKeys.revoke(key.key_id)
  // A worker whose fan-out finds no endpoint: the revocation is met by the attempt alone.
  const worker = new WebhookWorker({
    repositories: { ...repositories, webhooks: { ...repositories.webhooks, list: async () => [] } },
    policy: new AddressPolicy(['127.0.0.1']),
    config: { adminApiKey: null, webhookTimeout: 1000, webhookDisableAfterHours: 1, webhookPollInterval: 1000 },
    log: { warn: () => {} },
    metrics: { webhookAttempted: outcome => counted.push(outcome), webhookEndpointDisabled: reason => counted.push(`disabled: ${reason}`) }
  })
  await worker.runOnce()
  t.equal(hook.received.length, 0)
  t.match(await get(queued.endpointId), { status: 'disabled', disabledReason: 'key_revoked' })
  t.same(counted, ['disabled: key_revoked'], 'no attempt counted: none was made')
})

t.test('a key receives only the types it may read; an unknown key and a missing ADMIN_API_KEY count as revoked', async t => {
  const hook = await receiver(t)
  const { worker, feed, endpoint, get, repositories } = setup(t)
  const key = await createKey(repositories.apiKeys, 'hooks', ['books:read'])
  await endpoint(hook.url, ['book.created', 'student.created'], key.key_id)
  const ghost = await endpoint(hook.url, ['book.created'], 'nokey')
  feed.add('student.created')
  feed.add('book.created')
  await worker.runOnce()
  t.same(hook.received.map(r => JSON.parse(r.body).type), ['book.created'])
  t.match(await get(ghost.endpointId), { disabledReason: 'key_revoked' })

  const other = setup(t)
  const noAdmin = new WebhookWorker({
    repositories: other.repositories,
    policy: new AddressPolicy(['127.0.0.1']),
    config: { adminApiKey: null, webhookTimeout: 1000, webhookDisableAfterHours: 1, webhookPollInterval: 1000 },
    log: { warn: () => {} }
  })
  const admins = await other.endpoint(hook.url)
  await noAdmin.runOnce()
  t.match(await other.get(admins.endpointId), { disabledReason: 'key_revoked' })
})

t.test('an endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS is disabled (failing)', async t => {
  const hook = await receiver(t, () => ({ status: 500 }))
  const { worker, feed, endpoint, get, clock } = setup(t, { disableAfter: 1 })
  const { endpointId } = await endpoint(hook.url)
  feed.add('book.created')
  for (const wait of [0, 5000, 300_000, 1_800_000, 7_200_000]) {
    clock.advance(wait)
    await worker.runOnce()
  }
  t.equal(hook.received.length, 5)
  t.match(await get(endpointId), { status: 'disabled', disabledReason: 'failing' })
})

t.test('after a rotation each delivery carries two signatures, one per secret, until the old one expires', async t => {
  const hook = await receiver(t)
  const { worker, feed, endpoint, clock, repositories } = setup(t)
  const { endpointId, secret: old } = await endpoint(hook.url)
  const secret = newSecret()
  await repositories.webhooks.rotate(endpointId, null, secret, clock.now() + 24 * 3600_000)
  feed.add('book.created')
  await worker.runOnce()
  const first = hook.received[0]!
  t.same(verifies(secret, first.headers, first.body), [true, false])
  t.same(verifies(old, first.headers, first.body), [false, true])
  clock.advance(24 * 3600_000)
  feed.add('book.created')
  await worker.runOnce()
  const second = hook.received[1]!
  t.same(verifies(secret, second.headers, second.body), [true], 'the old secret no longer signs')
})

t.test('a pending retry survives a restart on the same SQLite file', async t => {
  const path = tempDatabase(t)
  const hook = await receiver(t, n => ({ status: n === 1 ? 500 : 200 }))
  const feed = new FakeFeed()
  const clock = fakeClock()
  const first = setup(t, { path, feed, clock })
  await first.endpoint(hook.url)
  feed.add('book.created')
  await first.worker.runOnce()
  await first.worker.stop()
  await first.repositories.close()
  const second = setup(t, { path, feed, clock })
  clock.advance(5000)
  await second.worker.runOnce()
  t.equal(hook.received.length, 2)
  t.equal(hook.received[1]!.headers['webhook-id'], hook.received[0]!.headers['webhook-id'])
})

t.test('at connection time a host resolving to a refused address is not reached (DNS rebinding)', async t => {
  const hook = await receiver(t)
  let answer = '93.184.215.14'
  const resolve: Resolve = async () => [{ address: answer, family: 4 }]
  const { worker, feed, endpoint, repositories, counted } = setup(t, { allowed: [], resolve })
  const policy = new AddressPolicy([], resolve)
  await policy.check('https://rebind.test/hooks')
  answer = '127.0.0.1'
  const { endpointId } = await endpoint('https://rebind.test/hooks')
  const literal = await endpoint(hook.url)
  feed.add('book.created')
  await worker.runOnce()
  t.equal(hook.received.length, 0)
  const rows = (repositories as unknown as { webhooks: unknown }).webhooks
  t.ok(rows)
  const [a, b] = await Promise.all([endpointId, literal.endpointId].map(async id => (await repositories.webhooks.get(id, null))!.failingSince))
  t.not(a, null, 'the rebound name failed')
  t.not(b, null, 'the loopback literal failed')
  t.same(counted, ['refused', 'refused'], 'counted as refused: nothing was sent')
})

t.test('a position the feed no longer has moves the endpoint to the head, with a warning', async t => {
  const hook = await receiver(t)
  const { worker, feed, endpoint, get, warnings } = setup(t)
  const { endpointId, positions } = await endpoint(hook.url)
  feed.add('book.created')
  feed.gone.add(positions.live)
  await worker.runOnce()
  t.equal(hook.received.length, 0)
  t.same((await get(endpointId)).positions, { live: await feed.head(), imported: await feed.head() }, 'each lane moved on')
  t.match(warnings, [/retention/, /retention/])
})

t.test('many events are read in pages, and a raced cursor queues nothing twice', async t => {
  const hook = await receiver(t)
  const { worker, feed, endpoint, repositories } = setup(t)
  const { endpointId, positions } = await endpoint(hook.url)
  for (let i = 0; i < 250; i++) feed.add('book.created')
  t.equal(await repositories.webhooks.enqueue({ endpointId, lane: 'live', from: 'not-the-cursor', to: 'x', events: [], now: 0, max: 10 }), false)
  const warnings: string[] = []
  const onWarning = (warning: Error) => { warnings.push(warning.message) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  await worker.runOnce()
  await new Promise(resolve => setImmediate(resolve))
  t.same(warnings, [], 'a backlog sent in batches is no listener leak to warn an operator of')
  t.equal(hook.received.length, 250)
  t.equal(new Set(hook.received.map(r => r.headers['webhook-id'])).size, 250)
  t.ok(positions.live)
})

t.test('an import\'s events do not hold up the rest: live events and other endpoints are served within the first rounds', async t => {
  const hook = await receiver(t)
  const other = await receiver(t)
  const { worker, feed, endpoint } = setup(t)
  await endpoint(hook.url, ['book.created', 'student.created'])
  await endpoint(other.url, ['student.created'])
  for (let i = 0; i < 1200; i++) feed.add('book.created', undefined, 'imported')
  const live = feed.add('book.created')
  const student = feed.add('student.created')
  await worker.runOnce()
  const order = hook.received.map(r => r.headers['webhook-id'])
  t.equal(order.length, 1202, 'every event delivered once the run ends')
  t.equal(new Set(order).size, 1202)
  // Ten pages of a hundred per lane and round: the live lane reaches them in the second round, 20 deliveries in.
  t.ok(order.indexOf(live.position) < 100 && order.indexOf(student.position) < 100,
    `the live events came early (${order.indexOf(live.position)}, ${order.indexOf(student.position)} of 1,202), not after the import's 1,200`)
  t.same(other.received.map(r => r.headers['webhook-id']), [student.position], 'and the other endpoint had its event')
})

t.test('a receiver that fails leaves what it has not taken in the feed: a lane queues at most laneBacklog', async t => {
  const hook = await receiver(t, () => ({ status: 503 }))
  const { worker, feed, endpoint, get, repositories, clock } = setup(t)
  const { endpointId } = await endpoint(hook.url)
  for (let i = 0; i < laneBacklog + 500; i++) feed.add('book.created', undefined, 'imported')
  await worker.runOnce()
  t.equal(hook.received.length, laneBacklog, 'each queued delivery attempted once')
  const queued = await repositories.webhooks.claim(clock.now() + 1e9, clock.now() + 2e9, 5000)
  t.equal(queued.length, laneBacklog, 'the rest are still only in the feed')
  t.equal((await get(endpointId)).positions.imported, feed.events[laneBacklog - 1]!.position, 'where the lane stopped')
})

t.test('start() runs at once, again on commit and on its timer; stop() ends it', async t => {
  const hook = await receiver(t)
  const timers: (() => void)[] = []
  const clock = { ...fakeClock(), setTimeout: (callback: () => void) => timers.push(callback), clearTimeout: () => {} }
  const { feed, repositories } = setup(t)
  const worker = new WebhookWorker({
    repositories,
    policy: new AddressPolicy(['127.0.0.1']),
    config: { adminApiKey: 'a'.repeat(40), webhookTimeout: 1000, webhookDisableAfterHours: 1, webhookPollInterval: 1000 },
    clock,
    log: { warn: () => {} }
  })
  await repositories.webhooks.create({ endpointId: crypto.randomUUID(), url: hook.url, types: ['book.created'], description: null, keyId: 'admin', secret: newSecret(), createdAt: new Date().toISOString(), position: await feed.head() }, 10)
  worker.start()
  feed.add('book.created')
  feed.add('book.created')
  const until = async (check: () => boolean) => { while (!check()) await new Promise(resolve => setTimeout(resolve, 10)) }
  await until(() => hook.received.length === 2 && timers.length > 0)
  feed.add('book.created')
  timers.shift()!()
  await until(() => hook.received.length === 3)
  await worker.stop()
  feed.add('book.created')
  timers.shift()?.()
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(hook.received.length, 3, 'stopped')
})

t.test('a failed run is logged and the worker carries on', async t => {
  const { repositories } = setup(t)
  const warnings: string[] = []
  const broken = { ...repositories, webhooks: { ...repositories.webhooks, list: async () => { throw new Error('db down') } } }
  const timers: (() => void)[] = []
  const worker = new WebhookWorker({
    repositories: broken,
    policy: new AddressPolicy([]),
    config: { adminApiKey: null, webhookTimeout: 1000, webhookDisableAfterHours: 1, webhookPollInterval: 1000 },
    clock: { now: () => 0, setTimeout: callback => timers.push(callback), clearTimeout: () => {} },
    log: { warn: (_d, message) => { warnings.push(message) } }
  })
  worker.start()
  while (timers.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
  t.same(warnings, ['webhook delivery run failed'])
  await worker.stop()
})
