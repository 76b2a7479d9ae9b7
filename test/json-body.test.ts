// JSON bodies as I-JSON (RFC 7493): text that is not Unicode, names given twice and __proto__ are refused, naming where, on the test engine.
import fc from 'fast-check'
import t from 'tap'
import { adminKey, build, dune } from './helper.js'
import { resolve, spec } from './contract.js'

type Json = Record<string, any>

const bearer = { authorization: `Bearer ${adminKey}` }
const someId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

/** Whether a schema (after $ref and allOf) admits strings. */
function admitsString (schema: Json): boolean {
  const { node } = resolve(schema, '')
  if (Array.isArray(node['allOf'])) return (node['allOf'] as Json[]).some(admitsString)
  return node['type'] === 'string' || (Array.isArray(node['type']) && node['type'].includes('string'))
}

/** Every operation of the contract that takes a JSON body: a body it accepts, and where in it each string goes. */
const bodies = Object.entries(spec['paths'] as Json).flatMap(([path, item]) =>
  Object.entries(item as Json).flatMap(([method, operation]) => {
    const content = (operation as Json)['requestBody'] && resolve((operation as Json)['requestBody'], '').node['content']?.['application/json']
    if (content === undefined) return []
    const schema = resolve(content.schema, '').node
    const example: Json = schema['examples']?.[0] ?? content['example']
    const fields = Object.entries(schema['properties'] as Json).flatMap(([name, property]): (string | number)[][] => {
      const resolved = resolve(property as Json, '').node
      if (admitsString(resolved)) return [[name]]
      if (resolved['type'] === 'array' && admitsString(resolved['items'])) return [[name, 0]]
      return []
    })
    return [{ operation: `${method.toUpperCase()} ${path}`, method: method.toUpperCase() as 'POST' | 'PUT', url: path.replace(/\{[^}]+\}/g, someId), example, fields }]
  }))

t.test('the contract has bodies to test: books, students and webhook endpoints, each with strings', async t => {
  t.same(bodies.map(body => body.operation).sort(), ['POST /api/students', 'POST /books', 'POST /webhook-endpoints', 'PUT /api/students/{student_id}', 'PUT /books/{book_id}'])
  for (const body of bodies) t.ok(body.fields.length >= 2, `${body.operation}: ${body.fields.map(field => field.join('/')).join(', ')}`)
})

/** Text holding at least one surrogate without its pair, among well-formed characters (astral ones included). */
const notUnicode = fc.tuple(
  fc.string({ unit: 'grapheme', maxLength: 5 }),
  fc.integer({ min: 0xd800, max: 0xdfff }),
  fc.string({ unit: 'grapheme', maxLength: 5 })
).map(([before, surrogate, after]) => before + String.fromCharCode(surrogate) + after)

t.test('a string that is not Unicode text, in any string field of any body, is a 400 naming the field; nothing is stored', async t => {
  const { app } = await build(t, { rateLimit: { requests: 100_000, seconds: 60 } })
  const cases = fc.record({
    body: fc.constantFrom(...bodies),
    fieldIndex: fc.nat(),
    text: notUnicode
  })
  await fc.assert(fc.asyncProperty(cases, async ({ body, fieldIndex, text }) => {
    const field = body.fields[fieldIndex % body.fields.length]!
    const sent = structuredClone(body.example)
    if (field.length === 2) sent[field[0]!] = [text]
    else sent[field[0]!] = text
    const response = await app.inject({ method: body.method, url: body.url, headers: { ...bearer, 'content-type': 'application/json' }, payload: JSON.stringify(sent) })
    const problem = response.json()
    return response.statusCode === 400 && problem.type === '/problems/validation-error' && problem.errors.length === 1 &&
      problem.errors[0].pointer === '#/' + field.join('/') && /must be Unicode text/.test(problem.errors[0].detail)
  }), { numRuns: 300, seed: 28 })
  for (const url of ['/books', '/api/students', '/webhook-endpoints']) {
    t.same((await app.inject({ url, headers: bearer })).json().items, [], `nothing was stored at ${url}`)
  }
})

t.test('500 lone surrogates are refused; 500 astral characters are stored and read back the same, and the PUT of what was read is accepted', async t => {
  const { app, request } = await build(t)
  const refused = await request({ method: 'POST', url: '/books', payload: `{"title":"${'\\ud800'.repeat(500)}","author":"Frank Herbert"}`, headers: { 'content-type': 'application/json' } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { errors: [{ pointer: '#/title', detail: /surrogate code point .* without its pair/ }] })

  const title = '😀'.repeat(250)
  const created = await request({ method: 'POST', url: '/books', payload: { ...dune, title } })
  t.equal(created.statusCode, 201)
  const read = await request({ url: `/books/${created.json().book_id}` })
  t.equal(read.json().title, title, 'the title is read back as sent')
  t.equal(read.headers.etag, created.headers.etag)
  const replaced = await app.inject({ method: 'PUT', url: `/books/${created.json().book_id}`, headers: { ...bearer, 'if-match': read.headers.etag as string }, payload: read.json() })
  t.equal(replaced.statusCode, 200, 'what was read can be written back')
})

t.test('a member name given twice is a 400 naming it, however it is spelt and wherever it is; the last never silently wins', async t => {
  const { request } = await build(t)
  const post = async (url: string, payload: string) => request({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })
  const twice = await post('/books', '{"title":"Dune","author":"Frank Herbert","title":"Children of Dune"}')
  t.equal(twice.statusCode, 400)
  t.match(twice.json(), { type: '/problems/validation-error', errors: [{ pointer: '#/title', detail: /more than once.*RFC 7493/ }] })
  const escaped = await post('/books', '{"title":"Dune","author":"Frank Herbert","\\u0074itle":"Children of Dune"}')
  t.match(escaped.json(), { errors: [{ pointer: '#/title' }] }, 'a name spelt with escapes is the same name')
  const nested = await post('/webhook-endpoints', '{"url":"https://example.org/hooks","types":["book.created"],"description":"a \\" , \\\\","x":{"a":[{"b\\\\":1,"b\\\\":2}]},"url":"https://example.org/other"}')
  t.same(nested.json().errors.map((error: Json) => error.pointer), ['#/x/a/0/b%5C', '#/url'], 'nested and top-level names, past strings holding quotes, commas and backslashes')
  const spaced = await post('/webhook-endpoints', '{\r\n\t"url" : "https://example.org/hooks",\n "types"\t:\r\n["book.created", "book.deleted"],\n "x": [[], {"y": 1, "y" \r: 2}]}')
  t.same(spaced.json().errors.map((error: Json) => error.pointer), ['#/x/1/y'], 'JSON\'s whitespace anywhere, and items counted past commas')
  t.equal((await request({ url: '/books' })).json().items.length, 0, 'nothing was stored')
  const once = await post('/books', '{"title":"Dune","author":"Frank Herbert","isbn":null,"published_year":null}')
  t.equal(once.statusCode, 201, 'each name once: stored')
  const similar = await post('/api/students', '{"name":"Ada","email":"ada@example.org","status":"active","enrollment_year":2025}')
  t.equal(similar.statusCode, 201)
  const arrays = await post('/books', '[{"title":"a"},{"title":"b"}]')
  t.match(arrays.json(), { errors: [{ detail: 'must be an object' }] }, 'the same name in two objects is no duplicate')
})

t.test('__proto__ and names that are not Unicode text are refused in their own words', async t => {
  const { request } = await build(t)
  const post = async (payload: string) => request({ method: 'POST', url: '/books', payload, headers: { 'content-type': 'application/json' } })
  const proto = await post('{"title":"Dune","author":"Frank Herbert","__proto__":{"admin":true}}')
  t.equal(proto.statusCode, 400)
  t.match(proto.json(), { errors: [{ pointer: '#/__proto__', detail: /not accepted as a member name: it would set the prototype/ }] })
  t.notMatch(proto.body, /ends before the value is complete/)
  const name = await post('{"title":"Dune","author":"Frank Herbert","\\udc00x":1}')
  t.match(name.json(), { errors: [{ pointer: '#', detail: /member whose name is not Unicode text/ }] })
  const both = await post('{"title":"Dune","author":"Frank Herbert","\\udc00":1,"\\udc00":2}')
  t.same(both.json().errors.map((error: Json) => error.pointer), ['#', '#/%EF%BF%BD'], 'a name given twice that has no URI form is shown with U+FFFD')
  t.match((await post('{"title":')).json(), { detail: /ends before the value is complete/ }, 'text that is not JSON is still told apart')
  t.match((await post('')).json(), { detail: 'The request body is empty; send a JSON object' })
})

t.test('problems stop at 100; nesting beyond 64 levels is one problem, at the first value too deep; a long name is cut in its pointer', async t => {
  const { request } = await build(t)
  const post = async (payload: string) => request({ method: 'POST', url: '/books', payload, headers: { 'content-type': 'application/json' } })
  const many = await post(`{"title":"Dune","author":"Frank Herbert","x":[${Array(500).fill('"\\ud800"').join(',')}]}`)
  t.equal(many.statusCode, 400)
  t.match(many.json(), { detail: '100 problems in the request body' })
  t.same(many.json().errors.map((error: Json) => error.pointer), Array.from({ length: 100 }, (_, i) => `#/x/${i}`), 'the first 100, in the body\'s order')

  const nested = (levels: number) => `{"title":"Dune","author":"Frank Herbert","deep":${'['.repeat(levels)}"\\ud800"${']'.repeat(levels)}}`
  const deepest = await post(nested(63))
  t.same(deepest.json().errors.map((error: Json) => [error.pointer, error.detail]), [['#/deep' + '/0'.repeat(63), (await post('{"title":"\\ud800","author":"A"}')).json().errors[0].detail]], '64 levels are read to the bottom')
  const tooDeep = await post(nested(64))
  t.equal(tooDeep.statusCode, 400)
  t.same(tooDeep.json().errors, [{ pointer: '#/deep' + '/0'.repeat(63), detail: 'is an array or object nested more than 64 deep, which no request of this service needs: flatten it' }])
  const research = await post('['.repeat(20_000) + Array(2500).fill('"\\ud800"').join(',') + ']'.repeat(20_000))
  t.same(research.json().errors.map((error: Json) => error.pointer), ['#' + '/0'.repeat(64)], 'the research note\'s body: one problem')

  const name = 'n'.repeat(10_000)
  const long = await post(`{"title":"Dune","author":"Frank Herbert","${name}":1,"${name}":2}`)
  t.equal(long.json().errors[0].pointer, `#/${name}`.slice(0, 499) + '…', 'cut to the contract\'s 500 characters')
})

t.test('a JSON body labelled UTF-16 or UTF-32 is a 415 saying so; UTF-8 and ASCII-compatible labels are read as UTF-8, a leading byte order mark ignored (RFC 8259)', async t => {
  const { request } = await build(t)
  const body = JSON.stringify(dune)
  for (const [type, payload] of [['application/json; charset=utf-16', Buffer.from(body, 'utf16le')], ['application/json;charset="UTF-16LE"', Buffer.from(body, 'utf16le')], ['application/json; foo=bar; Charset=utf-32', Buffer.from(body)]] as const) {
    const res = await request({ method: 'POST', url: '/books', headers: { 'content-type': type }, payload })
    t.equal(res.statusCode, 415, type)
    t.match(res.json(), { detail: /^The request body must be application\/json in UTF-8, not utf-(16|32)/ })
  }
  for (const type of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json; charset=iso-8859-1', 'application/json; version=2']) {
    const res = await request({ method: 'POST', url: '/books', headers: { 'content-type': type }, payload: JSON.stringify({ ...dune, isbn: null, title: type }) })
    t.equal(res.statusCode, 201, type)
  }
  // RFC 8259 lets a parser ignore a leading byte order mark, which some editors and Windows tools write.
  const marked = await request({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ ...dune, isbn: null, title: 'Marked' }))]) })
  t.equal(marked.statusCode, 201, 'a UTF-8 byte order mark before the JSON is ignored')
  t.equal(marked.json().title, 'Marked')
})
