// Who reaches a webhook endpoint: every management operation × its owner, another key, an admin key, on the test engine.
import t, { type Test } from 'tap'
import { allScopes, createKey } from '../src/access/api-keys.js'
import { AddressPolicy, type Resolve } from '../src/webhooks/address-policy.js'
import { WebhookWorker } from '../src/webhooks/worker.js'
import { build, openTestRepositories } from './helper.js'

const resolve: Resolve = async () => [{ address: '93.184.215.14', family: 4 }]

async function setup (t: Test) {
  const repositories = await openTestRepositories(t)
  const { request } = await build(t, { webhookPollInterval: 0 }, { repositories, resolve })
  const key = async (...scopes: Parameters<typeof createKey>[2]) => createKey(repositories.apiKeys, 'test', scopes)
  // The owner and the other key hold the same scopes: only ownership tells them apart.
  const owner = await key('webhooks:manage', 'books:read')
  const other = await key('webhooks:manage', 'books:read')
  const register = async (by: string, path: string) => {
    const res = await request({ method: 'POST', url: '/webhook-endpoints', key: by, payload: { url: `https://hooks.example.org/${path}?token=t0ps3cret`, types: ['book.created'] } })
    t.equal(res.statusCode, 201)
    return res.json().endpoint as { endpoint_id: string, url: string }
  }
  return { repositories, request, key, owner, other, register }
}

type Operation = 'get' | 'delete' | 'rotate' | 'enable'
const operations: Record<Operation, { method: 'GET' | 'DELETE' | 'POST', suffix: string, success: number }> = {
  get: { method: 'GET', suffix: '', success: 200 },
  rotate: { method: 'POST', suffix: '/secret', success: 200 },
  enable: { method: 'POST', suffix: '/enable', success: 200 },
  // Last: the endpoint is gone after it.
  delete: { method: 'DELETE', suffix: '', success: 204 }
}

t.test('another key neither sees nor acts on an endpoint it did not register: 404 as if absent, nothing changed', async t => {
  const { request, repositories, owner, other, register } = await setup(t)
  const endpoint = await register(owner.key, 'owners')
  const before = await repositories.webhooks.get(endpoint.endpoint_id, null)
  const list = await request({ method: 'GET', url: '/webhook-endpoints', key: other.key })
  t.same(list.json(), { items: [] }, 'not listed')
  t.notMatch(list.body, 't0ps3cret')
  const unknown = '0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e'
  for (const [name, { method, suffix }] of Object.entries(operations)) {
    const res = await request({ method, url: `/webhook-endpoints/${endpoint.endpoint_id}${suffix}`, key: other.key })
    t.equal(res.statusCode, 404, name)
    const absent = await request({ method, url: `/webhook-endpoints/${unknown}${suffix}`, key: other.key })
    t.same({ ...res.json(), detail: null, instance: null }, { ...absent.json(), detail: null, instance: null }, `${name}: the same answer as an unknown id`)
    t.notMatch(res.body, 't0ps3cret')
  }
  t.same(await repositories.webhooks.get(endpoint.endpoint_id, null), before, 'secret, status and cursor unchanged')
})

t.test('the owner and an admin key reach it through every operation', async t => {
  const { request, key, owner, register } = await setup(t)
  const storedAdmin = await key(...allScopes)
  // The test apps' default key is ADMIN_API_KEY; a stored key holding every scope is an admin too.
  for (const [who, by] of [['owner', owner.key], ['ADMIN_API_KEY', undefined], ['an all-scopes stored key', storedAdmin.key]] as const) {
    const endpoint = await register(owner.key, who.replaceAll(' ', '-'))
    const list = await request({ method: 'GET', url: '/webhook-endpoints', key: by })
    t.ok(list.json().items.some((e: { endpoint_id: string }) => e.endpoint_id === endpoint.endpoint_id), `${who}: listed`)
    for (const [name, { method, suffix, success }] of Object.entries(operations)) {
      const res = await request({ method, url: `/webhook-endpoints/${endpoint.endpoint_id}${suffix}`, key: by })
      t.equal(res.statusCode, success, `${who}: ${name}`)
      if (name === 'rotate') t.match(res.json(), { endpoint: { endpoint_id: endpoint.endpoint_id }, secret: /^whsec_/ })
    }
  }
})

t.test('each key lists only its own endpoints; an admin key lists them all', async t => {
  const { request, owner, other, register } = await setup(t)
  const mine = await register(owner.key, 'a')
  const theirs = await register(other.key, 'b')
  const ids = async (key?: string) => (await request({ method: 'GET', url: '/webhook-endpoints', key })).json().items.map((e: { endpoint_id: string }) => e.endpoint_id)
  t.same(await ids(owner.key), [mine.endpoint_id])
  t.same(await ids(other.key), [theirs.endpoint_id])
  t.same(await ids(), [mine.endpoint_id, theirs.endpoint_id])
})

t.test('an endpoint of a revoked key is disabled by the worker and stays visible to admin keys alone', async t => {
  const { request, repositories, owner, register } = await setup(t)
  const endpoint = await register(owner.key, 'revoked')
  await repositories.apiKeys.revoke(owner.key_id)
  const worker = new WebhookWorker({
    repositories,
    policy: new AddressPolicy([], resolve),
    config: { adminApiKey: null, webhookTimeout: 1000, webhookDisableAfterHours: 1, webhookPollInterval: 1000 },
    log: { warn: () => {} }
  })
  await worker.runOnce()
  const seen = await request({ method: 'GET', url: `/webhook-endpoints/${endpoint.endpoint_id}` })
  t.match(seen.json(), { status: 'disabled', disabled_reason: 'key_revoked' })
  t.equal((await request({ method: 'GET', url: `/webhook-endpoints/${endpoint.endpoint_id}`, key: owner.key })).statusCode, 401, 'the revoked key is refused outright')
  t.equal((await request({ method: 'DELETE', url: `/webhook-endpoints/${endpoint.endpoint_id}` })).statusCode, 204, 'an admin key removes it')
})

t.test('the storage reaches an endpoint through its owner\'s id or null, never another key\'s', async t => {
  const repositories = await openTestRepositories(t)
  const { webhooks } = repositories
  const endpointId = crypto.randomUUID()
  await webhooks.create({ endpointId, url: 'https://hooks.example.org/', types: ['book.created'], description: null, keyId: 'k1', secret: 's', createdAt: '2026-11-24T00:00:00.000Z', position: '0' }, 10)
  t.same(await webhooks.list('k2'), [])
  t.equal(await webhooks.get(endpointId, 'k2'), null)
  t.equal(await webhooks.rotate(endpointId, 'k2', 'stolen', 1), null)
  t.equal(await webhooks.enable(endpointId, 'k2', '9'), null)
  t.equal(await webhooks.delete(endpointId, 'k2'), false)
  t.match(await webhooks.get(endpointId, 'k1'), { secret: 's', positions: { live: '0', imported: '0' } }, 'untouched by the other key')
  t.equal((await webhooks.list('k1')).length, 1)
  t.match(await webhooks.rotate(endpointId, 'k1', 's2', 1), { secret: 's2', previousSecret: 's' })
  t.match(await webhooks.enable(endpointId, 'k1', '9'), { positions: { live: '9', imported: '9' } })
  t.equal(await webhooks.delete(endpointId, 'k1'), true)
})
