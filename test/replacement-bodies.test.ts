// Replacement bodies generated from the served contract's own BookReplacement and StudentReplacement, on SQLite
// and on PostgreSQL: every body its schema accepts is replaced (issue 40: a schema-valid body is never refused
// for a value its schema allows), its writable fields as sent, its timestamps ignored whatever they hold.
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import type { Response as InjectResponse } from 'light-my-request'
import { toIsbn13 } from '../src/domain/isbn.js'
import type { Config } from '../src/config/index.js'
import { contractProblems } from './contract.js'
import { adminKey, build } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'
import { ajv, fake, inline } from './schema-property.js'

type Json = Record<string, any>

const seed = 20261205
const runsPerSchema = 150

interface Resource {
  schema: 'BookReplacement' | 'StudentReplacement'
  path: string
  idField: string
  /** A body for the record each run creates and then replaces. */
  created: (run: number) => Json
  /** Books can be deleted, which frees their ISBN for the runs after; students never are. */
  deletable: boolean
}

const resources: Resource[] = [
  { schema: 'BookReplacement', path: '/books', idField: 'book_id', created: () => ({ title: 'To be replaced', author: 'Nobody' }), deletable: true },
  { schema: 'StudentReplacement', path: '/api/students', idField: 'student_id', created: run => ({ name: 'To be replaced', email: `created-${run}@replacement.example` }), deletable: false }
]

/** A property's schema with an `allOf` of one (a `$ref` given a description of its own) merged into it. */
function flat (schema: Json): Json {
  const { allOf, ...rest } = schema
  return Array.isArray(allOf) && allOf.length === 1 ? { ...allOf[0], ...rest } : schema
}

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0')
const earliest = Date.parse('0000-01-02T00:00:00.000Z')
const latest = Date.parse('9999-12-30T23:59:59.999Z')
const day = 86_400_000

/**
 * A `format: date-time` value (RFC 3339, as ajv-formats reads it) in any of its notations, within
 * `maxLength`: T, t or a space between date and time, none to nine fraction digits, Z, z or an offset
 * of up to ±23:59 with or without its colon, and now and then a leap second (23:59:60 UTC in the
 * offset's local time).
 */
function dateTime (maxLength: number): fc.Arbitrary<string> {
  const zone = fc.oneof(fc.constantFrom('Z', 'z'), fc.record({ minutes: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), colon: fc.boolean() }))
  return fc.record({
    instant: fc.integer({ min: earliest, max: latest }),
    separator: fc.constantFrom('T', 't', ' '),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/)),
    zone,
    leapSecond: fc.nat(7).map(n => n === 0)
  }).map(({ instant, separator, fraction, zone, leapSecond }) => {
    const offset = typeof zone === 'string' ? 0 : zone.minutes
    const utc = leapSecond ? Math.floor(instant / day) * day + (23 * 60 + 59) * 60_000 : instant
    const local = new Date(utc + offset * 60_000).toISOString()
    const time = leapSecond ? `${local.slice(11, 17)}60` : local.slice(11, 19)
    const zoneText = typeof zone === 'string' ? zone : `${offset < 0 ? '-' : '+'}${pad(Math.trunc(offset / 60))}${zone.colon ? ':' : ''}${pad(offset % 60)}`
    const whole = `${local.slice(0, 10)}${separator}${time}`
    const room = maxLength - whole.length - zoneText.length - 1
    return `${whole}${fraction !== null && room > 0 ? `.${fraction.slice(0, room)}` : ''}${zoneText}`
  })
}

/** A seeded value of json-schema-faker for `schema` (its formats, `isbn` included, as test/schema-property.ts registers them). */
const faked = (schema: Json): fc.Arbitrary<unknown> => fc.integer({ min: 0, max: 2 ** 31 - 1 }).map(s => fake(schema, s))

/** Any value `schema` (one property's) allows, from the generator that knows its format best. */
function valueOf (schema: Json): fc.Arbitrary<unknown> {
  const types = [schema['type'] ?? []].flat() as string[]
  if (types.includes('null') && types.length > 1) return fc.oneof(fc.constant(null), valueOf({ ...schema, type: types.filter(type => type !== 'null') }))
  if (schema['format'] === 'date-time') return fc.oneof(dateTime(schema['maxLength'] ?? 64), faked(schema))
  // Text without a format: any Unicode too (astral characters, controls), not only the generator's ASCII.
  if (types.includes('string') && schema['format'] === undefined && schema['enum'] === undefined) {
    const validate = ajv.compile(schema)
    return fc.oneof(faked(schema), fc.string({ unit: 'binary', minLength: schema['minLength'] ?? 0, maxLength: Math.min(schema['maxLength'] ?? 60, 60) }).filter(text => validate(text)))
  }
  return faked(schema)
}

/** The id sent in a body: the path's, in one of the letter cases a UUID may be written in. */
const idCases = { lower: (id: string) => id, upper: (id: string) => id.toUpperCase(), mixed: (id: string) => id.replace(/[a-f]/g, (c, i: number) => i % 2 === 0 ? c.toUpperCase() : c) }

/** Bodies of `schema`: every optional field present or absent, the id field (when present) a letter case of the path's id. */
function bodies (schema: Json, idField: string): fc.Arbitrary<Json> {
  const fields = Object.fromEntries(Object.entries<Json>(schema['properties']).map(([name, property]) =>
    [name, name === idField ? fc.constantFrom(...Object.keys(idCases)) : valueOf(flat(property))]))
  return fc.record(fields, { requiredKeys: schema['required'] })
}

/** How the service keeps a writable field, where it does not keep it as sent. */
const kept: Record<string, (sent: any) => unknown> = { isbn: (isbn: string | null) => isbn === null ? null : toIsbn13(isbn) }

/** The record a replacement by `body` must answer: the path's id, each writable field as sent (or its default, or null). */
function expectedRecord (schema: Json, idField: string, id: string, body: Json): Json {
  const expected: Json = {}
  for (const [name, property] of Object.entries<Json>(schema['properties'])) {
    if (name === idField) expected[name] = id
    else if (flat(property)['format'] !== 'date-time') {
      const value = name in body ? body[name] : flat(property)['default'] ?? null
      expected[name] = kept[name]?.(value) ?? value
    }
  }
  return expected
}

const serverTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const withoutTimestamps = (record: Json): Json => Object.fromEntries(Object.entries(record).filter(([name]) => name !== 'created_at' && name !== 'updated_at'))

async function explore (t: Test, storage: Partial<Config>): Promise<void> {
  const { app } = await build(t, { ...storage, rateLimit: { requests: 1e9, seconds: 60 } })
  const served: Json = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const send = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Json, ifMatch?: string): Promise<InjectResponse> => {
    const headers: Record<string, string> = { authorization: `Bearer ${adminKey}`, ...(ifMatch !== undefined && { 'if-match': ifMatch }) }
    const res = await app.inject({ method, url, headers, ...(payload !== undefined && { payload }) })
    const problems = contractProblems(method, url, res, headers)
    if (problems.length > 0) throw new Error(`${method} ${url} → ${res.statusCode} breaks the contract: ${problems.join('; ')}`)
    return res
  }

  for (const { schema: name, path, idField, created, deletable } of resources) {
    await t.test(`${name}: every body the served schema accepts replaces the record; its timestamps are ignored`, async t => {
      const schema = inline(served['components']['schemas'][name], served)
      const validate = ajv.compile(schema)
      let run = 0
      await fc.assert(fc.asyncProperty(bodies(schema, idField), async plan => {
        run++
        const made = await send('POST', path, created(run))
        if (made.statusCode !== 201) throw new Error(`the record to replace was not created: ${made.statusCode} ${made.payload}`)
        const record = made.json()
        const id: string = record[idField]
        const url = `${path}/${id}`
        const body: Json = { ...plan }
        if (idField in body) body[idField] = idCases[plan[idField] as keyof typeof idCases](id)
        // Emails are unique among students: each run's is its own, as a generated one alone would not be.
        if (typeof body['email'] === 'string') body['email'] = `r${run}.${body['email']}`
        if (!validate(body)) throw new Error(`the generator made a body ${name} refuses: ${ajv.errorsText(validate.errors)}`)
        const expected = expectedRecord(schema, idField, id, body)

        /** A PUT of `body`: 200 with the writable fields as sent, the record's created_at, the server's updated_at, and that is what a GET reads. */
        const replace = async (ifMatch: string | undefined, previous: Json): Promise<InjectResponse> => {
          const before = new Date().toISOString()
          const res = await send('PUT', url, body, ifMatch)
          const after = new Date().toISOString()
          const how = ifMatch === undefined ? 'without If-Match' : 'with the current If-Match'
          if (res.statusCode !== 200) throw new Error(`${how}: ${res.statusCode} ${res.payload}`)
          const answer = res.json()
          if (!isDeepStrictEqual(withoutTimestamps(answer), expected)) {
            throw new Error(`${how}: answered ${JSON.stringify(withoutTimestamps(answer))}, expected ${JSON.stringify(expected)}`)
          }
          if (answer.created_at !== record.created_at) throw new Error(`${how}: created_at became ${answer.created_at}, the record's is ${record.created_at}`)
          if (!serverTime.test(answer.updated_at) || answer.updated_at < before || answer.updated_at > after || answer.updated_at < previous['updated_at']) {
            throw new Error(`${how}: updated_at ${answer.updated_at} is not the server's (written between ${before} and ${after}, after ${previous['updated_at']})`)
          }
          const read = await send('GET', url)
          if (read.payload !== res.payload) throw new Error(`${how}: reads back ${read.payload}, the PUT answered ${res.payload}`)
          return res
        }
        const blind = await replace(undefined, record)
        const current = await replace(blind.headers.etag as string, blind.json())
        // A stale tag stays a 412, whatever the body holds, and writes nothing.
        const stale = await send('PUT', url, body, made.headers.etag as string)
        if (stale.statusCode !== 412) throw new Error(`with a stale If-Match: ${stale.statusCode} ${stale.payload}`)
        if ((await send('GET', url)).headers.etag !== current.headers.etag) throw new Error('the PUT with a stale If-Match wrote')
        if (deletable && (await send('DELETE', url, undefined, current.headers.etag as string)).statusCode !== 204) throw new Error('the replaced book was not deleted')
      }), { seed, numRuns: runsPerSchema })
      t.equal(run, runsPerSchema, `${runsPerSchema} generated bodies, each PUT without and with If-Match: 200, as sent`)
    })
  }
}

t.test('SQLite', async t => explore(t, { databasePath: ':memory:' }))

await withPostgres(t, t => {
  t.test('PostgreSQL', async t => explore(t, { postgresUrl: await testDatabase(t), recordCacheSize: 0 }))
})
