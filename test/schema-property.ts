// Schema-driven property test: random valid and invalid requests generated from the served contract, checked by a model of the service.
// Run by schema-property.fixed.test.ts (the seed CI always covers) and schema-property.fresh.test.ts (a new one each run).
import fc from 'fast-check'
import { generateSync, type Random as FakerRandom, registerFormat } from 'json-schema-faker'
import type { Test } from 'tap'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { isIsbn } from '../src/domain/isbn.js'
import { parseSearch } from '../src/domain/search/query.js'
import { contractProblems } from './contract.js'
import { adminKey, build } from './helper.js'
import { type PrismCheck, prismChecker } from './prism.js'

type Json = Record<string, any>

const casesPerOperation = 300

/**
 * json-schema-faker knows the standard formats; openapi.yaml's `format: isbn` is defined in its
 * description (a right check digit), and this generator of the format makes ISBNs in every written
 * form. Registered when this module loads, so `fake` (and any generateSync) fills `format: isbn` with it.
 */
export const fakeIsbn = (random: FakerRandom): string => {
  const digits = Array.from({ length: 12 }, () => random.int(0, 9))
  if (random.bool()) {
    // ISBN-10: nine digits and a check character, X for 10.
    const sum = digits.slice(0, 9).reduce((s, d, i) => s + d * (10 - i), 0)
    const check = (11 - (sum % 11)) % 11
    return spaced([...digits.slice(0, 9).map(String), check === 10 ? random.pick(['X', 'x']) : String(check)], random.pick(['', '-', ' ']))
  }
  const twelve = [9, 7, random.pick([8, 9]), ...digits.slice(3)]
  const check = (10 - (twelve.reduce((s, d, i) => s + d * (i % 2 === 0 ? 1 : 3), 0) % 10)) % 10
  return spaced([...twelve, check].map(String), random.pick(['', '-', ' ']))
}
registerFormat('isbn', fakeIsbn)
const spaced = (characters: string[], separator: string): string => separator === '' ? characters.join('') : [characters.slice(0, 3).join(''), characters.slice(3).join('')].join(separator)

/** The schema validator a contract tool would use: any JSON Schema validator with the contract's formats. */
export const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true })
/** Query values arrive as text, and a lone value of an exploded array parameter as that value alone: validated as a server sees them. */
const wireAjv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true, coerceTypes: 'array' })
addFormats.default(wireAjv)
addFormats.default(ajv)
ajv.addFormat('isbn', { type: 'string', validate: isIsbn })

/** `node` with every `$ref` replaced by its target, so the generator and the validator need no document. */
export function inline (node: unknown, document: Json): any {
  if (Array.isArray(node)) return node.map(n => inline(n, document))
  if (node === null || typeof node !== 'object') return node
  const ref = (node as Json)['$ref']
  if (typeof ref === 'string') return inline(ref.slice(2).split('/').reduce<Json>((n, s) => n[s], document), document)
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v, document)]))
}

interface Parameter { name: string, in: 'path' | 'query' | 'header', required: boolean, schema: Json, validate: ValidateFunction }
interface Operation {
  id: string
  method: string
  path: string
  parameters: Parameter[]
  /** What the generator fills (every field but the path's id), the whole schema's validator, and the path's id field if the body has one. */
  body?: { schema: Json, validate: ValidateFunction, idField: string | undefined }
  openToAnonymous: boolean
  /** The resource an operation acts on, and whether on its collection or one record. */
  resource: string
  onItem: boolean
}

/**
 * Whether a request body's property is the record's id, named as in the path: a replacement takes it
 * back as read, but only as the path's id, so the generator leaves it out (a round trip sends the
 * record's own, now and then another). The timestamps a replacement may carry are generated like any
 * other field: the schema allows any, and the service ignores them whatever they hold.
 */
const pathId = (name: string, path: string): boolean => path.includes(`{${name}}`)

/** `schema` without the path's id. */
function withoutPathId (schema: Json, path: string): Json {
  const properties = Object.fromEntries(Object.entries<Json>(schema['properties']).filter(([name]) => !pathId(name, path)))
  return { ...schema, properties }
}

function operationsOf (document: Json): Operation[] {
  // Imports take files and run as jobs, and exports stream files, which this model of single JSON
  // requests does not follow: test/imports.test.ts and test/export.test.ts generate theirs.
  return Object.entries<Json>(document['paths']).filter(([path]) => !path.startsWith('/imports') && !path.includes('/export.')).flatMap(([path, item]) =>
    Object.entries<Json>(item).filter(([method]) => method !== 'parameters').map(([method, operation]) => {
      // A deprecated parameter is not one a client of this contract sends (Prism calls its use a violation).
      const parameters = [...item['parameters'] ?? [], ...operation['parameters'] ?? []].filter((p: Json) => inline(p, document).deprecated !== true).map((p: Json): Parameter => {
        const parameter = inline(p, document)
        return { ...parameter, required: parameter.required === true, validate: (parameter.in === 'query' ? wireAjv : ajv).compile(parameter.schema) }
      })
      const schema = operation['requestBody'] && inline(operation['requestBody'], document).content['application/json'].schema
      const idField = schema === undefined ? undefined : Object.keys(schema.properties).find(name => pathId(name, path))
      return {
        id: operation['operationId'],
        method: method.toUpperCase(),
        path,
        parameters,
        ...(schema && { body: { schema: withoutPathId(schema, path), validate: ajv.compile(schema), idField } }),
        openToAnonymous: (operation['security'] as Json[]).some(requirement => Object.keys(requirement).length === 0),
        resource: path.replace(/\/\{\w+\}.*$/, ''),
        onItem: path.includes('{')
      }
    }))
}

/** A value generated from `schema`, seeded. */
export const fake = (schema: Json, seed: number): any => generateSync(schema, { seed, alwaysFakeOptionals: false, optionalsProbability: 0.6, useExamplesValue: false })

/** A JSON type that `schema` does not allow, and a value of it. */
function wrongTyped (schema: Json, seed: number): unknown {
  const allowed = [schema['type'] ?? []].flat()
  const others = ['string', 'integer', 'number', 'boolean', 'null', 'array', 'object'].filter(type => !allowed.includes(type) && !(type === 'number' && allowed.includes('integer')))
  const type = others[seed % others.length]!
  return fake(type === 'number' ? { type, multipleOf: 0.25, not: { multipleOf: 1 } } : { type, maxLength: 20, maxItems: 2, maxProperties: 2 }, seed)
}

/** A value that breaks one rule of `schema` (its type, a bound, its pattern or format), or, by chance, happens not to. */
function breaking (schema: Json, seed: number): unknown {
  const rules = [
    () => wrongTyped(schema, seed),
    ...(schema['maxLength'] === undefined ? [] : [() => fake({ type: 'string', minLength: schema['maxLength'] + 1, maxLength: schema['maxLength'] + 3000 }, seed)]),
    ...(schema['minLength'] > 0 ? [() => ''] : []),
    ...(schema['maximum'] === undefined ? [] : [() => schema['maximum'] + 1 + (seed % 1000)]),
    ...(schema['minimum'] === undefined ? [] : [() => schema['minimum'] - 1 - (seed % 1000)]),
    ...(schema['pattern'] === undefined && schema['format'] === undefined && schema['enum'] === undefined
      ? []
      : [() => fake({ type: 'string', minLength: schema['minLength'] ?? 0, maxLength: schema['maxLength'] ?? 30 }, seed)]),
    // A right-looking ISBN with a wrong check digit.
    ...(schema['format'] === 'isbn' ? [() => String(fake(schema, seed)).replace(/.$/, last => last === '0' ? '1' : '0')] : [])
  ]
  return rules[seed % rules.length]!()
}

/** Text with any Unicode: astral characters, combining marks, controls, NUL. */
const unicodeText = (minLength: number, maxLength: number, seed: number): string =>
  fc.sample(fc.string({ unit: 'binary', minLength, maxLength: Math.min(maxLength, 60) }), { seed, numRuns: 1 })[0]!

/** A schema-valid body, sometimes with text fields in any Unicode instead of the generator's ASCII. */
function validBody (schema: Json, seed: number): Json {
  const body: Json = fake(schema, seed)
  for (const [name, property] of Object.entries<Json>(schema['properties'])) {
    const plainText = property['type'] === 'string' && property['pattern'] === undefined && property['format'] === undefined && property['enum'] === undefined
    if (plainText && name in body && seed % 3 === 0) body[name] = unicodeText(property['minLength'] ?? 0, property['maxLength'], seed)
  }
  return body
}

/** A body that is likely invalid: one field broken, a required one missing, an unknown one, or not an object. */
function invalidBody (schema: Json, seed: number): unknown {
  const body = validBody(schema, seed)
  const fields = Object.keys(schema['properties'])
  const field = fields[seed % fields.length]!
  switch (seed % 5) {
    case 0: return { ...body, [field]: breaking(schema['properties'][field], seed) }
    case 1: return Object.fromEntries(Object.entries(body).filter(([name]) => name !== schema['required'][seed % schema['required'].length]))
    case 2: return { ...body, [fake({ type: 'string', minLength: 1, maxLength: seed % 7 === 0 ? 2000 : 30 }, seed)]: 1 }
    case 3: return wrongTyped({ type: 'object' }, seed)
    default: return { ...body, [field]: breaking(schema['properties'][field], seed + 1) }
  }
}

/** What the model knows of one stored record: its last answer, tag and unique value. */
interface Known { id: string, etag: string, unique: string | null, record: Json }

/** The service as a model: which records exist, their tags, and the unique values they hold. */
class Model {
  readonly records = new Map<string, Map<string, Known>>()
  /** Keys of creates that succeeded, scoped to their operation as the service scopes them. */
  readonly idempotencyKeys = new Set<string>()
  of (resource: string): Map<string, Known> {
    let records = this.records.get(resource)
    if (records === undefined) this.records.set(resource, records = new Map())
    return records
  }
}

/** The unique value of a body (a book's isbn in 13-digit form, a student's email ignoring case), as the service compares them. */
function uniqueOf (body: Json): string | null {
  if (typeof body['email'] === 'string') return body['email'].toLowerCase()
  if (typeof body['isbn'] === 'string') return body['isbn'].replace(/[- ]/g, '').toUpperCase()
  return null
}
const sameUnique = (a: string | null, b: string | null): boolean => a !== null && b !== null && (a === b || isbn13(a) === isbn13(b))
const isbn13 = (isbn: string): string => isbn.length === 10 ? '978' + isbn.slice(0, 9) : isbn

interface Case {
  operation: Operation
  method: string
  url: string
  headers: Record<string, string>
  payload?: string
  /** Statuses the model accepts for this request. */
  expected: number[]
  /** What was sent is schema-valid, so that a 400 would refuse a request the contract allows. */
  valid: boolean
  body?: Json
}

/** Independent random draws for the decisions of one case, from fast-check's seeded generator. */
function drawsOf (seed: number): (choices: number) => number {
  const draws = fc.sample(fc.array(fc.nat(), { minLength: 16, maxLength: 16 }), { seed, numRuns: 1 })[0]!
  let next = 0
  return choices => draws[next++ % draws.length]! % choices
}

/** Strips the structured-field quotes: the service treats `"k"` and `k` as the same key. */
const bareKey = (key: string): string => key.replace(/^"(.*)"$/s, '$1')

/** One request for `operation`: valid or not by chance, with expectations from the model. */
function plan (operation: Operation, model: Model, seed: number): Case {
  const draw = drawsOf(seed)
  const existing = [...model.of(operation.resource).values()]
  const known = existing.length > 0 && draw(3) !== 0 ? existing[draw(existing.length)]! : undefined
  // Half the cases break one part of the request; whether they did is the validator's call, not this one's.
  const breakPart = draw(2) === 0 ? (['path', 'query', 'header', 'body'] as const)[draw(4)] : undefined
  let valid = true
  const check = (validate: ValidateFunction, value: unknown): void => { if (!validate(value)) valid = false }

  let url = operation.path
  const query: string[] = []
  const headers: Record<string, string> = {}
  for (const parameter of operation.parameters) {
    const broken = breakPart === parameter.in
    if (parameter.in === 'path') {
      const value = broken ? String(fake({ type: 'string', minLength: 1, maxLength: draw(5) === 0 ? 5000 : 60 }, seed)) : known?.id ?? fake(parameter.schema, seed)
      check(parameter.validate, value)
      url = url.replace(`{${parameter.name}}`, encodeURIComponent(value))
    } else if (parameter.in === 'query') {
      // A cursor is opaque: only one a list issued is meaningful, and the lists are walked elsewhere (the feed's in events.test.ts).
      if (parameter.name === 'cursor' || parameter.name === 'after' || (!broken && draw(2) === 0)) continue
      const value = broken ? breaking(parameter.schema, seed) : fake(parameter.schema, seed)
      // An array parameter is sent exploded (`author=a&author=b`), as openapi.yaml's style says.
      const values = (parameter.schema['type'] === 'array' && Array.isArray(value) ? value as unknown[] : [value]).map(v => typeof v === 'string' ? v : JSON.stringify(v))
      if (values.length > 0) check(parameter.validate, parameter.schema['type'] === 'array' ? values : values[0])
      for (const text of values) query.push(`${parameter.name}=${encodeURIComponent(text)}`)
    } else {
      const name = parameter.name.toLowerCase()
      const choice = draw(3)
      // Last-Event-ID is a feed position: opaque, as a cursor is.
      if (choice === 0 || name === 'last-event-id') continue
      if (broken) headers[name] = String(breaking({ ...parameter.schema, type: 'string' }, seed)).replace(/[^ -~]/g, '')
      else if (choice === 1 && known !== undefined && name.startsWith('if-')) headers[name] = known.etag
      else headers[name] = String(fake(parameter.schema, seed))
      check(parameter.validate, headers[name])
    }
  }
  // Names the contract does not declare are refused, so that a misspelt parameter never passes silently.
  if (breakPart === 'query' && draw(2) === 0) {
    query.push(`${encodeURIComponent(fake({ type: 'string', minLength: 1, maxLength: draw(5) === 0 ? 3000 : 40 }, seed))}=1`)
    valid = false
  }
  if (query.length > 0) url += `?${query.join('&')}`

  let body: Json | undefined
  let payload: string | undefined
  let idChanged = false
  if (operation.body !== undefined) {
    let sent = breakPart === 'body' ? invalidBody(operation.body.schema, seed) : validBody(operation.body.schema, seed)
    // The round trip of a PUT: the record as read (its id, and its timestamps unless others were generated),
    // some fields changed; now and then its id changed too.
    const { idField } = operation.body
    if (idField !== undefined && known !== undefined && breakPart === undefined && draw(3) === 0) {
      const roundTrip: Json = { ...known.record, ...sent as Json }
      if (draw(3) === 0) {
        roundTrip[idField] = fake({ type: 'string', format: 'uuid' }, seed)
        idChanged = roundTrip[idField] !== known.record[idField]
      }
      sent = roundTrip
    }
    check(operation.body.validate, sent)
    payload = JSON.stringify(sent)
    headers['content-type'] = 'application/json'
    if (typeof sent === 'object' && sent !== null && !Array.isArray(sent)) body = sent as Json
  }

  const anonymous = draw(10) === 0
  if (!anonymous) headers['authorization'] = `Bearer ${adminKey}`
  // A stream that opens never ends by itself: whether it would open is asked with HEAD.
  const method = operation.method === 'GET' && (draw(5) === 0 || operation.id === 'streamEvents') ? 'HEAD' : operation.method
  const expected = anonymous && !operation.openToAnonymous
    ? [401]
    : !valid ? [400] : bodyChecked(expectations(operation, model, url, headers, body), idChanged)
  return { operation, method, url, headers, ...(payload !== undefined && { payload }), expected, valid, ...(body && { body }) }
}

/**
 * An id other than the path's is refused, as the replacement schema's description says, once 404 and
 * If-Match's 412 are out of the way (RFC 9110 §13.2.1: preconditions before the content). The timestamps
 * a replacement carries change nothing: whatever they hold, the record keeps its own.
 */
function bodyChecked (expected: number[], idChanged: boolean): number[] {
  return idChanged && !expected.includes(404) && !expected.includes(412) ? [400] : expected
}

/** The id in an item's URL: the segment where the path has its parameter. */
function itemId (operation: Operation, url: string): string {
  const at = operation.path.split('/').findIndex(segment => segment.startsWith('{'))
  return decodeURIComponent(url.split('?')[0]!.split('/')[at]!)
}

/** The statuses a schema-valid request may get, given what the model knows. */
function expectations (operation: Operation, model: Model, url: string, headers: Record<string, string>, body: Json | undefined): number[] {
  const records = model.of(operation.resource)
  const target = operation.onItem ? records.get(itemId(operation, url)) : undefined
  if (operation.resource === '/events') return [200]
  if (operation.resource === '/webhook-endpoints') {
    // Whether a URL may be delivered to is the address policy's call (its own tests); what is checked
    // here is that a schema-valid body is refused only as a refused URL or as one endpoint too many.
    if (!operation.onItem) return operation.method === 'GET' ? [200] : [201, 400, 409]
    if (target === undefined) return [404]
    return operation.method === 'DELETE' ? [204] : [200]
  }
  const unique = body === undefined ? null : uniqueOf(body)
  const taken = [...records.values()].some(r => r !== target && sameUnique(r.unique, unique))
  const ifMatch = headers['if-match']
  const matches = ifMatch === undefined || ifMatch.trim() === '*' || (target !== undefined && ifMatch.includes(target.etag))
  switch (operation.method) {
    case 'GET':
      if (!operation.onItem) return listExpectations(url)
      if (target === undefined) return [404]
      return headers['if-none-match']?.includes(target.etag) === true || headers['if-none-match']?.trim() === '*' ? [304] : [200]
    case 'POST': {
      const key = headers['idempotency-key']
      if (key !== undefined && model.idempotencyKeys.has(`${operation.id} ${bareKey(key)}`)) return [201, 422]
      return taken ? [409] : [201]
    }
    case 'PUT':
      if (target === undefined) return [404]
      if (!matches) return [412]
      return taken ? [409] : [200]
    default:
      if (target === undefined) return [404]
      return matches ? [204] : [412]
  }
}

/** A schema-valid list query is still refused when it cannot mean anything (see openapi.yaml's ListBadRequest). */
function listExpectations (url: string): number[] {
  const query = new URLSearchParams(url.split('?')[1] ?? '')
  const q = query.get('q')
  if (q !== null) {
    try {
      parseSearch(q)
    } catch {
      return [400]
    }
  }
  if (query.get('sort') === 'relevance' && q === null) return [400]
  // `bom` belongs to a CSV export; these requests ask for pages of JSON.
  if (query.has('bom')) return [400]
  for (const [min, max] of [['published_year_min', 'published_year_max'], ['enrollment_year_min', 'enrollment_year_max']] as const) {
    if (query.has(min) && query.has(max) && Number(query.get(min)) > Number(query.get(max))) return [400]
  }
  const since = query.get('updated_since')
  const before = query.get('updated_before')
  if (since !== null && before !== null) {
    const gap = Date.parse(before) - Date.parse(since)
    // Below a millisecond, the service's rounding to its timestamps' precision decides.
    if (Math.abs(gap) < 1) return [200, 400]
    if (gap < 0) return [400]
  }
  return [200]
}

/** What is wrong with a replacement's answer if it took a timestamp from the body: the record keeps its created_at, the server sets updated_at. */
function timestampsIgnored (model: Model, c: Case, answer: Json): string[] {
  const before = model.of(c.operation.resource).get(itemId(c.operation, c.url))?.record
  if (before === undefined) return []
  const problems: string[] = []
  if (answer['created_at'] !== before['created_at']) problems.push(`the answer's created_at is ${answer['created_at']}, the record's ${before['created_at']}`)
  const sent = c.body?.['updated_at']
  if (sent !== undefined && sent !== before['updated_at'] && answer['updated_at'] === sent) problems.push('the updated_at sent was stored')
  return problems
}

/** Tells the model what a request the service answered as expected changed. */
function learn (model: Model, c: Case, status: number, response: { headers: Record<string, unknown>, json: () => any }): void {
  const records = model.of(c.operation.resource)
  const etag = String(response.headers['etag'])
  if (status === 201) {
    // A new webhook endpoint comes with its secret, beside it.
    const answer = response.json()
    const record = answer.endpoint ?? answer
    const id = String(record[Object.keys(record)[0]!])
    records.set(id, { id, etag, unique: uniqueOf(c.body!), record })
    if (c.headers['idempotency-key'] !== undefined) model.idempotencyKeys.add(`${c.operation.id} ${bareKey(c.headers['idempotency-key'])}`)
  } else if (status === 200 && c.method === 'PUT') {
    const id = decodeURIComponent(c.url.split('?')[0]!.split('/').pop()!)
    records.set(id, { id, etag, unique: uniqueOf(c.body!), record: response.json() })
  } else if (status === 204) {
    records.delete(itemId(c.operation, c.url))
  }
}

/**
 * Sends `casesPerOperation` generated requests per operation of the served contract, from `seed`, under
 * both PUBLIC_BOOK_READS settings; with `secondOpinion`, Prism's validators check every exchange too.
 */
export function exploreBothSettings (t: Test, name: string, seed: number, secondOpinion: boolean): void {
  for (const publicBookReads of [true, false]) {
    t.test(`${name} seed ${seed}, PUBLIC_BOOK_READS=${publicBookReads}: random requests from the served contract${secondOpinion ? ', checked by Prism too' : ''}`,
      async t => explore(t, seed, publicBookReads, secondOpinion))
  }
}

async function explore (t: Test, seed: number, publicBookReads: boolean, secondOpinion: boolean): Promise<void> {
  // Every host name resolves to a public address (documentation's 192.0.2.0/24 would be refused): nothing is asked of DNS, and nothing delivered.
  const resolve = async () => [{ address: '93.184.215.14', family: 4 }]
  const { app } = await build(t, { publicBookReads, rateLimit: { requests: 1e9, seconds: 60 }, rateLimitAnonymous: { requests: 1e9, seconds: 60 }, webhookPollInterval: 0 }, { resolve })
  // The document a contract tool reads: the one the service serves, which follows its configuration.
  const served: Json = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const operations = operationsOf(served)
  const prism: PrismCheck | null = secondOpinion ? await prismChecker(served) : null
  const model = new Model()
  const divergences: string[] = []
  const statuses = new Map<string, Map<number, number>>()
  // Operations take turns, so that every one of them meets records the others made.
  for (let i = 0; i < casesPerOperation * operations.length && divergences.length < 10; i++) {
    const c = plan(operations[i % operations.length]!, model, seed + i)
    const res = await app.inject({ method: c.method as 'GET', url: c.url, headers: c.headers, ...(c.payload !== undefined && { payload: c.payload }) })
    const seen = statuses.get(c.operation.id) ?? new Map<number, number>()
    statuses.set(c.operation.id, seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1))
    const problems = contractProblems(c.method, c.url, res, c.headers)
    if (prism !== null) problems.push(...prism(c, res, c.valid))
    if (c.valid && c.operation.id === 'createWebhookEndpoint' && res.statusCode === 400 && res.json().type !== '/problems/refused-webhook-url') {
      problems.push(`a schema-valid registration was refused as ${res.json().type}, not as a refused URL`)
    }
    if (!c.expected.includes(res.statusCode)) {
      problems.push(c.valid
        ? `a schema-valid request got ${res.statusCode}, expected ${c.expected.join(' or ')}`
        : `a schema-invalid request got ${res.statusCode}, expected ${c.expected.join(' or ')}`)
    }
    if (res.statusCode === 200 && c.method === 'PUT') problems.push(...timestampsIgnored(model, c, res.json()))
    if (problems.length > 0) {
      divergences.push(`case ${i} (seed ${seed + i}): ${c.method} ${c.url.slice(0, 200)} ${c.payload?.slice(0, 300) ?? ''}\n  → ${res.statusCode} ${res.payload.slice(0, 300)}\n  ${problems.join('\n  ')}`)
      continue
    }
    learn(model, c, res.statusCode, res)
    // What was written reads back exactly as the write answered it, whatever Unicode it held.
    if (res.statusCode === 201 || (res.statusCode === 200 && c.method === 'PUT')) {
      const location = res.statusCode === 201 ? String(res.headers['location']) : c.url.split('?')[0]!
      const read = await app.inject({ method: 'GET', url: location, headers: { authorization: `Bearer ${adminKey}` } })
      // A registered webhook endpoint is answered with its secret beside it; a read shows the endpoint alone.
      const written = c.operation.id === 'createWebhookEndpoint' ? JSON.stringify(res.json().endpoint) : res.payload
      if (read.payload !== written) divergences.push(`case ${i}: ${location} reads back ${read.payload.slice(0, 200)}, the write answered ${res.payload.slice(0, 200)}`)
    }
  }
  t.same(divergences, [], `${casesPerOperation} requests per operation conform to the served contract`)
  for (const operation of operations) {
    const seen = statuses.get(operation.id)!
    t.ok([...seen.keys()].some(s => s < 300) && seen.has(400), `${operation.id}: successes and refusals both met (${[...seen].map(([s, n]) => `${s}×${n}`).join(' ')})`)
  }
}
