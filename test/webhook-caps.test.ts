// How many webhook endpoints a key and the deployment may have, on the test engine: one key cannot take them all, and each 409 says what its caller can do.
import t, { type Test } from 'tap'
import { createKey } from '../src/access/api-keys.js'
import type { Config } from '../src/config/index.js'
import type { Resolve } from '../src/webhooks/address-policy.js'
import { adminKey, build, openTestRepositories } from './helper.js'

const resolve: Resolve = async () => [{ address: '93.184.215.14', family: 4 }]
const register = { method: 'POST', url: '/webhook-endpoints', payload: { url: 'https://hooks.example.org/books', types: ['book.created'] } } as const

async function setup (t: Test, overrides: Partial<Config>) {
  const repositories = await openTestRepositories(t)
  const api = await build(t, { webhookPollInterval: 0, ...overrides }, { repositories, resolve })
  const manager = async () => (await createKey(repositories.apiKeys, 'manager', ['webhooks:manage', 'books:read'])).key
  return { ...api, manager }
}

const tooMany = { type: '/problems/too-many-webhook-endpoints', status: 409 }

t.test('a key registers at most WEBHOOK_ENDPOINTS_PER_KEY endpoints, and is told how many it has; other keys still register', async t => {
  const { request, manager } = await setup(t, { webhookEndpointsPerKey: 2, webhookEndpointsMax: 10 })
  const [a, b] = [await manager(), await manager()]
  const first = await request({ ...register, key: a })
  t.equal(first.statusCode, 201)
  t.equal((await request({ ...register, key: a })).statusCode, 201)
  const third = await request({ ...register, key: a })
  t.equal(third.statusCode, 409)
  t.match(third.json(), { ...tooMany, detail: 'This API key already has 2 webhook endpoints, as many as one key may have; delete one it no longer uses (GET /webhook-endpoints lists them)' })
  t.equal((await request({ ...register, key: b })).statusCode, 201, 'another key has room of its own')
  t.equal((await request({ method: 'DELETE', url: `/webhook-endpoints/${first.json().endpoint.endpoint_id}`, key: a })).statusCode, 204)
  t.equal((await request({ ...register, key: a })).statusCode, 201, 'a deleted endpoint frees its key\'s room')
  for (let n = 0; n < 3; n++) t.equal((await request({ ...register, key: adminKey })).statusCode, 201, 'an admin key has no cap of its own')
})

t.test('a full deployment\'s 409 counts nothing and points each caller at what it can do', async t => {
  const { request, manager } = await setup(t, { webhookEndpointsPerKey: 2, webhookEndpointsMax: 3 })
  const [holder, newcomer] = [await manager(), await manager()]
  t.equal((await request({ ...register, key: holder })).statusCode, 201)
  t.equal((await request({ ...register, key: adminKey })).statusCode, 201)
  t.equal((await request({ ...register, key: adminKey })).statusCode, 201)
  const answers = {
    holder: await request({ ...register, key: holder }),
    newcomer: await request({ ...register, key: newcomer }),
    admin: await request({ ...register, key: adminKey })
  }
  t.match(answers.holder.json(), { ...tooMany, detail: 'This deployment has as many webhook endpoints as it allows; delete one of this key\'s that it no longer uses (GET /webhook-endpoints lists them), or ask the service\'s operator for room' })
  t.match(answers.newcomer.json(), { ...tooMany, detail: 'This deployment has as many webhook endpoints as it allows, none of them this key\'s; ask the service\'s operator for room' })
  t.match(answers.admin.json(), { ...tooMany, detail: 'This deployment has as many webhook endpoints as it allows; delete one no longer used (GET /webhook-endpoints lists them all), or raise WEBHOOK_ENDPOINTS_MAX' })
  for (const [who, answer] of Object.entries(answers)) {
    t.equal(answer.statusCode, 409)
    t.notMatch(answer.json().detail, /\d/, `${who}: the deployment's count is not told`)
  }
})

t.test('a burst of registrations from one key does not take the deployment\'s endpoints', async t => {
  const perKey = 3
  const { request, manager } = await setup(t, { webhookEndpointsPerKey: perKey, webhookEndpointsMax: 100 })
  const key = await manager()
  const answers = await Promise.all(Array.from({ length: 12 }, () => request({ ...register, key })))
  const created = answers.filter(answer => answer.statusCode === 201).length
  t.equal(created, perKey, 'exactly its cap')
  for (const answer of answers.filter(answer => answer.statusCode !== 201)) t.match(answer.json(), { ...tooMany, detail: `This API key already has ${perKey} webhook endpoints, as many as one key may have; delete one it no longer uses (GET /webhook-endpoints lists them)` })
})

t.test('a storage failure while registering is a 500, not a 409', async t => {
  const repositories = await openTestRepositories(t)
  const webhooks = { ...repositories.webhooks, create: async () => { throw new Error('the disk is full') } }
  const { request } = await build(t, { webhookPollInterval: 0, logLevel: 'silent' }, { repositories: { ...repositories, webhooks }, resolve })
  const res = await request({ ...register })
  t.equal(res.statusCode, 500)
  t.notMatch(res.payload, /disk/)
})
