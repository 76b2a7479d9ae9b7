// The webhook-endpoint operations through HTTP, each response checked against openapi.yaml; registration's SSRF refusals.
import t from 'tap'
import { createKey, type Scope } from '../src/access/api-keys.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { AddressPolicy, RefusedUrlError, type Resolve } from '../src/webhooks/address-policy.js'
import { build, dune, eventually, openTestRepositories } from './helper.js'
import { FakeFeed, receiver, verifies } from './webhook-helpers.js'

// Names resolve here, never through DNS: one public, one internal, and any other to nothing.
const names: Record<string, string> = { 'hooks.example.org': '93.184.215.14', 'db.internal.example.org': '10.20.30.40' }
const resolve: Resolve = async host => names[host] === undefined ? [] : [{ address: names[host], family: 4 }]
const url = 'https://hooks.example.org/books'

async function setup (t: Parameters<typeof build>[0], overrides = {}) {
  const feed = new FakeFeed()
  const repositories = { ...openSqliteRepositories(':memory:'), events: feed }
  const api = await build(t, { webhookPollInterval: 0, ...overrides }, { repositories, resolve })
  const key = async (...scopes: Scope[]) => (await createKey(repositories.apiKeys, 'test', scopes)).key
  return { ...api, repositories, feed, key }
}

t.test('POST /webhook-endpoints registers an endpoint: 201, Location, the secret shown once', async t => {
  const { request } = await setup(t)
  const res = await request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created'], description: 'catalogue sync' } })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.equal(res.headers.location, `/webhook-endpoints/${body.endpoint.endpoint_id}`)
  t.match(body, {
    endpoint: { url, types: ['book.created'], description: 'catalogue sync', status: 'enabled', disabled_reason: null, failing_since: null },
    secret: /^whsec_[A-Za-z0-9+/=]{44}$/,
    previous_secret_expires_at: null
  })
  t.equal(Buffer.from(body.secret.slice(6), 'base64').length, 32)
  const got = await request({ method: 'GET', url: res.headers.location as string })
  t.equal(got.statusCode, 200)
  t.same(got.json(), body.endpoint, 'the secret is never shown again')
  const list = await request({ method: 'GET', url: '/webhook-endpoints' })
  t.same(list.json(), { items: [body.endpoint] })
})

t.test('GET, DELETE, secret and enable on an unknown endpoint are 404', async t => {
  const { request } = await setup(t)
  const id = '0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e'
  for (const [method, path] of [['GET', ''], ['DELETE', ''], ['POST', '/secret'], ['POST', '/enable']] as const) {
    const res = await request({ method, url: `/webhook-endpoints/${id}${path}` })
    t.equal(res.statusCode, 404, `${method} ${path}`)
    t.match(res.json(), { status: 404, detail: `No webhook endpoint has the id ${id}` })
  }
})

t.test('DELETE removes the endpoint and its pending deliveries; rotate answers a new secret with the old one\'s expiry', async t => {
  const { request, repositories } = await setup(t)
  const { endpoint, secret } = (await request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created'] } })).json()
  const rotated = await request({ method: 'POST', url: `/webhook-endpoints/${endpoint.endpoint_id}/secret` })
  t.equal(rotated.statusCode, 200)
  const body = rotated.json()
  t.not(body.secret, secret)
  t.ok(Math.abs(Date.parse(body.previous_secret_expires_at) - Date.now() - 24 * 3600_000) < 60_000, 'the old secret signs for 24 h more')
  t.match(await repositories.webhooks.get(endpoint.endpoint_id, null), { secret: body.secret, previousSecret: secret })
  await repositories.webhooks.enqueue({ endpointId: endpoint.endpoint_id, lane: 'imported', from: (await repositories.webhooks.get(endpoint.endpoint_id, null))!.positions.imported, to: 'z', events: [{ position: '1', body: '{}' }], now: 0, max: 10 })
  t.equal((await request({ method: 'DELETE', url: `/webhook-endpoints/${endpoint.endpoint_id}` })).statusCode, 204)
  t.equal((await request({ method: 'GET', url: `/webhook-endpoints/${endpoint.endpoint_id}` })).statusCode, 404)
  t.same(await repositories.webhooks.claim(Date.now(), Date.now() + 1000, 10), [], 'no delivery left')
})

t.test('POST /webhook-endpoints/{id}/enable re-enables from the head, clearing failure; an enabled one is unchanged', async t => {
  const { request, repositories, feed } = await setup(t)
  const { endpoint } = (await request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created'] } })).json()
  const same = await request({ method: 'POST', url: `/webhook-endpoints/${endpoint.endpoint_id}/enable` })
  t.same(same.json(), endpoint)
  await repositories.webhooks.disable(endpoint.endpoint_id, 'gone')
  t.match((await request({ method: 'GET', url: `/webhook-endpoints/${endpoint.endpoint_id}` })).json(), { status: 'disabled', disabled_reason: 'gone' })
  feed.add('book.created')
  const enabled = await request({ method: 'POST', url: `/webhook-endpoints/${endpoint.endpoint_id}/enable` })
  t.equal(enabled.statusCode, 200)
  t.match(enabled.json(), { status: 'enabled', disabled_reason: null, failing_since: null })
  t.same((await repositories.webhooks.get(endpoint.endpoint_id, null))!.positions, { live: await feed.head(), imported: await feed.head() })
})

t.test('webhook operations need webhooks:manage (401 without a key, 403 without the scope)', async t => {
  const { request, key } = await setup(t)
  const anonymous = await request({ method: 'GET', url: '/webhook-endpoints', key: null })
  t.equal(anonymous.statusCode, 401)
  const reader = await key('books:read')
  const refused = await request({ method: 'POST', url: '/webhook-endpoints', key: reader, payload: { url, types: ['book.created'] } })
  t.equal(refused.statusCode, 403)
  t.match(refused.json(), { type: '/problems/missing-scope', detail: /webhooks:manage/ })
})

t.test('registering types the key cannot read is 403 naming the scope; an unknown type is 400 at its index', async t => {
  const { request, key } = await setup(t)
  const manager = await key('webhooks:manage', 'books:read')
  const refused = await request({ method: 'POST', url: '/webhook-endpoints', key: manager, payload: { url, types: ['book.created', 'student.created'] } })
  t.equal(refused.statusCode, 403)
  t.match(refused.json(), { type: '/problems/missing-scope', detail: /students:read/ })
  const ok = await request({ method: 'POST', url: '/webhook-endpoints', key: manager, payload: { url, types: ['book.deleted'] } })
  t.equal(ok.statusCode, 201)
  const unknown = await request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created', 'book.burned'] } })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json(), { type: '/problems/validation-error', errors: [{ pointer: '#/types/1', detail: /book\.created/ }] })
})

t.test('beyond WEBHOOK_ENDPOINTS_MAX registering is 409 (test/webhook-caps.test.ts has every cap and its words)', async t => {
  const { request } = await setup(t, { webhookEndpointsMax: 1 })
  t.equal((await request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created'] } })).statusCode, 201)
  const res = await request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created'] } })
  t.equal(res.statusCode, 409)
  t.match(res.json(), { type: '/problems/too-many-webhook-endpoints', detail: /^This deployment has as many webhook endpoints as it allows; / })
})

t.test('URLs that cannot be delivered to are refused at registration, naming why', async t => {
  const { request } = await setup(t)
  const cases: [string, RegExp][] = [
    ['https://127.0.0.1/hooks', /^127\.0\.0\.1 is a loopback address, which webhooks may not reach \(unless the operator allows it in WEBHOOK_ALLOWED_ADDRESSES: docs\/changes\.md, "Try it on one machine"\)$/],
    ['https://10.1.2.3/hooks', /a private address/],
    ['https://169.254.169.254/latest/meta-data', /a linkLocal address/],
    ['https://[::1]/hooks', /a loopback address/],
    ['https://[::ffff:10.0.0.1]/hooks', /is a private address/],
    // IPv4-compatible and other IPv6 outside 2000::/3, which ipaddr.js alone classes as unicast.
    ['https://[::127.0.0.1]/hooks', /not a globally routable address/],
    ['https://[::a9fe:a9fe]/latest/meta-data', /not a globally routable address/],
    ['https://[::10.0.0.1]/hooks', /not a globally routable address/],
    ['https://[0:0:0:0:0:0:7f00:1]/hooks', /not a globally routable address/],
    ['https://[::1:0:0:1]/hooks', /not a globally routable address/],
    ['https://[64:ff9b::7f00:1]/hooks', /rfc6052/],
    ['https://[2002:7f00:1::]/hooks', /6to4/],
    ['https://100.64.0.1/hooks', /carrierGradeNat/],
    ['https://[fd00::1]/hooks', /uniqueLocal/],
    ['http://hooks.example.org/books', /must be https/],
    ['https://user:pw@hooks.example.org/books', /credentials/],
    ['https://hooks.example.org/books#x', /fragment/],
    ['https://hooks.example.org:8443/books', /port 8443/],
    ['https://nowhere.example.org/books', /^nowhere\.example\.org does not resolve to a public address/],
    ['https://db.internal.example.org/books', /^db\.internal\.example\.org does not resolve to a public address/],
    ['ftp://hooks.example.org/books', /must be an https URL/]
  ]
  for (const [target, detail] of cases) {
    const res = await request({ method: 'POST', url: '/webhook-endpoints', payload: { url: target, types: ['book.created'] } })
    t.equal(res.statusCode, 400, target)
    t.match(res.json(), { type: '/problems/refused-webhook-url', title: 'Refused webhook URL', errors: [{ pointer: '#/url', detail }] }, target)
  }
  const internal = await request({ method: 'POST', url: '/webhook-endpoints', payload: { url: 'https://db.internal.example.org/', types: ['book.created'] } })
  t.notMatch(internal.body, /10\.20\.30\.40|private/, 'neither the address an internal name resolves to nor its range is told')
})

t.test('what is not a URL at all is refused as one, before any lookup', async t => {
  const policy = new AddressPolicy([], async host => { throw new Error(`asked to resolve ${host}`) })
  await t.rejects(policy.check('hooks.example.org/books'), new RefusedUrlError('must be an https URL'))
})

t.test('a failure of the address check that is no refusal is the server\'s: a 500 that tells nothing of it', async t => {
  // A resolver answering what is not an address makes the check itself fail, as a bug would.
  const broken: Resolve = async () => [{ address: 'not-an-address', family: 4 }]
  const api = await build(t, { webhookPollInterval: 0 }, { resolve: broken })
  const res = await api.request({ method: 'POST', url: '/webhook-endpoints', payload: { url, types: ['book.created'] } })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, /not-an-address|ipaddr|Error:/, 'neither the address nor the error is told')
})

t.test('the allowlist admits its addresses, over http and on any port', async t => {
  const policy = new AddressPolicy(['127.0.0.1', '10.0.0.0/8', '::1'])
  await policy.check('http://127.0.0.1:8080/hooks')
  await policy.check('http://10.9.9.9/hooks')
  await policy.check('http://[::1]:3000/hooks')
  await t.rejects(policy.check('http://[::2]/hooks'), RefusedUrlError)
  t.throws(() => new AddressPolicy(['nonsense']))
})

t.test('the worker runs with the app and stops with it', async t => {
  const hook = await receiver(t)
  const { request, repositories, feed, app } = await setup(t, { webhookPollInterval: 20, webhookAllowedAddresses: ['127.0.0.1'] })
  const { endpoint, secret } = (await request({ method: 'POST', url: '/webhook-endpoints', payload: { url: hook.url, types: ['book.created'] } })).json()
  await app.ready()
  feed.add('book.created')
  while (hook.received.length === 0) await new Promise(resolve => setTimeout(resolve, 10))
  t.same(verifies(secret, hook.received[0]!.headers, hook.received[0]!.body), [true])
  t.ok(await repositories.webhooks.get(endpoint.endpoint_id, null))
})

t.test('end to end with the real feed: a created book reaches a registered endpoint', async t => {
  const repositories = await openTestRepositories(t)
  const hook = await receiver(t)
  const { request } = await build(t, { webhookPollInterval: 20, webhookAllowedAddresses: ['127.0.0.1'] }, { repositories })
  const { secret } = (await request({ method: 'POST', url: '/webhook-endpoints', payload: { url: hook.url, types: ['book.created'] } })).json()
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  // On PostgreSQL the event is readable once older transactions on the server (other tests') have ended.
  await eventually(async () => hook.received.length, received => received > 0, 'a delivery')
  t.equal(hook.received.length, 1)
  const { headers, body } = hook.received[0]!
  t.same(verifies(secret, headers, body), [true])
  t.match(JSON.parse(body), { type: 'book.created', data: { id: created.json().book_id } })
  t.equal(headers['webhook-id'], JSON.parse(body).id, 'the delivery id is the event id')
})

t.test('the connection-time lookup checks every address a name resolves to, and answers one or all', async t => {
  const publicAddress = async () => [{ address: '93.184.215.14', family: 4 }]
  const lookup = (resolve: Resolve) => new AddressPolicy([], resolve).lookup(new URL('https://hooks.example.org/'))
  const answer = (names: Resolve, options: { all?: boolean }) => new Promise<unknown[]>(resolve => {
    lookup(names)('hooks.example.org', options as never, (...args: unknown[]) => resolve(args))
  })
  t.same(await answer(publicAddress, {}), [null, '93.184.215.14', 4], 'one address, as net.connect asks by default')
  t.same(await answer(publicAddress, { all: true }), [null, [{ address: '93.184.215.14', family: 4 }]], 'all of them, as happy eyeballs asks')
  const [nothing] = await answer(async () => [], {})
  t.match(nothing, new RefusedUrlError('hooks.example.org does not resolve to a public address webhooks may reach (unless the operator allows it in WEBHOOK_ALLOWED_ADDRESSES: docs/changes.md, "Try it on one machine")'))
  const [inside] = await answer(async () => [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }], { all: true })
  t.match(inside, nothing, 'one private address among public ones refuses the name, in the same words as no address')
})
