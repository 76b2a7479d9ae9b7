// The operators' endpoints: liveness, readiness (database, schema, Redis, draining) and where /metrics is served.
import { once } from 'node:events'
import { type AddressInfo, connect } from 'node:net'
import Database from 'better-sqlite3'
import t from 'tap'
import type { Test } from 'tap'
import { type Config, defaults } from '../src/config/index.js'
import type { AppDependencies } from '../src/app.js'
import { buildOpsApp } from '../src/ops/routes.js'
import { MemoryRateLimitStore } from '../src/access/rate-limit-store.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { latestVersion } from '../src/storage/schema.js'
import { adminKey, build, dune, tempDatabase, testEngine } from './helper.js'

const metricsToken = 'metrics-token-0123456789abcdef'

/** The app and its ops listener's app, both in process. */
async function buildWithOps (t: Test, overrides: Partial<Config> = {}, dependencies: Partial<AppDependencies> = {}) {
  const api = await build(t, overrides, dependencies)
  const ops = await buildOpsApp(api.app.operations, api.app.log, { ...defaults, ...overrides })
  t.teardown(() => ops.close())
  return { api, ops }
}

interface Check { componentType: string, observedValue: number | boolean, observedUnit?: string, status: string, time: string, output?: string }
interface HealthBody { status: string, version: string, checks?: Record<string, Check[]> }

t.test('liveness answers without a key and checks nothing, readiness asks the database; both are no-store health+json', async t => {
  const { api, ops } = await buildWithOps(t)
  const live = await ops.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.match(live.headers['content-type'], /^application\/health\+json/)
  t.equal(live.headers['cache-control'], 'no-store')
  t.same(live.json(), { status: 'pass', version: api.app.operations.health.live().version, description: 'books-students-api' })

  const ready = await ops.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.headers['cache-control'], 'no-store')
  const body = ready.json<HealthBody>()
  t.equal(body.status, 'pass')
  const [database] = body.checks![`${testEngine}:responseTime`]!
  t.match(database, { componentType: 'datastore', status: 'pass', observedUnit: 'ms' })
  t.type(database!.observedValue, 'number')
  t.ok(!Number.isNaN(Date.parse(database!.time)), 'each check says when it was made')
  t.match(body.checks!['shutdown:draining'], [{ status: 'pass', observedValue: false }])
})

t.test('a closed database: the node is alive but not ready (503, the check failing with a reason and no driver text)', async t => {
  const repositories = openSqliteRepositories(':memory:')
  const { ops } = await buildWithOps(t, {}, { repositories })
  await repositories.close()
  t.equal((await ops.inject({ url: '/health/live' })).statusCode, 200, 'liveness does not look at the database')
  const ready = await ops.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  const body = ready.json<HealthBody>()
  t.equal(body.status, 'fail')
  t.match(body.checks!['sqlite:responseTime'], [{ status: 'fail', output: 'did not answer' }])
  t.notMatch(ready.body, /database connection is not open|TypeError/i, 'the driver\'s message is not shown')
})

t.test('a database whose schema is at another version is not ready, and the check says which versions', async t => {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path)
  const { ops } = await buildWithOps(t, {}, { repositories })
  const other = new Database(path)
  other.pragma(`user_version = ${latestVersion + 1}`)
  other.close()
  const ready = await ops.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.match(ready.json<HealthBody>().checks!['sqlite:responseTime'], [{
    status: 'fail',
    output: `the database schema is at version ${latestVersion + 1}, this service needs ${latestVersion}`
  }])
})

t.test('a database that does not answer within READY_TIMEOUT_MS fails the check; concurrent probes share one query', async t => {
  const repositories = openSqliteRepositories(':memory:')
  let probes = 0
  const hung = { ...repositories, probe: async () => { probes++; await new Promise(() => {}) } }
  const { ops } = await buildWithOps(t, { readyTimeout: 50 }, { repositories: hung })
  const answers = await Promise.all(Array.from({ length: 5 }, () => ops.inject({ url: '/health/ready' })))
  t.same(answers.map(a => a.statusCode), [503, 503, 503, 503, 503])
  t.match(answers[0]!.json<HealthBody>().checks!['sqlite:responseTime'], [{ status: 'fail', output: 'no answer within 50 ms' }])
  t.equal(probes, 1, 'five probes at once asked the database once')
  await repositories.close()
})

t.test('a driver error is named by its code only', async t => {
  const repositories = openSqliteRepositories(':memory:')
  const failing = {
    ...repositories,
    probe: async () => { throw Object.assign(new Error('password authentication failed for user "app" at db.internal'), { code: '28P01' }) }
  }
  const { ops } = await buildWithOps(t, {}, { repositories: failing })
  const ready = await ops.inject({ url: '/health/ready' })
  t.match(ready.json<HealthBody>().checks!['sqlite:responseTime'], [{ status: 'fail', output: 'did not answer (28P01)' }])
  t.notMatch(ready.body, /password|db\.internal|app/)
  await repositories.close()
})

t.test('Redis, when configured, is checked: unreachable is a warning (limits count per node), still ready', async t => {
  const down = new class extends MemoryRateLimitStore {
    override async probe (): Promise<void> { throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) }
  }()
  const { ops } = await buildWithOps(t, { redisUrl: 'redis://127.0.0.1:1' }, { rateLimitStore: down })
  const ready = await ops.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  const body = ready.json<HealthBody>()
  t.equal(body.status, 'warn')
  t.match(body.checks!['redis:responseTime'], [{ status: 'warn', output: 'did not answer (ECONNREFUSED)' }])

  const { ops: healthy } = await buildWithOps(t, { redisUrl: 'redis://127.0.0.1:1' }, { rateLimitStore: new MemoryRateLimitStore() })
  t.match((await healthy.inject({ url: '/health/ready' })).json<HealthBody>(), { status: 'pass', checks: { 'redis:responseTime': [{ status: 'pass' }] } })
})

t.test('draining: readiness fails at once, the API keeps answering and closes each connection after its response', async t => {
  const { api, ops } = await buildWithOps(t)
  t.equal((await api.request({ url: '/books' })).headers.connection, 'keep-alive', 'before draining, connections are kept')
  api.app.operations.health.drain()
  const ready = await ops.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.match(ready.json<HealthBody>().checks!['shutdown:draining'], [{ status: 'fail', observedValue: true }])
  t.equal((await ops.inject({ url: '/health/live' })).statusCode, 200, 'a draining node is still alive')
  const created = await api.request({ method: 'POST', url: '/books', payload: dune })
  t.equal(created.statusCode, 201, 'requests are still served while draining')
  t.equal(created.headers.connection, 'close')
})

t.test('the API\'s port does not serve the operators\' endpoints by default', async t => {
  const { api } = await buildWithOps(t)
  for (const url of ['/health/live', '/health/ready', '/metrics']) {
    const res = await api.request({ url })
    t.equal(res.statusCode, 404, url)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
  }
})

t.test('the ops port: anything else is a 404 problem; METRICS_TOKEN, when set, guards /metrics there too; METRICS=false turns it off', async t => {
  const { ops } = await buildWithOps(t, { metricsToken })
  const other = await ops.inject({ url: '/books' })
  t.equal(other.statusCode, 404)
  t.match(other.json(), { status: 404, detail: /operations port/ })
  t.equal((await ops.inject({ url: '/metrics' })).statusCode, 401)
  t.equal((await ops.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).statusCode, 200)
  t.equal((await ops.inject({ url: '/health/ready' })).statusCode, 200, 'health needs no token')

  const { ops: off } = await buildWithOps(t, { metrics: false })
  const res = await off.inject({ url: '/metrics' })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { detail: 'Metrics are off on this node (METRICS=false)' })
})

t.test('OPS_PORT=public: health without a key, /metrics behind its own token (never an API key), never rate limited, not in the API\'s log', async t => {
  const lines: string[] = []
  const { app } = await build(t, { opsPort: 'public', metricsToken, logLevel: 'info', rateLimitAnonymous: { requests: 1, seconds: 60 }, rateLimit: { requests: 1, seconds: 60 } }, {
    logStream: { write: (line: string) => { lines.push(line) } }
  })
  for (let i = 0; i < 5; i++) {
    const live = await app.inject({ url: '/health/live' })
    t.equal(live.statusCode, 200, 'liveness, again and again, without a key')
    t.equal(live.headers.ratelimit, undefined, 'not counted against any quota')
    t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200)
  }
  const anonymous = await app.inject({ url: '/metrics' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.headers['www-authenticate'], 'Bearer realm="metrics"')
  t.match(anonymous.headers['content-type'], /^application\/problem\+json/)
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${adminKey}` } })).statusCode, 401, 'an API key, even the admin\'s, is not the metrics token')
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}x` } })).statusCode, 401)
  const scraped = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })
  t.equal(scraped.statusCode, 200)
  t.match(scraped.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  t.notMatch(scraped.body, /route="\/(metrics|health)/, 'scrapes and probes are not in the API\'s request metrics')

  // The API itself is still guarded and limited as before.
  t.equal((await app.inject({ url: '/api/students' })).statusCode, 401)
  await app.inject({ url: '/books' })
  t.equal((await app.inject({ url: '/books' })).statusCode, 429)
  await app.close()
  const logged = lines.join('')
  t.notMatch(logged, /"url":"\/(health|metrics)/, 'no probe or scrape in the info-level request log')
  t.match(logged, /"url":"\/books"/)
})

/** The ops listener listening on a free port, and a way to open raw connections to it. */
async function opsListening (t: Test, overrides: Partial<Config>) {
  const { ops } = await buildWithOps(t, overrides)
  await ops.listen({ port: 0, host: '127.0.0.1' })
  const { port } = ops.server.address() as AddressInfo
  /** A connection, and all it receives until the server closes it. */
  return () => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', chunk => { received += chunk.toString('latin1') })
    socket.on('error', () => {})
    return { socket, ready: once(socket, 'connect'), closed: once(socket, 'close').then(() => received) }
  }
}

t.test('the ops listener cuts off idle and slow connections, as the API port does', async t => {
  const open = await opsListening(t, { headersTimeout: 300, requestTimeout: 600, keepAliveTimeout: 300 })
  const started = Date.now()
  const idle = open()
  const slow = open()
  await slow.ready
  slow.socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n')
  const drip = setInterval(() => { if (!slow.socket.destroyed) slow.socket.write(`X-Drip-${Date.now()}: 1\r\n`) }, 50)
  t.teardown(() => clearInterval(drip))
  t.match(await idle.closed, /^HTTP\/1\.1 408 /, 'a connection that sends nothing is cut off after HEADERS_TIMEOUT')
  // Node's own deadlines (60 s for the headers, checked every 30 s) held it for over a minute.
  t.ok(Date.now() - started < 20_000, 'within seconds, not Node\'s minute')
  t.match(await slow.closed, /^HTTP\/1\.1 408 [^]*"detail":/, 'headers that never end are cut off, with a problem')
  clearInterval(drip)
  const probe = open()
  probe.socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n')
  t.match(await probe.closed, /^HTTP\/1\.1 200 [^]*"status":"pass"/, 'a kept-alive probe connection is closed after KEEP_ALIVE_TIMEOUT')
})

t.test('the ops listener drops connections beyond OPS_MAX_CONNECTIONS; those open are still served', async t => {
  const open = await opsListening(t, { opsMaxConnections: 2, headersTimeout: 5000, requestTimeout: 5000, keepAliveTimeout: 5000 })
  const probe = 'GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n'
  const first = open()
  const second = open()
  // Each answered once, so that the server has accepted both before the third knocks.
  for (const client of [first, second]) {
    client.socket.write(probe)
    await once(client.socket, 'data')
  }
  const third = open()
  third.socket.write(probe)
  t.equal(await third.closed, '', 'the third connection is closed without an answer')
  first.socket.write(probe.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'))
  t.match(await first.closed, /HTTP\/1\.1 200 [^]*HTTP\/1\.1 200 /, 'an open connection is still served')
  second.socket.destroy()
})
