// Every problem example in openapi.yaml is a body the service really sends: each is produced by a real request and compared.
import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import { Worker } from 'node:worker_threads'
import type { AddressInfo } from 'node:net'
import type { Response as InjectResponse } from 'light-my-request'
import t, { type Test } from 'tap'
import { createKey } from '../src/access/api-keys.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { spec } from './contract.js'
import { openStream } from './sse.js'
import { adminKey, build, dune, eventually, silentReader, tempDatabase, type TestApi } from './helper.js'

type Json = Record<string, any>

const knownId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'
/** Ids of records made by the test differ run to run; the example's id stands for any. */
const sameIds = (text: string): string => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, knownId)

/** The body the service sends when Node refuses the request before routing it, read off a raw socket. */
async function rawAnswer (t: Test, request: string, overrides = {}): Promise<Json> {
  const { app } = await build(t, { headersTimeout: 200, requestTimeout: 400, ...overrides })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1')
  let received = ''
  socket.on('data', chunk => { received += chunk.toString('latin1') })
  socket.on('error', () => {})
  await new Promise(resolve => socket.once('connect', resolve))
  socket.write(request)
  await new Promise(resolve => socket.once('close', resolve))
  return JSON.parse(received.split('\r\n\r\n')[1]!)
}

const created = async (api: TestApi, payload: object): Promise<InjectResponse> => api.request({ method: 'POST', url: '/books', payload })

/** How to make the service send each example: `<response>/<example>` → the real answer. */
const producers: Record<string, (t: Test) => Promise<InjectResponse | Json>> = {
  'BadRequest/validation': async t => (await build(t)).request({ method: 'POST', url: '/books', payload: { title: 'Dune', rating: 5 } }),
  'BadRequest/parameter': async t => (await build(t)).request({ method: 'GET', url: '/books?limit=500' }),
  'BadRequest/malformedJson': async t => (await build(t)).request({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: '{"title": "Dune",}' }),
  'ListBadRequest/parameter': async t => (await build(t)).request({ method: 'GET', url: '/books?limit=500' }),
  'ListBadRequest/invalidSearch': async t => (await build(t)).request({ method: 'GET', url: '/books?q=dune%20%22messiah' }),
  'ListBadRequest/invalidRange': async t => (await build(t)).request({ method: 'GET', url: '/books?published_year_min=1990&published_year_max=1980' }),
  'ListBadRequest/cursorMismatch': async t => {
    // A fixed cursor secret makes the cursor, and so the example's instance, the same every run.
    const repositories = openSqliteRepositories(':memory:')
    repositories.cursorSecret = async () => Buffer.alloc(32)
    const api = await build(t, {}, { repositories })
    for (const title of ['Dune', 'Emma']) await created(api, { title, author: 'A' })
    const { next_cursor: cursor } = (await api.request({ method: 'GET', url: '/books?limit=1' })).json()
    return api.request({ method: 'GET', url: `/books?sort=title&cursor=${cursor}` })
  },
  'ListBusy/busy': async t => {
    // A reader that never answers: the page runs out of the default budget.
    const api = await build(t, {}, { repositories: openSqliteRepositories(tempDatabase(t), { startReader: silentReader }) })
    return api.request({ method: 'GET', url: '/books?q=the' })
  },
  'ListBadRequest/unsupportedCombination': async t => (await build(t)).request({ method: 'GET', url: '/books?sort=relevance' }),
  'ListBadRequest/searchTooBroad': async t => {
    const repositories = openSqliteRepositories(':memory:')
    await Promise.all(Array.from({ length: 2001 }, (_, i) => repositories.books.create({ title: `The book ${i}`, author: 'A', isbn: null, published_year: null })))
    return (await build(t, {}, { repositories })).request({ method: 'GET', url: '/books?q=the&sort=title' })
  },
  'NotFound/notFound': async t => (await build(t)).request({ method: 'GET', url: `/books/${knownId}` }),
  'Unauthorized/missingKey': async t => (await build(t)).request({ method: 'GET', url: '/api/students', key: null }),
  'Unauthorized/invalidKey': async t => (await build(t)).request({ method: 'GET', url: '/api/students', key: 'not-a-key' }),
  'Forbidden/missingScope': async t => {
    const repositories = openSqliteRepositories(':memory:')
    const api = await build(t, {}, { repositories })
    const { key } = await createKey(repositories.apiKeys, 'reader', ['students:read'])
    return api.request({ method: 'POST', url: '/api/students', key, payload: { name: 'Ada Lovelace', email: 'ada@example.org' } })
  },
  'TooManyRequests/quotaExceeded': async t => {
    // A quota of one per minute; the second request comes 43 s into the window.
    let now = 0
    const api = await build(t, { rateLimitAnonymous: { requests: 1, seconds: 60 } }, { clock: () => now })
    await api.request({ method: 'GET', url: '/books', key: null })
    now = 43_000
    return api.request({ method: 'GET', url: '/books', key: null })
  },
  'ListTooManyRequests/quotaExceeded': async t => {
    let now = 0
    const api = await build(t, { rateLimitAnonymous: { requests: 1, seconds: 60 } }, { clock: () => now })
    await api.request({ method: 'GET', url: '/books', key: null })
    now = 43_000
    return api.request({ method: 'GET', url: '/books', key: null })
  },
  'ListTooManyRequests/tooManyExports': async t => {
    // Export threads that send a first chunk, then never the next: the admin key's two exports stay open.
    const startExportThread = () => new Worker(`const { parentPort } = require('node:worker_threads')
let reads = 0
parentPort.on('message', command => {
  if ('open' in command) parentPort.postMessage({ opened: null })
  else if ('next' in command && reads++ === 0) parentPort.postMessage({ chunk: '{}\\n' })
})
parentPort.postMessage({ ready: true })`, { eval: true })
    const api = await build(t, {}, { repositories: openSqliteRepositories(tempDatabase(t), { startExportThread, listBudgetMs: 600_000 }) })
    await api.app.listen({ port: 0, host: '127.0.0.1' })
    const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/books/export.ndjson`
    const running = await Promise.all([1, 2].map(async () => {
      const abort = new AbortController()
      const res = await fetch(url, { headers: { authorization: `Bearer ${adminKey}` }, signal: abort.signal })
      await res.body!.getReader().read()
      return abort
    }))
    t.teardown(() => { for (const abort of running) abort.abort() })
    return api.request({ method: 'GET', url: '/books/export.ndjson' })
  },
  'NotAcceptable/notAcceptable': async t => (await build(t)).request({ method: 'GET', url: '/books', headers: { accept: 'text/html' } }),
  'Conflict/duplicate': async t => {
    const api = await build(t)
    await created(api, dune)
    const other = (await created(api, { ...dune, isbn: null })).json()
    return api.request({ method: 'PUT', url: `/books/${other.book_id}`, payload: dune })
  },
  'CreateConflict/duplicate': async t => {
    const api = await build(t)
    await created(api, dune)
    return created(api, dune)
  },
  'CreateConflict/inFlight': async t => {
    const api = await build(t)
    const headers = { 'idempotency-key': '"8e03978e-40d5-43e8-bc93-6894a57f9324"' }
    const [, second] = await Promise.all([0, 1].map(() => api.request({ method: 'POST', url: '/books', headers, payload: dune })))
    return second!
  },
  'PreconditionFailed/stale': async t => {
    const api = await build(t)
    const book = (await created(api, dune)).json()
    return api.request({ method: 'PUT', url: `/books/${book.book_id}`, headers: { 'if-match': `"0-${book.book_id.slice(-12)}"` }, payload: dune })
  },
  'IdempotencyKeyReused/reused': async t => {
    const api = await build(t)
    const headers = { 'idempotency-key': '"8e03978e-40d5-43e8-bc93-6894a57f9324"' }
    await api.request({ method: 'POST', url: '/books', headers, payload: dune })
    return api.request({ method: 'POST', url: '/books', headers, payload: { ...dune, title: 'Dune Messiah' } })
  },
  'ImportBadRequest/header': async t => (await build(t)).request({ method: 'POST', url: '/imports?collection=books', headers: { 'content-type': 'text/csv' }, payload: 'titel,author\r\nDune,Frank Herbert\r\n' }),
  'ImportTooLarge/rows': async t => (await build(t, { importMaxRows: 1000 })).request({
    method: 'POST', url: '/imports?collection=books', headers: { 'content-type': 'text/csv' }, payload: 'title,author\r\n' + 'Dune,Frank Herbert\r\n'.repeat(1001)
  }),
  'ImportEnded/ended': async t => {
    const api = await build(t)
    const started = await api.request({ method: 'POST', url: '/imports?collection=books', headers: { 'content-type': 'text/csv' }, payload: 'title,author\r\nDune,Frank Herbert\r\n' })
    const location = started.headers['location'] as string
    await eventually(async () => (await api.request({ method: 'GET', url: location })).json(), job => job.state === 'succeeded', 'the import ended')
    return api.request({ method: 'DELETE', url: location })
  },
  'ImportKeyInUse/inFlight': async t => {
    const api = await build(t)
    const headers = { 'content-type': 'text/csv', 'idempotency-key': 'first-upload' }
    // The first upload is still arriving when the same key comes again.
    const upload = new PassThrough()
    upload.write('title,author\r\n')
    const first = api.app.inject({ method: 'POST', url: '/imports?collection=books', headers: { ...headers, authorization: `Bearer ${adminKey}` }, payload: upload })
    await eventually(() => api.request({ method: 'GET', url: '/imports' }), res => res.json().items.length === 1, 'the first upload begun')
    const again = await api.request({ method: 'POST', url: '/imports?collection=books', headers, payload: 'title,author\r\n' })
    upload.end('Dune,Frank Herbert\r\n')
    t.equal((await first).statusCode, 202, 'the first upload is answered once it ends')
    return again
  },
  'ContentTooLarge/tooLarge': async t => (await build(t)).request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(70_000) } }),
  'UnsupportedMediaType/notJson': async t => (await build(t)).request({ method: 'POST', url: '/books', headers: { 'content-type': 'text/plain' }, payload: 'Dune' }),
  'InternalError/serverFault': async t => {
    const repositories = openSqliteRepositories(':memory:')
    repositories.books.list = async () => { throw new Error('disk I/O error') }
    const example = spec['components']['responses']['InternalError']['content']['application/problem+json']['examples']['serverFault']['value']
    const reference = /reference (\S+) when/.exec(example.detail)![1]!
    return (await build(t, {}, { repositories })).request({ method: 'GET', url: '/books', headers: { 'x-request-id': reference } })
  },
  'CursorExpired/expired': async t => (await build(t)).request({ method: 'GET', url: '/events?after=5k2mq0d1-1c' }),
  'StreamTooManyRequests/tooManyStreams': async t => {
    const api = await build(t)
    await api.app.listen({ port: 0, host: '127.0.0.1' })
    const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/events/stream`
    const open = await Promise.all(Array.from({ length: 5 }, () => openStream(url, { authorization: `Bearer ${adminKey}` })))
    t.teardown(() => { for (const stream of open) stream.close() })
    return api.request({ method: 'GET', url: '/events/stream' })
  },
  'StreamTooManyRequests/quotaExceeded': async t => {
    let now = 0
    const api = await build(t, { rateLimit: { requests: 1, seconds: 60 } }, { clock: () => now })
    await api.request({ method: 'GET', url: '/events' })
    now = 43_000
    return api.request({ method: 'GET', url: '/events/stream' })
  },
  'WebhookBadRequest/refusedUrl': async t => (await build(t)).request({ method: 'POST', url: '/webhook-endpoints', payload: { url: 'https://127.0.0.1/hooks', types: ['book.created'] } }),
  'WebhookBadRequest/validation': async t => (await build(t)).request({ method: 'POST', url: '/webhook-endpoints', payload: { url: 'https://example.org/hooks/books' } }),
  'TooManyWebhookEndpoints/key': async t => {
    // Registered on the loopback receiver the operator allows, so that no name needs resolving here.
    const repositories = openSqliteRepositories(':memory:')
    const api = await build(t, { webhookAllowedAddresses: ['127.0.0.1'], webhookPollInterval: 0 }, { repositories })
    const { key } = await createKey(repositories.apiKeys, 'manager', ['webhooks:manage', 'books:read'])
    const payload = { url: 'http://127.0.0.1:9/hooks', types: ['book.created'] }
    for (let i = 0; i < 10; i++) await api.request({ method: 'POST', url: '/webhook-endpoints', key, payload })
    return api.request({ method: 'POST', url: '/webhook-endpoints', key, payload })
  },
  'TooManyWebhookEndpoints/deployment': async t => {
    const repositories = openSqliteRepositories(':memory:')
    const api = await build(t, { webhookAllowedAddresses: ['127.0.0.1'], webhookPollInterval: 0 }, { repositories })
    const payload = { url: 'http://127.0.0.1:9/hooks', types: ['book.created'] }
    for (let i = 0; i < 100; i++) await api.app.inject({ method: 'POST', url: '/webhook-endpoints', headers: { authorization: `Bearer ${adminKey}` }, payload })
    const { key } = await createKey(repositories.apiKeys, 'manager', ['webhooks:manage', 'books:read'])
    return api.request({ method: 'POST', url: '/webhook-endpoints', key, payload })
  },
  'RequestTimeout/timeout': async t => rawAnswer(t, 'GET /books HTTP/1.1\r\nHost: localhost\r\n'),
  'RequestHeaderFieldsTooLarge/tooLarge': async t => rawAnswer(t, `GET /books HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
}

const examples = Object.entries<Json>(spec['components']['responses']).flatMap(([response, node]) =>
  Object.entries<Json>(node['content']?.['application/problem+json']?.['examples'] ?? {}).map(([name, example]) => ({ key: `${response}/${name}`, value: example['value'] })))

t.test('every problem response of openapi.yaml has examples, and each has a way to produce it here', async t => {
  const withProblems = Object.entries<Json>(spec['components']['responses']).filter(([, node]) => node['content']?.['application/problem+json'] !== undefined)
  for (const [name, node] of withProblems) t.ok(Object.keys(node['content']['application/problem+json']['examples'] ?? {}).length > 0, `${name} has an example`)
  t.same(examples.map(e => e.key).sort(), Object.keys(producers).sort())
})

for (const { key, value } of examples) {
  t.test(`the example ${key} is what the service sends`, async t => {
    const real = await producers[key]!(t)
    const body = 'statusCode' in real && typeof real.json === 'function' ? (real as InjectResponse).json() : real
    t.same(JSON.parse(sameIds(JSON.stringify(body))), JSON.parse(sameIds(JSON.stringify(value))))
  })
}

t.test('the Problem schema\'s own example is a real 404 too', async t => {
  const [example] = spec['components']['schemas']['Problem']['examples']
  const real = await (await build(t)).request({ method: 'GET', url: example.instance, key: adminKey })
  t.same(real.json(), example)
})
