// Property-based hostile input: thousands of invalid requests built from openapi.yaml never get a 5xx or store anything.
import fc from 'fast-check'
import t from 'tap'
import { contractProblems, spec } from './contract.js'
import { adminKey, build } from './helper.js'

type Json = Record<string, any>
const schemas: Json = spec['components']['schemas']

/** What may be sent where, read from the contract rather than restated. */
const targets = [
  { kind: 'book', schema: schemas['BookInput'], create: '/books', item: '/books/' },
  { kind: 'student', schema: schemas['StudentInput'], create: '/api/students', item: '/api/students/' }
]

const nasty = fc.constantFrom(
  "'); DROP TABLE books; --", '" OR 1=1 --', '\u0000', 'a\u0000b', '$' + '{7*7}', '{{7*7}}', '<script>alert(1)</script>',
  '../../etc/passwd', '%00', '\\u0000', '\ud83d\ude00', '\u202e', 'null', 'true', '1e309', '__proto__'
)
/** Any JSON value but a string: the wrong type for every string field. NaN and ±Infinity would be sent as null, which a nullable field accepts. */
const notAString: fc.Arbitrary<unknown> = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
const notAnInteger: fc.Arbitrary<unknown> = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }).filter(n => !Number.isInteger(n)), fc.string(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }), fc.integer({ min: 10_000 }), fc.integer({ max: -5001 }))

/** A valid body for `schema`, then one change that makes it invalid; returned as JSON text. */
function invalidBody (schema: Json): fc.Arbitrary<string> {
  const properties = schema['properties'] as Json
  const valid: Json = Object.fromEntries(Object.entries(schema['examples'][0] as Json))
  const fields = Object.keys(properties)
  const required: string[] = schema['required']
  const withField = (name: string, value: unknown): string => JSON.stringify({ ...valid, [name]: value })
  return fc.oneof(
    // a required field missing
    fc.constantFrom(...required).map(name => JSON.stringify({ ...valid, [name]: undefined })),
    // a field that is not in the schema, __proto__ and server-set fields included, written as own keys
    fc.oneof(fc.string({ minLength: 1, maxLength: 20 }).filter(k => !fields.includes(k)), fc.constantFrom('__proto__', 'constructor', 'book_id', 'student_id', 'created_at', 'prototype'))
      .chain(key => fc.oneof(nasty, fc.jsonValue({ maxDepth: 2 })).map(value => JSON.stringify(valid).replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'},`))),
    // a wrong type
    fc.constantFrom(...fields).chain(name => {
      const type = [properties[name]['type'] ?? 'string'].flat()
      return (type.includes('integer') ? notAnInteger : notAString).filter(value => value !== null || !type.includes('null')).map(value => withField(name, value))
    }),
    // a string one character too long or far too long, or empty where it must not be
    fc.constantFrom(...fields.filter(name => properties[name]['maxLength'] !== undefined)).chain(name =>
      fc.oneof(fc.integer({ min: 1, max: 2000 }), fc.constant(0)).map(extra => withField(name, extra === 0 && properties[name]['minLength'] ? '' : '\ud83d\ude00'.repeat(properties[name]['maxLength'] + extra)))),
    // a value nested far deeper than any field allows
    fc.integer({ min: 10, max: 5000 }).map(depth => JSON.stringify(valid).replace(/^\{/, `{"deep":${'['.repeat(depth)}${']'.repeat(depth)},`)),
    // not an object at all
    fc.oneof(fc.jsonValue({ maxDepth: 2 }).filter(v => v === null || typeof v !== 'object' || Array.isArray(v)), nasty).map(v => JSON.stringify(v)),
    // not JSON at all
    fc.string({ maxLength: 200 }).filter(text => { try { JSON.parse(text); return false } catch { return true } }),
    // JSON whose string bytes are not UTF-8
    fc.uint8Array({ minLength: 1, maxLength: 8 }).filter(bytes => { try { new TextDecoder('utf-8', { fatal: true }).decode(bytes); return false } catch { return true } })
      .map(bytes => `{"__raw__":"${Buffer.from(bytes).toString('latin1')}"}`)
  )
}

t.test('thousands of invalid bodies: always a declared 4xx, never a 5xx, never a stored or changed record', async t => {
  const { app, request } = await build(t, { rateLimit: { requests: 1e9, seconds: 60 } })
  const seeded: Record<string, { url: string, body: string }> = {}
  for (const target of targets) {
    const res = await request({ method: 'POST', url: target.create, payload: target.schema['examples'][0] })
    const id = Object.values<string>(res.json())[0]
    seeded[target.kind] = { url: target.item + id, body: res.body }
  }
  const adminHeaders = { authorization: `Bearer ${adminKey}` }

  for (const target of targets) {
    await fc.assert(fc.asyncProperty(invalidBody(target.schema), fc.boolean(), async (body, put) => {
      const method = put ? 'PUT' : 'POST'
      const url = put ? seeded[target.kind]!.url : target.create
      const payload = body.includes('"__raw__"') ? Buffer.from(body, 'latin1') : body
      const res = await app.inject({ method, url, payload, headers: { ...adminHeaders, 'content-type': 'application/json' } })
      const problems = contractProblems(method, url, res)
      if (problems.length > 0 || res.statusCode < 400 || res.statusCode >= 500) {
        throw new Error(`${method} ${url} ${JSON.stringify(body).slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 200)} ${problems.join('; ')}`)
      }
    }), { numRuns: 1000 })
  }
  for (const target of targets) {
    const list = await request({ method: 'GET', url: `${target.create}?limit=100` })
    t.equal(list.json().items.length, 1, `no ${target.kind} was stored`)
    t.equal((await request({ method: 'GET', url: seeded[target.kind]!.url })).body, seeded[target.kind]!.body, `the ${target.kind} is unchanged`)
  }
})

t.test('invalid query strings, paths and headers: always a declared 4xx', async t => {
  const { app } = await build(t, { rateLimit: { requests: 1e9, seconds: 60 }, rateLimitAnonymous: { requests: 1e9, seconds: 60 } })
  const reads = ['/books', '/api/students']
  const check = async (method: string, url: string, headers: Record<string, string> = {}, expected?: number[]) => {
    const res = await app.inject({ method, url, headers })
    const problems = contractProblems(method, url, res)
    // A dot segment resolves away (`/books/..` is a request for `/`, which leads to the docs).
    const toRoot = new URL(url.split('?')[0]!, 'http://service').pathname === '/'
    const ok = problems.length === 0 && (expected === undefined ? (res.statusCode >= 400 && res.statusCode < 500) || (toRoot && res.statusCode === 302) : expected.includes(res.statusCode))
    if (!ok) throw new Error(`${method} ${url} ${JSON.stringify(headers)} → ${res.statusCode} ${res.body.slice(0, 200)} ${problems.join('; ')}`)
  }
  const text = fc.string({ unit: 'binary', maxLength: 300 })
  const query = fc.oneof(
    fc.tuple(text.filter(k => k !== 'limit' && k !== 'cursor' && k !== ''), text).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`),
    // Every value but the decimal digits of 1 to 100 (test/query-parameters.test.ts has the spellings).
    text.filter(v => !/^0*([1-9]\d?|100)$/.test(v)).map(v => `limit=${encodeURIComponent(v)}`),
    text.map(v => `cursor=${encodeURIComponent(v)}`),
    fc.constantFrom('%', '%zz', 'limit=%ff', '=x', 'limit=1&limit=2', 'limit[]=1', '__proto__[limit]=1', 'cursor=a.b&cursor=c.d')
  )
  await fc.assert(fc.asyncProperty(fc.constantFrom(...reads), query, async (path, q) => check('GET', `${path}?${q}`)), { numRuns: 700 })

  const segment = fc.oneof(text.map(encodeURIComponent), fc.constantFrom('%', '%zz', '..', '%2e%2e', '%2f', '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b6', '00000000-0000-0000-0000-000000000000'))
  // Each path with the methods it declares (others are 405 before the id matters, see protocol.test.ts).
  const items = fc.constantFrom(['/books', 'GET'], ['/books', 'PUT'], ['/books', 'DELETE'], ['/api/students', 'GET'], ['/api/students', 'PUT'])
  await fc.assert(fc.asyncProperty(items, segment, async ([path, method], id) => check(method!, `${path}/${id}`)), { numRuns: 700 })

  const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map(c => String.fromCharCode(c)), maxLength: 300 })
  await fc.assert(fc.asyncProperty(headerValue, async value => check('GET', '/api/students', { authorization: value }, [401])), { numRuns: 300 })
  // The list, and the exports (whose path names the type: a hostile Accept gets the file or a 406).
  const negotiated = fc.constantFrom('/books', '/books/export.csv', '/books/export.ndjson')
  await fc.assert(fc.asyncProperty(negotiated, headerValue.filter(v => !/json|\*/i.test(v)), async (path, accept) => check('GET', path, { accept }, [406, 200])), { numRuns: 300 })
  await fc.assert(fc.asyncProperty(headerValue, async type => {
    const res = await app.inject({ method: 'POST', url: '/books', payload: '{}', headers: { 'content-type': type } })
    if (res.statusCode !== 401 || contractProblems('POST', '/books', res).length > 0) throw new Error(`${type} → ${res.statusCode}`)
  }), { numRuns: 300 })
  t.pass('every request got a declared 4xx')
})

t.test('valid but unusual strings round-trip byte for byte', async t => {
  const { request } = await build(t, { rateLimit: { requests: 1e9, seconds: 60 } })
  // Every string but those with NUL (U+0000), which the contract refuses (the next test).
  const unusual = (max: number) => fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: max }), nasty, fc.constantFrom("O'Brien \"Quoted\"", 'Ünïcödé ✓ 漢字 😀👩‍👩‍👧', 'SELECT * FROM students;'))
    .filter(text => !text.includes('\u0000'))
  await fc.assert(fc.asyncProperty(unusual(500), unusual(300), unusual(200), async (title, author, name) => {
    const book = await request({ method: 'POST', url: '/books', payload: { title, author } })
    const student = await request({ method: 'POST', url: '/api/students', payload: { name, email: `s${Math.random().toString(36).slice(2)}@example.org` } })
    if (book.statusCode !== 201 || student.statusCode !== 201) throw new Error(`${book.statusCode} ${book.body} ${student.statusCode} ${student.body}`)
    const gotBook = (await request({ method: 'GET', url: book.headers.location! })).json()
    const gotStudent = (await request({ method: 'GET', url: student.headers.location! })).json()
    if (gotBook.title !== title || gotBook.author !== author || gotStudent.name !== name) throw new Error(`changed: ${JSON.stringify([title, gotBook.title, author, gotBook.author, name, gotStudent.name])}`)
  }), { numRuns: 150 })
  t.pass('stored exactly as sent')
})

t.test('a string with NUL anywhere is a 400 naming the field, and nothing is stored', async t => {
  const { request } = await build(t, { rateLimit: { requests: 1e9, seconds: 60 } })
  const withNul = fc.tuple(fc.string({ unit: 'binary', maxLength: 100 }), fc.string({ unit: 'binary', maxLength: 100 }))
    .map(([before, after]) => `${before}\u0000${after}`).filter(text => text.length <= 200)
  await fc.assert(fc.asyncProperty(withNul, fc.constantFrom('title', 'author', 'name'), async (text, field) => {
    const [url, valid] = field === 'name' ? ['/api/students', { name: 'N', email: 'nul@example.org' }] : ['/books', { title: 'T', author: 'A' }]
    const res = await request({ method: 'POST', url, payload: { ...valid, [field]: text } })
    const pointers = res.statusCode === 400 ? res.json().errors.map((e: { pointer: string }) => e.pointer) : []
    if (!pointers.includes(`#/${field}`)) throw new Error(`${res.statusCode} ${res.body}`)
  }), { numRuns: 100 })
  t.equal((await request({ method: 'GET', url: '/books' })).json().items.length, 0)
  t.equal((await request({ method: 'GET', url: '/api/students' })).json().items.length, 0)
})

t.test('a POST or PUT without any body is a 400, not a crash', async t => {
  const { request } = await build(t)
  for (const [method, url] of [['POST', '/books'], ['POST', '/api/students'], ['PUT', '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60']] as const) {
    const res = await request({ method, url })
    t.equal(res.statusCode, 400, `${method} ${url}`)
    t.match(res.json(), { errors: [{ detail: 'is required', pointer: '#' }] })
  }
})

t.test('a body that is not UTF-8 and a URL that cannot be decoded are 400 problems', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/books', payload: Buffer.from('{"title":"\xc3\x28","author":"x"}', 'latin1'), headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 400)
  t.equal(res.json().detail, 'The request body is not valid UTF-8')
  const url = await request({ method: 'GET', url: '/books/%' })
  t.equal(url.statusCode, 400)
  t.equal(url.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.equal(url.headers['x-content-type-options'], 'nosniff')
  t.ok(url.headers['x-request-id'])
})
