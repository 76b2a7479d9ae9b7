// HTTP-level errors every operation shares: 404, 405, 406, 413, 415, bad JSON, unknown query, masked 500.
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import pino, { type Bindings, type ChildLoggerOptions } from 'pino'
import t from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { lazyChildLogger, requestLogger } from '../src/observability/request-log.js'
import { build, dune } from './helper.js'

t.test('an unknown path answers 404 problem+json', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'GET', url: '/authors' })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { type: 'about:blank', title: 'Not Found', status: 404, instance: '/authors', detail: 'Nothing is served at /authors' })
  // Books are at /books and students at /api/students: the other spelling of a path is named when it is served.
  const nearMisses: [string, string][] = [['/students', '/api/students'], ['/students/01a23754-edbb-7bbc-87f7-149be8ba83fb', '/api/students/01a23754-edbb-7bbc-87f7-149be8ba83fb'], ['/api/books', '/books'], ['/api/books/x', '/books/x']]
  for (const [path, near] of nearMisses) {
    t.equal((await request({ method: 'GET', url: `${path}?limit=5` })).json().detail, `Nothing is served at ${path}; did you mean ${near}?`, path)
  }
  t.equal((await request({ method: 'GET', url: '/api/authors' })).json().detail, 'Nothing is served at /api/authors', 'no hint when neither is served')
})

t.test('a method a declared path does not offer answers 405 with Allow', async t => {
  const { request } = await build(t)
  for (const [method, url, allow] of [
    ['PATCH', '/books', 'GET, HEAD, POST'],
    ['DELETE', '/books', 'GET, HEAD, POST'],
    ['POST', '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', 'DELETE, GET, HEAD, PUT'],
    ['PUT', '/api/students', 'GET, HEAD, POST'],
    ['OPTIONS', '/api/students/x', 'GET, HEAD, PUT']
  ] as const) {
    const res = await request({ method, url })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow)
  }
})

t.test('an Accept that rules out JSON answers 406; JSON, problem+json and wildcards pass', async t => {
  const { request } = await build(t)
  for (const accept of ['text/html', 'application/xml, text/plain;q=0.5']) {
    const res = await request({ method: 'GET', url: '/books', headers: { accept } })
    t.equal(res.statusCode, 406, accept)
  }
  for (const accept of ['application/json', '*/*', 'application/*', 'text/html, application/problem+json;q=0.1']) {
    t.equal((await request({ method: 'GET', url: '/books', headers: { accept } })).statusCode, 200, accept)
  }
})

t.test('a body that is not JSON answers 415 and stores nothing', async t => {
  const { request } = await build(t)
  for (const contentType of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'application/problem+json']) {
    const res = await request({ method: 'POST', url: '/books', headers: { 'content-type': contentType }, payload: 'title=Dune' })
    t.equal(res.statusCode, 415, contentType)
    t.equal(res.json().detail, 'The request body must be application/json')
  }
  t.same((await request({ method: 'GET', url: '/books' })).json().items, [])
})

t.test('malformed JSON, an empty body and __proto__ keys answer 400', async t => {
  const { request } = await build(t)
  const headers = { 'content-type': 'application/json' }
  for (const payload of ['{"title":', '', '{"title":"x","author":"y","__proto__":{"admin":true}}', '[]', 'null']) {
    const res = await request({ method: 'POST', url: '/books', headers, payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
  }
})

t.test('a body over the limit answers 413', async t => {
  const { request } = await build(t, { bodyLimit: 1024 })
  const res = await request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(2000) } })
  t.equal(res.statusCode, 413)
  t.equal(res.json().status, 413)
})

t.test('the default body limit is 64 KiB', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(65 * 1024) } })
  t.equal(res.statusCode, 413)
  const below = await request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(60 * 1024) } })
  t.equal(below.statusCode, 400, 'under the limit the body reaches validation (title too long)')
})

t.test('unknown query parameters answer 400 on every operation', async t => {
  const { request } = await build(t)
  for (const url of ['/books?order=title', '/api/students?page=2', '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60?expand=1']) {
    const res = await request({ method: 'GET', url })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().errors[0].detail, 'is not a known parameter')
  }
})

t.test('an unexpected failure answers a 500 that reveals nothing and is logged with the request id', async t => {
  const repositories = openSqliteRepositories(':memory:')
  repositories.books.create = async () => { throw new Error('SQLITE_CORRUPT: database disk image is malformed') }
  const lines: string[] = []
  const { request } = await build(t, { logLevel: 'error' }, { repositories, logStream: { write: (line: string) => { lines.push(line) } } })
  const res = await request({ method: 'POST', url: '/books', payload: dune, headers: { 'x-request-id': 'req-42' } })
  t.equal(res.statusCode, 500)
  t.same(res.json(), {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    detail: 'The server failed to handle this request. Quote reference req-42 when reporting it.',
    instance: '/books'
  })
  t.equal(res.headers['x-request-id'], 'req-42')
  const logged = lines.map(line => JSON.parse(line)).find(entry => entry.msg === 'request failed')
  t.match(logged, { reqId: 'req-42', err: { message: /SQLITE_CORRUPT/ } }, 'the cause is logged with the request id')
})

t.test('requests carry an id: a plain incoming X-Request-Id is kept, anything else replaced', async t => {
  const { request } = await build(t)
  t.equal((await request({ method: 'GET', url: '/books', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'], 'abc-123')
  const replaced = (await request({ method: 'GET', url: '/books', headers: { 'x-request-id': 'bad id\u0001' } })).headers['x-request-id']
  t.match(replaced, /^[0-9a-f-]{36}$/)
})

t.test('each request is logged once at info, when it completes, with its id, method, path, status and time', async t => {
  const lines: string[] = []
  const { request } = await build(t, { logLevel: 'info' }, { logStream: { write: (line: string) => { lines.push(line) } } })
  await request({ method: 'GET', url: '/books?limit=5', headers: { 'x-request-id': 'log-1' } })
  // The lines of a turn are written together at its end.
  await nextTurn()
  const entries = lines.join('').split('\n').filter(Boolean).map(line => JSON.parse(line)).filter(entry => entry.reqId === 'log-1')
  t.equal(entries.length, 1)
  t.match(entries[0], { level: 30, msg: 'request completed', method: 'GET', url: '/books?limit=5', statusCode: 200, remoteAddress: '127.0.0.1' })
  t.type(entries[0].responseTime, 'number')
  t.match(entries[0], { pid: process.pid, hostname: String, time: Number })
})

t.test('quotes, backslashes, control characters or non-ASCII in any field still make one valid JSON line', async t => {
  const lines: string[] = []
  const logger = requestLogger({ write: line => { lines.push(line) } }, url => url)
  const line = (request: object, statusCode: number, elapsedTime: number) =>
    logger.hook({ headers: {}, ...request } as FastifyRequest, { statusCode, elapsedTime } as FastifyReply, () => {})
  const url = '/books?x="\\\u0001\n'
  line({ id: 'log-2', method: 'GET', url, ip: undefined }, 400, 1.5)
  line({ id: 'log-"3\\', method: 'GET', url: '/bücher?q=\ud800', ip: '::1' }, 200, 12.3456)
  line({ id: 'log-4', method: 'GET', url: '/books', ip: '127.0.0.1' }, 200, 0.0004)
  line({ id: 'log-5', method: 'GET', url: '/books', ip: '127.0.0.1' }, 200, 1234.06)
  t.same(lines, [], 'written at the end of the turn')
  logger.flush()
  t.equal(lines.length, 1, 'in one write')
  const entries = lines[0]!.split('\n')
  t.equal(entries.pop(), '', 'every line ends with a newline')
  t.match(entries.map(entry => JSON.parse(entry)), [
    { reqId: 'log-2', url, statusCode: 400, responseTime: 1.5, remoteAddress: null, msg: 'request completed' },
    { reqId: 'log-"3\\', url: '/bücher?q=\ud800', statusCode: 200, responseTime: 12.346, remoteAddress: '::1' },
    { reqId: 'log-4', responseTime: 0 },
    { reqId: 'log-5', responseTime: 1234.06 }
  ], 'times to the microsecond')
})

t.test('request.log is a child stamped with the request id, made only once a request logs something', async t => {
  const lines: string[] = []
  const parent = pino({ level: 'trace' }, { write: (line: string) => { lines.push(line) } })
  let made = 0
  const counting = Object.assign(Object.create(parent) as FastifyBaseLogger, {
    child: (bindings: Bindings, options?: ChildLoggerOptions) => { made++; return parent.child(bindings, options) }
  })
  const log = lazyChildLogger.call(null as never, counting, { reqId: 'r-1' }, {}, null as never)
  t.equal(made, 0, 'none made for a request that logs nothing')
  log.fatal('a'); log.error({ n: 1 }, 'b'); log.warn('c'); log.info('d'); log.debug('e'); log.trace('f')
  log.silent('never written')
  t.equal(made, 1, 'one child, made at the first line')
  t.same(lines.map(line => JSON.parse(line)).map(({ level, reqId, msg }) => [level, reqId, msg]),
    [[60, 'r-1', 'a'], [50, 'r-1', 'b'], [40, 'r-1', 'c'], [30, 'r-1', 'd'], [20, 'r-1', 'e'], [10, 'r-1', 'f']])
  log.level = 'warn'
  t.equal(log.level, 'warn')
  log.info('hidden')
  log.child({ step: 2 }).warn('nested')
  t.match(JSON.parse(lines.at(-1)!), { level: 40, reqId: 'r-1', step: 2, msg: 'nested' })
  t.equal(lines.length, 7)
})

t.test('above info, requests are not logged', async t => {
  const lines: string[] = []
  const { request } = await build(t, { logLevel: 'warn' }, { logStream: { write: (line: string) => { lines.push(line) } } })
  await request({ method: 'GET', url: '/books' })
  t.same(lines, [])
})

t.test('a problem quoting a long input is cut to the lengths its schema declares, never longer', async t => {
  const { request } = await build(t)
  const longPath = await request({ method: 'GET', url: `/books/${'a'.repeat(5000)}` })
  t.equal(longPath.statusCode, 400, 'an overlong id is a 400 like any malformed one, not a 414')
  t.equal(longPath.json().instance.length, 2000)
  t.ok(longPath.json().instance.endsWith('…'), 'the cut is marked')
  const longName = await request({ method: 'GET', url: `/books?${'n'.repeat(300)}=1` })
  t.equal(longName.statusCode, 400)
  t.same(longName.json().errors, [{ detail: 'is not a known parameter', parameter: 'n'.repeat(99) + '…' }])
  const longField = await request({ method: 'POST', url: '/books', payload: { title: 'T', author: 'A', ['f'.repeat(600)]: 1 } })
  t.same(longField.json().errors, [{ detail: 'is not a field of this resource', pointer: '#/' + 'f'.repeat(497) + '…' }])
})

t.test('a DELETE with a body that is not JSON gets the 415 its operation declares', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'DELETE', url: '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(res.statusCode, 415)
})

t.test('one voice: every problem detail names the field, the limit or the position, in words', async t => {
  const { request } = await build(t, { bodyLimit: 1024 })
  const cases: { what: string, res: Promise<import('light-my-request').Response>, errors?: object[], detail?: string }[] = [
    { what: 'a cursor of the right shape that this list never issued', res: request({ method: 'GET', url: '/books?cursor=bogus' }), errors: [{ detail: 'is not a cursor issued by this list', parameter: 'cursor' }] },
    { what: 'a forged cursor', res: request({ method: 'GET', url: '/books?cursor=a.b' }), errors: [{ detail: 'is not a cursor issued by this list', parameter: 'cursor' }] },
    { what: 'a wrong type', res: request({ method: 'POST', url: '/books', payload: { ...dune, published_year: '1965' } }), errors: [{ detail: 'must be an integer or null', pointer: '#/published_year' }] },
    { what: 'a limit out of range', res: request({ method: 'GET', url: '/books?limit=0' }), errors: [{ detail: 'must be 1 or more', parameter: 'limit' }] },
    { what: 'an empty title', res: request({ method: 'POST', url: '/books', payload: { ...dune, title: '' } }), errors: [{ detail: 'must not be empty', pointer: '#/title' }] },
    { what: 'a long title', res: request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(501) } }), errors: [{ detail: 'must be at most 500 characters long', pointer: '#/title' }] },
    { what: 'an ISBN of the wrong shape', res: request({ method: 'POST', url: '/books', payload: { ...dune, isbn: '12345' } }), errors: [{ detail: 'must be at least 10 characters long', pointer: '#/isbn' }, { detail: 'must be an ISBN-10 or ISBN-13: its digits (an ISBN-10 may end in X), with hyphens or spaces between them', pointer: '#/isbn' }] },
    { what: 'an unquoted If-Match', res: request({ method: 'DELETE', url: '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', headers: { 'if-match': '3-abc' } }), errors: [{ detail: 'must be * or one or more entity tags in double quotes, as the ETag header gave them, e.g. "3-5e6f7a8b9c0d"', parameter: 'if-match' }] },
    { what: 'a trailing slash instead of an id', res: request({ method: 'GET', url: '/books/' }), errors: [{ detail: 'is missing: the path ends with / where the id belongs (the list itself is at /books)', parameter: 'book_id' }] },
    { what: 'malformed JSON', res: request({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: '{"title": "Dune",}' }), detail: 'The request body is not valid JSON: Expected double-quoted property name at character 18' },
    { what: 'a misspelt literal', res: request({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: '{"title": tru}' }), detail: "The request body is not valid JSON: unexpected '}' (a misspelt true, false or null?)" },
    { what: 'truncated JSON', res: request({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: '{"title": "Du' }), detail: 'The request body is not valid JSON: Unterminated string at character 14' },
    { what: 'a body over the limit', res: request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(2000) } }), detail: 'The request body is larger than the 1024 bytes this server accepts' }
  ]
  for (const { what, res, errors, detail } of cases) {
    const body = (await res).json()
    if (errors !== undefined) t.same(body.errors, errors, what)
    if (detail !== undefined) t.equal(body.detail, detail, what)
    t.notMatch(JSON.stringify(body), /must (NOT|match|have)|\^|\$'|integer,null/, `${what}: no validator jargon`)
  }
})
