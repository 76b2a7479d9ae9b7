// Deprecation and sunset: declared in the contract, announced in Deprecation, Sunset and Link headers, and never declared half-way.
import fastify from 'fastify'
import t from 'tap'
import { announceDeprecations, deprecationProblems, routeDeprecation } from '../src/contract/deprecation.js'
import { type OpenApiDocument, type Operation, readContract } from '../src/contract/openapi-document.js'
import { validatorAt } from './contract.js'
import { ada, build, dune } from './helper.js'

type Json = Record<string, any>

const seconds = (date: string): number => Date.parse(date) / 1000

/**
 * openapi.yaml with deprecations: the operation listBooks (with a sunset), the query parameter limit
 * of listStudents (no sunset yet), the header Idempotency-Key of createStudent, and the field
 * published_year of book bodies, sent and received.
 */
function fixture (): OpenApiDocument {
  const document: Json = readContract()
  Object.assign(document['paths']['/books'].get, { deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': '2027-06-01' })
  const { parameters, schemas } = document['components']
  const listStudents = document['paths']['/api/students'].get
  listStudents.parameters = [{ ...parameters.Limit, deprecated: true, 'x-deprecated-at': '2026-12-15T12:00:00Z' }, ...listStudents.parameters.slice(1)]
  const createStudent = document['paths']['/api/students'].post
  createStudent.parameters = [{ ...parameters.IdempotencyKey, deprecated: true, 'x-deprecated-at': '2027-01-01', 'x-sunset': '2028-01-01' }]
  Object.assign(schemas.BookInput.properties.published_year, { deprecated: true, 'x-deprecated-at': '2026-11-01', 'x-sunset': '2027-05-01' })
  Object.assign(schemas.Book.properties.published_year, { deprecated: true, 'x-deprecated-at': '2026-11-01', 'x-sunset': '2027-05-01' })
  return document as OpenApiDocument
}

const imfFixdate = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/
const deprecationHeaders = (headers: Json): Json => Object.fromEntries(['deprecation', 'sunset'].filter(h => h in headers).map(h => [h, headers[h]]))

t.test('a deprecated operation answers with Deprecation, Sunset and a deprecation Link, beside its own Link', async t => {
  const api = await build(t, {}, { document: fixture() })
  const empty = await api.request({ url: '/books' })
  t.equal(empty.statusCode, 200)
  t.equal(empty.headers['deprecation'], `@${seconds('2026-12-01T00:00:00Z')}`)
  t.match(empty.headers['deprecation'], /^@\d+$/, 'a structured-field date: @ and integer seconds')
  const sunset = String(empty.headers['sunset'])
  t.match(sunset, imfFixdate)
  t.equal(Date.parse(sunset) / 1000, seconds('2027-06-01T00:00:00Z'))
  t.ok(Date.parse(sunset) / 1000 >= Number(String(empty.headers['deprecation']).slice(1)), 'Sunset is not before Deprecation')
  t.equal(empty.headers['link'], '</docs#/books/listBooks>; rel="deprecation"; type="text/html"')
  for (const [header, name] of [['deprecation', 'Deprecation'], ['sunset', 'Sunset'], ['link', 'DeprecationLink']] as const) {
    t.ok(validatorAt(`#/components/headers/${name}/schema`)(empty.headers[header]), `${header} as components/headers/${name} declares it`)
  }

  for (const isbn of ['978-0-441-01359-3', '978-0-14-044913-6']) t.equal((await api.request({ method: 'POST', url: '/books', payload: { title: 'T', author: 'A', isbn } })).statusCode, 201)
  const page = await api.request({ url: '/books?limit=1' })
  t.match(page.headers['link'], /^<\/books\?limit=1&sort=created_at&cursor=[^>]+>; rel="next", <\/docs#\/books\/listBooks>; rel="deprecation"; type="text\/html"$/)
  const head = await api.request({ method: 'HEAD', url: '/books?limit=1' })
  t.equal(head.headers['link'], page.headers['link'], 'HEAD announces it once too')
  t.equal(head.headers['deprecation'], empty.headers['deprecation'])
})

t.test('operations without deprecations send none of the headers, even when they return a deprecated field', async t => {
  const api = await build(t, {}, { document: fixture() })
  const created = await api.request({ method: 'POST', url: '/books', payload: { title: 'Dune', author: 'Frank Herbert' } })
  t.equal(created.statusCode, 201)
  const book = created.json()
  for (const res of [
    created,
    await api.request({ url: `/books/${book.book_id}` }),
    await api.request({ method: 'DELETE', url: `/books/${book.book_id}` }),
    await api.request({ url: '/api/students' }),
    await api.request({ method: 'POST', url: '/api/students', payload: ada })
  ]) {
    t.same(deprecationHeaders(res.headers), {}, `${res.statusCode} ${res.raw.req.method} ${res.raw.req.url}`)
    t.notMatch(String(res.headers['link'] ?? ''), /deprecation/)
  }
  const app = await build(t)
  const plain = await app.request({ url: '/books' })
  t.same(deprecationHeaders(plain.headers), {}, 'openapi.yaml deprecates nothing today')
})

t.test('a deprecated query parameter announces itself only when the request sends it', async t => {
  const api = await build(t, {}, { document: fixture() })
  const used = await api.request({ url: '/api/students?limit=5' })
  t.equal(used.statusCode, 200)
  t.equal(used.headers['deprecation'], `@${seconds('2026-12-15T12:00:00Z')}`)
  t.notOk('sunset' in used.headers, 'no sunset is set for it')
  t.equal(used.headers['link'], '</docs#/students/listStudents>; rel="deprecation"; type="text/html"')
  // A rejected request still used it.
  const refused = await api.request({ url: '/api/students?limit=0' })
  t.equal(refused.statusCode, 400)
  t.equal(refused.headers['deprecation'], used.headers['deprecation'])
  t.same(deprecationHeaders((await api.request({ url: '/api/students' })).headers), {})
})

t.test('a deprecated header parameter announces itself only when the request sends it', async t => {
  const api = await build(t, {}, { document: fixture() })
  const used = await api.request({ method: 'POST', url: '/api/students', headers: { 'idempotency-key': '"a-retry-key"' }, payload: ada })
  t.equal(used.statusCode, 201)
  t.equal(used.headers['deprecation'], `@${seconds('2027-01-01T00:00:00Z')}`)
  t.equal(Date.parse(String(used.headers['sunset'])) / 1000, seconds('2028-01-01T00:00:00Z'))
  t.same(deprecationHeaders((await api.request({ method: 'POST', url: '/api/students', payload: { ...ada, email: 'ada2@example.org' } })).headers), {})
})

t.test('a deprecated body field announces itself only when the body has it, null included', async t => {
  const api = await build(t, {}, { document: fixture() })
  const used = await api.request({ method: 'POST', url: '/books', payload: dune })
  t.equal(used.statusCode, 201)
  t.equal(used.headers['deprecation'], `@${seconds('2026-11-01T00:00:00Z')}`)
  t.equal(Date.parse(String(used.headers['sunset'])) / 1000, seconds('2027-05-01T00:00:00Z'))
  t.equal(used.headers['link'], '</docs#/books/createBook>; rel="deprecation"; type="text/html"')
  const book = used.json()
  const replaced = await api.request({ method: 'PUT', url: `/books/${book.book_id}`, payload: { title: 'Dune', author: 'F. Herbert', published_year: null } })
  t.equal(replaced.statusCode, 200)
  t.equal(replaced.headers['deprecation'], used.headers['deprecation'])
  t.equal(replaced.headers['link'], '</docs#/books/updateBook>; rel="deprecation"; type="text/html"')
  const without = await api.request({ method: 'PUT', url: `/books/${book.book_id}`, payload: { title: 'Dune', author: 'F. Herbert' } })
  t.same(deprecationHeaders(without.headers), {})
})

t.test('openapi.yaml declares every deprecation with its dates', async t => {
  t.same(deprecationProblems(readContract()), [])
  t.same(deprecationProblems(fixture()), [])
})

t.test('a deprecation declared half-way is named, and the service refuses to start with it', async t => {
  const document = fixture() as Json
  const { paths, components } = document
  delete paths['/books'].get['x-deprecated-at']
  paths['/books'].post['x-sunset'] = '2027-01-01'
  Object.assign(paths['/books/{book_id}'].get, { deprecated: true, 'x-deprecated-at': '2026-02-30' })
  Object.assign(paths['/books/{book_id}'].put, { deprecated: true, 'x-deprecated-at': 20261201 })
  Object.assign(paths['/books/{book_id}'].delete, { deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': '2027-05-31' })
  Object.assign(components.schemas.StudentInput.properties.name, { deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': 'soon' })
  Object.assign(components.parameters.BookId, { deprecated: true, 'x-deprecated-at': '2026-12-01' })
  // Data in an example is not a declaration.
  components.schemas.StudentInput.examples = [{ deprecated: true }]
  t.same(deprecationProblems(document as OpenApiDocument), [
    "#/paths/~1books/get: deprecated: true needs x-deprecated-at, the date the deprecation is announced ('YYYY-MM-DD', quoted), not undefined",
    '#/paths/~1books/post: x-deprecated-at and x-sunset belong beside `deprecated: true`',
    "#/paths/~1books~1{book_id}/get: deprecated: true needs x-deprecated-at, the date the deprecation is announced ('YYYY-MM-DD', quoted), not \"2026-02-30\"",
    "#/paths/~1books~1{book_id}/put: deprecated: true needs x-deprecated-at, the date the deprecation is announced ('YYYY-MM-DD', quoted), not 20261201",
    '#/paths/~1books~1{book_id}/delete: x-sunset 2027-05-31 is less than 6 months after x-deprecated-at 2026-12-01',
    '#/components/parameters/BookId: a path parameter cannot be deprecated on its own: deprecate the operations that take it',
    "#/components/schemas/StudentInput/properties/name: x-sunset must be a date ('YYYY-MM-DD', quoted), not \"soon\""
  ])
  await t.rejects(build(t, {}, { document: document as OpenApiDocument }), /declares deprecations half-way[^]*#\/paths\/~1books\/get/)
})

t.test('routeDeprecation finds nested body fields, stops at recursive schemas, ignores deprecated path parameters', async t => {
  const dates = { deprecated: true, 'x-deprecated-at': '2026-12-01' }
  const document = {
    openapi: '3.1.0',
    info: { version: '1.0.0' },
    paths: {
      '/trees/{tree_id}': {
        parameters: [{ name: 'tree_id', in: 'path', required: true, schema: { type: 'string' }, ...dates }],
        put: {
          operationId: 'replaceTree',
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Tree' } } } }
        },
        delete: { operationId: 'deleteTree' }
      }
    },
    components: {
      schemas: {
        Tree: {
          type: 'object',
          properties: {
            label: { type: 'object', properties: { old: { type: 'string', ...dates } } },
            children: { type: 'array' },
            parent: { $ref: '#/components/schemas/Tree' }
          }
        }
      }
    }
  }
  const { put, delete: remove } = document.paths['/trees/{tree_id}'] as unknown as Record<string, Operation>
  t.same(routeDeprecation(document, '/trees/{tree_id}', put!), {
    parameters: [],
    fields: [{ at: seconds('2026-12-01T00:00:00Z'), path: ['label', 'old'] }],
    link: '</docs#/default/replaceTree>; rel="deprecation"; type="text/html"'
  })
  t.equal(routeDeprecation(document, '/trees/{tree_id}', remove!), undefined)
})

t.test('announceDeprecations adds its hooks to a route that has none of its own yet, and leaves other routes bare', async t => {
  const link = '</docs#/trees/listTrees>; rel="deprecation"; type="text/html"'
  const deprecation = { parameters: [{ at: seconds('2026-12-01T00:00:00Z'), in: 'query' as const, name: 'old' }], fields: [], link }
  const deprecated = { method: 'GET', url: '/trees', handler: () => {}, config: { deprecation } } as unknown as Parameters<typeof announceDeprecations>[0]
  announceDeprecations(deprecated)
  t.equal([deprecated.onSend].flat().length, 1, 'one onSend hook')
  t.equal([deprecated.preValidation].flat().length, 1, 'and one preValidation hook for the parameter, though the route had none')
  const plain = { method: 'GET', url: '/trees', handler: () => {} } as unknown as Parameters<typeof announceDeprecations>[0]
  announceDeprecations(plain)
  t.equal(plain.onSend, undefined)
  t.equal(plain.preValidation, undefined)
})

t.test('an operation deprecated as a whole, with nothing deprecated in what is sent, gets only the hook that announces it, on every answer', async t => {
  const deprecation = { operation: { at: seconds('2026-12-01T00:00:00Z'), sunset: seconds('2027-06-01T00:00:00Z') }, parameters: [], fields: [], link: '</docs#/trees/getTree>; rel="deprecation"; type="text/html"' }
  const route = { method: 'GET', url: '/tree', handler: async () => ({ ok: true }), config: { deprecation } } as unknown as Parameters<typeof announceDeprecations>[0]
  announceDeprecations(route)
  t.equal(route.preValidation, undefined, 'no preValidation hook: nothing a request sends is looked at')
  const app = fastify()
  t.teardown(() => app.close())
  app.route(route)
  const response = await app.inject({ method: 'GET', url: '/tree' })
  t.equal(response.headers['deprecation'], `@${seconds('2026-12-01T00:00:00Z')}`)
  t.equal(response.headers['sunset'], new Date('2027-06-01T00:00:00Z').toUTCString())
  t.equal(response.headers['link'], deprecation.link)
})
