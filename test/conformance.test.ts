// Schema-driven conformance: valid requests derived from openapi.yaml's examples and schemas succeed, round-trip and conform.
import t from 'tap'
import { operationFor, resolve, spec, validatorAt } from './contract.js'
import { build, eventually } from './helper.js'

type Json = Record<string, any>

interface Variant { name: string, body: Json }

interface Resource {
  collection: string
  /** The item path, e.g. /books/{book_id}, and its id parameter, which is also the id field of the record. */
  item: string
  id: string
  /** Pointer to the write schema (the POST body's), and its variants. */
  schemaPointer: string
  variants: Variant[]
}

/** The request-body examples of an operation, wherever openapi.yaml puts them: media example(s) first, then the schema's. */
function bodyExamples (operation: Json): { media: Json, schemaPointer: string, examples: Json[] } {
  const media = resolve(operation['requestBody'], '').node['content']['application/json']
  const schema = resolve(media.schema, '')
  const examples = [
    ...(media.example === undefined ? [] : [media.example]),
    ...Object.values<Json>(media.examples ?? {}).map(example => resolve(example, '').node['value']),
    ...(schema.node['examples'] ?? [])
  ]
  return { media, schemaPointer: schema.pointer, examples }
}

/**
 * Valid bodies for a write schema: every example, then the first (fullest) example with one field changed at a
 * time: each optional field left out and, where nullable, set to null; each field set to each of its own examples
 * and enum values; strings at their shortest and longest where length is their only rule; integers at their
 * minimum and maximum.
 */
function variantsOf (schemaPointer: string, examples: Json[]): Variant[] {
  const schema = resolve({ $ref: schemaPointer }, '').node
  const required = new Set<string>(schema['required'] ?? [])
  const base = examples[0]!
  const with1 = (field: string, value: unknown): Json => ({ ...base, [field]: value })
  const without = (field: string): Json => Object.fromEntries(Object.entries(base).filter(([k]) => k !== field))
  const variants: Variant[] = examples.map((body, i) => ({ name: `example ${i + 1}`, body }))
  for (const [field, node] of Object.entries<Json>(schema['properties'])) {
    const property = resolve(node, '').node
    const types = [property['type']].flat()
    if (!required.has(field)) variants.push({ name: `without ${field}`, body: without(field) })
    if (!required.has(field) && types.includes('null')) variants.push({ name: `${field} null`, body: with1(field, null) })
    for (const value of [...(property['examples'] ?? []), ...(property['enum'] ?? [])]) {
      variants.push({ name: `${field} ${JSON.stringify(value)}`, body: with1(field, value) })
    }
    if (types.includes('string') && property['pattern'] === undefined && property['format'] === undefined && property['enum'] === undefined) {
      variants.push({ name: `${field} shortest`, body: with1(field, 'x'.repeat(property['minLength'] ?? 0)) })
      variants.push({ name: `${field} longest`, body: with1(field, 'x'.repeat(property['maxLength'])) })
    }
    for (const bound of ['minimum', 'maximum']) {
      if (types.includes('integer') && property[bound] !== undefined) variants.push({ name: `${field} ${bound}`, body: with1(field, property[bound]) })
    }
  }
  variants.push({ name: 'required fields only', body: Object.fromEntries(Object.entries(base).filter(([k]) => required.has(k))) })
  // Keep the first of equal bodies, so each request is sent once.
  const seen = new Set<string>()
  return variants.filter(v => !seen.has(JSON.stringify(v.body)) && seen.add(JSON.stringify(v.body)))
}

/** The schema a response answers with as JSON. */
const answerSchema = (response: Json | undefined): unknown => response === undefined ? undefined : resolve(response, '').node['content']?.['application/json']?.['schema']

/**
 * Each collection whose POST creates, from a body, what its item path reads back: the record resources
 * of the contract (webhook endpoints answer their creation with a secret, so they are tested on their own).
 */
const resources: Resource[] = Object.entries<Json>(spec['paths']).flatMap(([collection, item]) => {
  if (item['post']?.['requestBody'] === undefined) return []
  const itemPath = Object.keys(spec['paths']).find(p => new RegExp(`^${collection}/\\{\\w+\\}$`).test(p))!
  const created = answerSchema(item['post']['responses']['201'])
  if (JSON.stringify(created) !== JSON.stringify(answerSchema(spec['paths'][itemPath]['get']['responses']['200']))) return []
  const { schemaPointer, examples } = bodyExamples(item['post'])
  return [{ collection, item: itemPath, id: /\{(\w+)\}$/.exec(itemPath)![1]!, schemaPointer, variants: variantsOf(schemaPointer, examples) }]
})

/** What a written body reads back as: given fields as sent (ISBNs in 13-digit form), omitted ones at their default or null. */
function expectedRecord (schemaPointer: string, body: Json): Json {
  const schema = resolve({ $ref: schemaPointer }, '').node
  return Object.fromEntries(Object.entries<Json>(schema['properties']).map(([field, node]) => {
    const value = body[field] ?? resolve(node, '').node['default'] ?? null
    return [field, field === 'isbn' && value !== null ? isbn13Form(value) : value]
  }))
}

/** An ISBN-13 sent with hyphens or spaces comes back as its 13 digits; an ISBN-10 as 978, its first nine digits and a new check digit. */
function isbn13Form (raw: string): string | RegExp {
  const digits = raw.replace(/[- ]/g, '')
  return digits.length === 13 ? digits : new RegExp(`^978${digits.slice(0, 9)}\\d$`)
}

const exercised = new Set<string>()

/** `api.request`, noting each operation it drives for the test that every one was. */
function driving (api: Awaited<ReturnType<typeof build>>): Awaited<ReturnType<typeof build>>['request'] {
  return async options => {
    exercised.add(operationFor(options.method ?? 'GET', String(options.url))!.operationId)
    return api.request(options)
  }
}

for (const resource of resources) {
  const { collection, id, schemaPointer } = resource
  const validate = validatorAt(schemaPointer)

  t.test(`${collection}: every generated body is valid against ${schemaPointer.split('/').pop()}`, async t => {
    t.ok(resource.variants.length >= 5, `${resource.variants.length} bodies`)
    for (const { name, body } of resource.variants) t.ok(validate(body), name, { errors: validate.errors })
  })

  for (const { name, body } of resource.variants) {
    t.test(`${collection} and ${resource.item} with ${name}`, async t => {
      const api = await build(t)
      const request = driving(api)
      const echoes = (record: Json, sent: Json, what: string): void => {
        for (const [field, expected] of Object.entries(expectedRecord(schemaPointer, sent))) {
          if (expected instanceof RegExp) t.match(record[field], expected, `${what}: ${field}`)
          else t.same(record[field], expected, `${what}: ${field}`)
        }
      }

      const created = await request({ method: 'POST', url: collection, payload: body })
      t.equal(created.statusCode, 201, 'POST succeeds')
      const record = created.json()
      const url = resource.item.replace(`{${id}}`, record[id])
      t.equal(created.headers['location'], url)
      echoes(record, body, 'POST')

      const read = await request({ method: 'GET', url })
      t.equal(read.statusCode, 200, 'GET succeeds')
      t.same(read.json(), record, 'GET reads back what POST returned')

      const limit = resolve(spec['components']['parameters']['Limit'], '').node['example']
      const list = await request({ method: 'GET', url: `${collection}?limit=${limit}` })
      t.equal(list.statusCode, 200, 'the list succeeds')
      t.same(list.json().items, [record], 'the list holds the record')

      if (spec['paths'][resource.item]['put'] !== undefined) {
        // Replace with the fullest example, then with this body: fields it omits must be cleared again.
        const full = resource.variants[0]!.body
        const first = await request({ method: 'PUT', url, payload: full })
        t.equal(first.statusCode, 200, 'PUT of the first example succeeds')
        echoes(first.json(), full, 'PUT first example')
        const replaced = await request({ method: 'PUT', url, payload: body })
        t.equal(replaced.statusCode, 200, 'PUT succeeds')
        echoes(replaced.json(), body, 'PUT')
        t.equal(replaced.json().created_at, record.created_at, 'PUT keeps created_at')
        t.same((await request({ method: 'GET', url })).json(), replaced.json(), 'GET reads back what PUT returned')
      }

      if (spec['paths'][resource.item]['delete'] !== undefined) {
        t.equal((await request({ method: 'DELETE', url })).statusCode, 204, 'DELETE succeeds')
        t.equal((await request({ method: 'GET', url })).statusCode, 404, 'the record is gone')
      }
    })
  }

  t.test(`${collection}: a cursor the list issued leads to the next page`, async t => {
    const api = await build(t)
    const base = resource.variants[0]!.body
    // The fields the contract declares unique (a book's isbn, a student's email) differ in the second record.
    const second = { ...base, ...('isbn' in base && { isbn: null }), ...('email' in base && { email: 'second@example.org' }) }
    for (const payload of [base, second]) {
      t.equal((await api.request({ method: 'POST', url: collection, payload })).statusCode, 201)
    }
    const first = (await api.request({ method: 'GET', url: `${collection}?limit=1` })).json()
    t.equal(first.items.length, 1)
    t.type(first.next_cursor, 'string')
    const next = await api.request({ method: 'GET', url: `${collection}?limit=1&cursor=${first.next_cursor}` })
    t.equal(next.statusCode, 200)
    t.equal(next.json().items.length, 1)
    t.not(next.json().items[0][id], first.items[0][id])
  })
}

t.test('the feed and the webhook endpoints answer valid requests as declared', async t => {
  // Registered on an address the operator allows, so that nothing needs resolving here; nothing is delivered.
  const api = await build(t, { webhookAllowedAddresses: ['127.0.0.1'], webhookPollInterval: 0 })
  const request = driving(api)
  const input = resolve({ $ref: '#/components/schemas/WebhookEndpointInput' }, '').node['examples'][0]
  const created = await request({ method: 'POST', url: '/webhook-endpoints', payload: { ...input, url: 'http://127.0.0.1:9/hooks' } })
  t.equal(created.statusCode, 201)
  const endpoint = `/webhook-endpoints/${created.json().endpoint.endpoint_id}`
  t.equal(created.headers['location'], endpoint)
  t.equal((await request({ method: 'GET', url: '/webhook-endpoints' })).json().items.length, 1)
  t.same((await request({ method: 'GET', url: endpoint })).json(), created.json().endpoint)
  t.not((await request({ method: 'POST', url: `${endpoint}/secret` })).json().secret, created.json().secret)
  t.equal((await request({ method: 'POST', url: `${endpoint}/enable` })).json().status, 'enabled')
  t.equal((await request({ method: 'DELETE', url: endpoint })).statusCode, 204)

  await request({ method: 'POST', url: '/books', payload: { title: 'Dune', author: 'Frank Herbert' } })
  // On PostgreSQL the event is readable once older transactions on the server (other tests') have ended.
  const page = await eventually(async () => await request({ method: 'GET', url: '/events?limit=1&types=book.created' }), page => page.json().items.length > 0, 'the event readable')
  t.equal(page.json().items[0].type, 'book.created')
  // HEAD answers what a GET of the stream would, without holding a stream open.
  const stream = await request({ method: 'HEAD', url: `/events/stream?after=${page.json().next_cursor}` })
  t.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8')
})

t.test('imports answer valid requests as declared: the contract\'s example files, in both formats', async t => {
  const api = await build(t)
  const request = driving(api)
  const body = spec['paths']['/imports']['post']['requestBody']['content']
  for (const [type, payload] of [['text/csv', body['text/csv'].example], ['application/x-ndjson', body['application/x-ndjson'].example]] as const) {
    const started = await request({ method: 'POST', url: '/imports?collection=books&mode=valid', headers: { 'content-type': type }, payload })
    t.equal(started.statusCode, 202, type)
    const location = started.headers['location'] as string
    const ended = await eventually(async () => (await request({ method: 'GET', url: location })).json(), job => job.state !== 'running', 'the import ended')
    t.equal(ended.state, 'succeeded', type)
    // The second file repeats the first's ISBN: what is checked is that every row was read as a record.
    t.notOk(ended.problems.some((problem: { type: string }) => problem.type === '/problems/invalid-import'), `${type}: every row of the example is a record`)
    t.equal((await request({ method: 'DELETE', url: location })).statusCode, 409, 'an ended import has nothing to cancel')
  }
  t.equal((await request({ method: 'GET', url: '/imports' })).json().items.length, 2)
})

t.test('the exports answer valid requests as declared: each collection in both formats, with the list\'s filters', async t => {
  const api = await build(t)
  const request = driving(api)
  await request({ method: 'POST', url: '/books', payload: { title: 'Dune', author: 'Frank Herbert' } })
  await request({ method: 'POST', url: '/api/students', payload: { name: 'Ada Lovelace', email: 'ada@example.org' } })
  for (const [url, first] of [['/books/export.csv?sort=title&bom=true', '\uFEFFbook_id,title'], ['/books/export.ndjson?author=Frank%20Herbert', '{"book_id"'],
    ['/api/students/export.csv?status=active', 'student_id,name'], ['/api/students/export.ndjson?sort=name', '{"student_id"']] as const) {
    const res = await request({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    t.ok(res.payload.startsWith(first), `${url} starts with ${first}`)
  }
})

t.test('every operation of openapi.yaml was driven with valid requests', async t => {
  const declared = Object.values<Json>(spec['paths']).flatMap(item =>
    Object.values<Json>(item).map(operation => operation['operationId']).filter(Boolean))
  t.same([...exercised].sort(), declared.sort())
})
