// Access control: who may call what, refused before the body is read, keys hashed, never logged or cached.
import { Agent, request as httpRequest } from 'node:http'
import { setImmediate as nextTurn } from 'node:timers/promises'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { allScopes, createKey, parseKey, type Scope } from '../src/access/api-keys.js'
import { registerOperations } from '../src/http/protocol.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { ada, adminKey, build, dune, tempDatabase } from './helper.js'
import { spec } from './contract.js'

const id = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

/** One request per operation of openapi.yaml, with a valid body where it takes one. */
const operations = [
  { method: 'GET', url: '/books', scope: 'books:read' },
  { method: 'GET', url: `/books/${id}`, scope: 'books:read' },
  { method: 'POST', url: '/books', scope: 'books:write', payload: dune },
  { method: 'PUT', url: `/books/${id}`, scope: 'books:write', payload: dune },
  { method: 'DELETE', url: `/books/${id}`, scope: 'books:write' },
  { method: 'GET', url: '/api/students', scope: 'students:read' },
  { method: 'GET', url: `/api/students/${id}`, scope: 'students:read' },
  { method: 'POST', url: '/api/students', scope: 'students:write', payload: ada },
  { method: 'PUT', url: `/api/students/${id}`, scope: 'students:write', payload: ada },
  // An export needs its list's scope.
  { method: 'GET', url: '/books/export.csv', scope: 'books:read' },
  { method: 'GET', url: '/books/export.ndjson', scope: 'books:read' },
  { method: 'GET', url: '/api/students/export.csv', scope: 'students:read' },
  { method: 'GET', url: '/api/students/export.ndjson', scope: 'students:read' },
  { method: 'GET', url: '/webhook-endpoints', scope: 'webhooks:manage' },
  // Registering for book events also needs to read books: the endpoint receives only what its key may read.
  { method: 'POST', url: '/webhook-endpoints', scope: 'webhooks:manage', payload: { url: 'https://hooks.example.org/', types: ['book.created'] }, alsoNeeds: ['books:read'] },
  { method: 'GET', url: `/webhook-endpoints/${id}`, scope: 'webhooks:manage' },
  { method: 'DELETE', url: `/webhook-endpoints/${id}`, scope: 'webhooks:manage' },
  { method: 'POST', url: `/webhook-endpoints/${id}/secret`, scope: 'webhooks:manage' },
  { method: 'POST', url: `/webhook-endpoints/${id}/enable`, scope: 'webhooks:manage' },
  // The feed takes either read scope (a key sees the events of what it may read).
  { method: 'GET', url: '/events', scope: 'books:read', alternatives: ['students:read'] },
  // A stream that opens never ends by itself: whether it would open is asked with HEAD.
  { method: 'GET', url: '/events/stream', scope: 'books:read', alternatives: ['students:read'], runsAs: 'HEAD' },
  // Imports: either write scope reaches them; starting one needs its collection's (checked once the collection is known).
  { method: 'GET', url: '/imports', scope: 'books:write', alternatives: ['students:write'] },
  { method: 'POST', url: '/imports?collection=books', scope: 'books:write', headers: { 'content-type': 'text/csv' }, payload: 'title,author\r\nDune,Frank Herbert\r\n' },
  { method: 'GET', url: `/imports/${id}`, scope: 'students:write', alternatives: ['books:write'] },
  { method: 'DELETE', url: `/imports/${id}`, scope: 'books:write', alternatives: ['students:write'] }
] as const satisfies readonly { method: string, url: string, scope: Scope, alternatives?: readonly Scope[], alsoNeeds?: readonly Scope[], runsAs?: string, payload?: unknown, headers?: Record<string, string> }[]

async function withKeys (t: Test, overrides = {}) {
  const repositories = openSqliteRepositories(':memory:')
  // Webhook hosts resolve to a public address here, not through the machine's DNS (which a closed network lacks).
  const api = await build(t, overrides, { repositories, resolve: async () => [{ address: '93.184.215.14', family: 4 }] })
  const key = async (...scopes: Scope[]) => (await createKey(repositories.apiKeys, 'test', scopes)).key
  return { ...api, repositories, key }
}

t.test('openapi.yaml declares a bearerAuth scope on every operation, and the list above covers them all', async t => {
  const declared = Object.values<Record<string, any>>(spec['paths']).flatMap(item =>
    Object.values<any>(item).filter(op => op.operationId !== undefined).map(op => op.security))
  t.equal(declared.length, operations.length)
  for (const security of declared) t.match(security, [{ bearerAuth: [/^((books|students):(read|write)|webhooks:manage)$/] }])
})

t.test('an anonymous request to any student operation or any write is refused with 401 and WWW-Authenticate', async t => {
  const { request } = await build(t)
  for (const op of operations.filter(op => op.scope !== 'books:read')) {
    const res = await request({ ...op, key: null })
    t.equal(res.statusCode, 401, `${op.method} ${op.url}`)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="books-students-api"')
    t.match(res.json(), { type: '/problems/unauthorized', status: 401, detail: /needs an API key/ })
  }
  for (const url of ['/api/students', `/api/students/${id}`]) t.equal((await request({ method: 'HEAD', url, key: null })).statusCode, 401, `HEAD ${url}`)
})

t.test('book reads are public by default, and closed with PUBLIC_BOOK_READS=false', async t => {
  const open = await build(t)
  t.equal((await open.request({ method: 'GET', url: '/books', key: null })).statusCode, 200)
  t.equal((await open.request({ method: 'GET', url: `/books/${id}`, key: null })).statusCode, 404)
  t.equal((await open.request({ method: 'HEAD', url: '/books', key: null })).statusCode, 200)
  for (const url of ['/books/export.csv', '/books/export.ndjson']) t.equal((await open.request({ method: 'GET', url, key: null })).statusCode, 200, `${url}: a book export is a book read`)

  const closed = await build(t, { publicBookReads: false })
  for (const op of operations) t.equal((await closed.request({ ...op, key: null })).statusCode, 401, `${op.method} ${op.url}`)
  t.equal((await closed.request({ method: 'GET', url: '/books' })).statusCode, 200, 'a key still reads')

  // The served document says the same: the operations open to anonymous callers list an empty requirement.
  const anonymousIn = async (api: typeof open): Promise<string[]> => {
    const served = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    return Object.values<Record<string, { operationId: string, security: object[] }>>(served.paths).flatMap(item => Object.values(item))
      .filter(operation => operation.security?.some(requirement => Object.keys(requirement).length === 0)).map(operation => operation.operationId)
  }
  t.same(await anonymousIn(open), ['listBooks', 'getBook', 'exportBooksCsv', 'exportBooksNdjson'], 'by default the served document opens the book reads (their exports included)')
  t.same(await anonymousIn(closed), [], 'with PUBLIC_BOOK_READS=false it opens nothing')
})

t.test('an unknown, malformed or revoked key is refused with 401, even where anonymous reads pass', async t => {
  const { request, repositories, key } = await withKeys(t)
  const good = await key('books:read')
  // A base64url secret may itself hold '_', so keys are taken apart by the service's own parser, never split('_').
  const { keyId, secret } = parseKey(good)!
  const forged = `bsk_${keyId}_${secret.replace(/^./, c => (c === 'A' ? 'B' : 'A'))}`
  for (const authorization of [
    `Bearer ${forged}`,
    'Bearer bsk_0000000000000000_' + 'A'.repeat(43),
    'Bearer not-a-key',
    `Basic ${Buffer.from('user:pass').toString('base64')}`,
    'Bearer',
    `Bearer ${adminKey}x`
  ]) {
    const res = await request({ method: 'GET', url: '/books', key: null, headers: { authorization } })
    t.equal(res.statusCode, 401, authorization)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="books-students-api", error="invalid_token"')
  }
  t.equal((await request({ method: 'GET', url: '/books', key: good })).statusCode, 200)
  t.equal((await request({ method: 'GET', url: '/books', headers: { authorization: `bearer   ${good}` } })).statusCode, 200, 'the scheme is case-insensitive')
  t.equal(await repositories.apiKeys.revoke(keyId!), true)
  t.equal((await request({ method: 'GET', url: '/books', key: good })).statusCode, 401, 'revocation applies to the next request')
  t.equal(await repositories.apiKeys.revoke(keyId!), false, 'a key is revoked once')
})

t.test('a key without the scope an operation needs gets 403; with it, the operation runs', async t => {
  // Book reads closed, as every other operation is: where they are public, a key is served as anonymous callers are (below).
  const { request, key } = await withKeys(t, { publicBookReads: false })
  for (const op of operations) {
    const alternatives: readonly Scope[] = 'alternatives' in op ? op.alternatives : []
    const others = allScopes.filter(s => s !== op.scope && !alternatives.includes(s))
    const denied = await request({ ...op, key: await key(...others) })
    t.equal(denied.statusCode, 403, `${op.method} ${op.url} without ${op.scope}`)
    t.match(denied.json(), { type: '/problems/missing-scope', status: 403, detail: new RegExp(op.scope) })
    const allowed = await request({ ...op, ...'runsAs' in op && { method: op.runsAs }, key: await key(op.scope, ...'alsoNeeds' in op ? op.alsoNeeds : []) })
    t.not(allowed.statusCode, 401, `${op.method} ${op.url} with ${op.scope}`)
    t.not(allowed.statusCode, 403, `${op.method} ${op.url} with ${op.scope}`)
  }
})

t.test('a key without books:read gets the public book reads anonymous callers get, and nothing more', async t => {
  const { request, key } = await withKeys(t)
  const book = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  const writer = await key('books:write', 'students:read', 'webhooks:manage')
  const reader = await key('books:read')
  const reads = [
    { method: 'GET', url: '/books' },
    { method: 'HEAD', url: '/books' },
    { method: 'GET', url: `/books/${book.book_id}` },
    { method: 'HEAD', url: `/books/${book.book_id}` },
    { method: 'GET', url: '/books/export.csv' },
    { method: 'GET', url: '/books/export.ndjson' }
  ] as const
  for (const read of reads) {
    const what = `${read.method} ${read.url}`
    const [anonymous, unscoped, scoped] = await Promise.all([null, writer, reader].map(async key => request({ ...read, key })))
    t.equal(anonymous!.statusCode, 200, `${what}: anonymous`)
    t.equal(unscoped!.statusCode, 200, `${what}: a key without books:read, as anonymous`)
    t.equal(unscoped!.payload, anonymous!.payload, `${what}: the same body`)
    t.equal(unscoped!.headers['events-cursor'], undefined, `${what}: no position in the change feed, which this key may not follow for books`)
    t.equal(unscoped!.headers['cache-control'], 'no-store', `${what}: an answer to a credential is not cached`)
    t.match(unscoped!.headers['ratelimit-policy'], /^"keyed"/, `${what}: counted against the key's own quota`)
    if (read.method === 'GET' && (read.url === '/books' || read.url.startsWith('/books/export.'))) t.type(scoped!.headers['events-cursor'], 'string', `${what}: a key that reads books gets the position`)
  }
  const closed = await withKeys(t, { publicBookReads: false })
  t.equal((await closed.request({ method: 'GET', url: '/books', key: await closed.key('books:write') })).statusCode, 403, 'with book reads closed, the scope is needed')
})

t.test('authentication comes before the body: an anonymous invalid, oversized or non-JSON body gets 401', async t => {
  const { request } = await build(t)
  for (const [payload, type] of [['{"title":', 'application/json'], ['{"rating":5}', 'application/json'], ['x'.repeat(70_000), 'application/json'], ['<book/>', 'application/xml']]) {
    const res = await request({ method: 'POST', url: '/books', key: null, payload, headers: { 'content-type': type! } })
    t.equal(res.statusCode, 401, `${type} ${payload!.slice(0, 12)}`)
  }
  const bad = await request({ method: 'POST', url: '/books', payload: { rating: 5 } })
  t.equal(bad.statusCode, 400, 'with a key, the body is validated')
})

t.test('responses to a request with a credential are never cached; keys are never logged', async t => {
  const lines: string[] = []
  const repositories = openSqliteRepositories(':memory:')
  const { request } = await build(t, { logLevel: 'trace' }, { repositories, logStream: { write: line => { lines.push(line) } } })
  const { key } = await createKey(repositories.apiKeys, 'log test', ['books:read'])
  t.equal((await request({ method: 'GET', url: '/books', key })).headers['cache-control'], 'no-store')
  t.equal((await request({ method: 'GET', url: '/books', key: 'bsk_wrong' })).headers['cache-control'], 'no-store')
  t.equal((await request({ method: 'POST', url: '/books', payload: dune })).headers['cache-control'], 'no-store')
  t.equal((await request({ method: 'GET', url: '/books', key: null })).headers['cache-control'], undefined, 'public reads may be cached')
  await nextTurn()
  t.ok(lines.some(line => line.includes('"request completed"')), 'requests were logged')
  const { secret } = parseKey(key)!
  t.notOk(lines.some(line => line.includes(secret) || line.includes(adminKey)), 'no log line holds a key')
  t.notOk(lines.some(line => /"authorization"|bsk_/i.test(line)), 'no log line holds the Authorization header or any key')
})

t.test('keys are stored as hashes only', async t => {
  const repositories = openSqliteRepositories(':memory:')
  t.teardown(() => repositories.close())
  const created = await createKey(repositories.apiKeys, 'hash test', ['students:read', 'books:read'])
  const stored = await repositories.apiKeys.find(created.key_id)
  t.match(stored, { key_id: created.key_id, name: 'hash test', scopes: ['students:read', 'books:read'], revoked_at: null })
  t.equal(stored!.secretHash.length, 32, 'a SHA-256 digest')
  const { secret } = parseKey(created.key)!
  t.notOk(stored!.secretHash.toString('latin1').includes(secret))
  t.notOk(JSON.stringify(await repositories.apiKeys.list()).includes(secret), 'listing shows no secret')
  t.equal(await repositories.apiKeys.find('ffffffffffffffff'), null)
})

t.test('the service refuses to start when an operation declares no security (fails closed)', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(registerOperations(app, async operations => { operations.get('/open', async () => 'open') }), /GET \/open declares no security in openapi.yaml/)
})

t.test('on one keep-alive connection, each request is still judged by the key it carries, and a revocation applies at once', async t => {
  const databasePath = tempDatabase(t)
  const { app } = await build(t, { databasePath, publicBookReads: false })
  const port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port)
  // Another connection to the file, as the keys CLI would open.
  const cli = openSqliteRepositories(databasePath)
  t.teardown(() => cli.close())
  const reader = await createKey(cli.apiKeys, 'reader', ['books:read'])
  const writer = await createKey(cli.apiKeys, 'writer', ['books:write'])

  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const sockets = new Set<unknown>()
  const status = (key: string) => new Promise<number>((resolve, reject) => {
    const req = httpRequest({ port, path: '/books', agent, headers: { authorization: `Bearer ${key}` } }, res => {
      sockets.add(req.socket)
      res.resume().on('end', () => resolve(res.statusCode!))
    }).on('error', reject)
    req.end()
  })

  t.equal(await status(reader.key), 200)
  t.equal(await status(reader.key), 200, 'the same key again')
  t.equal(await status(writer.key), 403, 'another key on the same connection has its own scopes')
  const wrongSecret = reader.key.slice(0, -1) + (reader.key.endsWith('x') ? 'y' : 'x')
  t.equal(await status(wrongSecret), 401, 'a wrong secret is refused')
  t.equal(await status(adminKey), 200)
  t.equal(await status(adminKey), 200)
  t.equal(await status(reader.key), 200)
  t.ok(await cli.apiKeys.revoke(reader.key_id))
  t.equal(await status(reader.key), 401, 'revoked by another process: refused on the open connection')
  t.equal(sockets.size, 1, 'all of it on one connection')
})
