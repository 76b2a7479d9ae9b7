// Issue 12 over HTTP, the same on every engine (list-query.*.test.ts): filters, sorts and search against a plain
// in-memory reference, cursor walks while writes happen, every query error, Link headers, scopes, hostile q, migration.
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import type { Response as InjectResponse } from 'light-my-request'
import type { Test } from 'tap'
import { uuidv7 } from 'uuidv7'
import { createKey } from '../src/access/api-keys.js'
import { bookFields, studentFields } from '../src/domain/records.js'
import { fold } from '../src/domain/search/fold.js'
import { matchesSearch, parseSearch, printSearch, relevanceTier, type SearchQuery, SearchSyntaxError } from '../src/domain/search/query.js'
import { defaultListLimits, type ListLimits } from '../src/storage/list-sql.js'
import type { Repositories } from '../src/storage/types.js'
import { contractProblems } from './contract.js'
import { adminKey, build } from './helper.js'

type Json = Record<string, any>
type Params = [string, string][]

/** Small enough that a few dozen records reach every access path of list-sql.ts. */
export const tinyLimits: ListLimits = { cap: 3 }

// Fixed, as the other property tests are; LIST_QUERY_SEED explores other data sets and queries.
const seed = Number(process.env.LIST_QUERY_SEED ?? 20261212)

export interface Engine {
  /** Repositories on a fresh, empty database that lives as long as `t`. */
  open (t: Test, listLimits?: ListLimits): Promise<Repositories>
  /**
   * A database built at schema version 3 (migrations 1–3 only) holding `rows`, then opened by the
   * service, which migrates it, telling `onMigrationProgress` how the backfill goes.
   */
  openVersion3 (t: Test, rows: Version3Rows, onMigrationProgress: (line: string) => void): Promise<Repositories>
}

// --- The service under test, driven through HTTP ------------------------------------------------

export interface Service {
  repositories: Repositories
  /** app.inject with the admin key (or `key`, null for none); throws when the answer breaks openapi.yaml. */
  call (method: string, url: string, options?: { payload?: unknown, key?: string | null }): Promise<InjectResponse>
  close (): Promise<void>
}

// Thousands of requests per test: the rate limit is not what these tests are about.
const unlimited = { requests: 1e9, seconds: 60 }

export async function startService (t: Test, repositories: Repositories): Promise<Service> {
  const { app } = await build(t, { rateLimit: unlimited, rateLimitAnonymous: unlimited }, { repositories })
  return {
    repositories,
    close: async () => { await app.close() },
    async call (method, url, { payload, key = adminKey } = {}) {
      const res = await app.inject({
        method: method as 'GET',
        url,
        headers: key === null ? {} : { authorization: `Bearer ${key}` },
        ...(payload !== undefined && { payload: payload as Json })
      })
      const problems = contractProblems(method, url, res)
      if (problems.length > 0) throw new Error(`${method} ${url} → ${res.statusCode} breaks openapi.yaml: ${problems.join('; ')}`)
      return res
    }
  }
}

/** Text safe in an assertion's name (tap ends the subtest at a raw U+2028 there): anything but printable ASCII as \\u{…}. */
const shown = (text: string): string => text.replace(/[^\x20-\x7e]/gu, c => `\\u{${c.codePointAt(0)!.toString(16)}}`)

export const listUrl = (path: string, params: Params): string => params.length === 0 ? path : `${path}?${new URLSearchParams(params).toString()}`

// --- The vocabulary: folds that collide, astral letters, an emoji fold drops --------------------

// 𐐨 (U+10428) and 﨎 (U+FA0E) are letters fold() keeps whose UTF-16 order (𐐨 first: a surrogate, D801) differs
// from their code-point and UTF-8 byte order (﨎 first), which is the order both engines sort keys in.
const titleWords = ['Dune', 'dune', 'DUNE', 'Düne', 'Ørsted', 'orsted', 'Straße', 'Messiah', 'strasse', 'STRASSE', 'Émile', 'Naïve', 'naive',
  'Æther', 'aether', '東京', '𐐀𐐨', '𐐨', '﨎', 'x2', '1965', 'A']
const authors = ['Frank Herbert', 'frank herbert', 'FRANK HERBERT', 'Frånk Hérbert', 'Hans Christian Ørsted', 'hans christian orsted',
  'Émile Zola', 'EMILE ZOLA', 'Straße', 'strasse', '𐐀𐐨', '﨎 東京', '😀']
const authorQueries = [...authors, 'frank-herbert', 'Frank  Herbert', 'Nobody']
const names = ['Ada Lovelace', 'ada lovelace', 'ÅDA LØVELACE', 'Grace Hopper', 'grace hopper', 'Émile Noether', 'Straße', 'strasse', '東京 Taro',
  '𐐀𐐨', '﨎', 'Dune', '😀']
export const searchWords = ['dune', 'Düne', 'DUNE', 'orsted', 'ØRSTED', 'strasse', 'frank', 'HERBERT', 'ada', 'Straße', 'messiah', 'émile', 'naive',
  'aether', 'Æther', '東京', '𐐨', '𐐀', '﨎', 'x2', '1965', 'a', 'zola', 'hans', 'lovelace', 'grace', 'taro', 'absent']
const bookSorts = ['created_at', '-created_at', 'updated_at', '-updated_at', 'title', '-title', 'author', '-author', 'published_year', '-published_year', 'relevance']
const studentSorts = ['created_at', '-created_at', 'updated_at', '-updated_at', 'name', '-name', 'enrollment_year', '-enrollment_year', 'relevance']
const statuses = ['active', 'graduated', 'withdrawn']

/** ISBN-13s with right check digits; the last is never given to a book. */
const isbnPool = Array.from({ length: 8 }, (_, n) => {
  const body = `978${String(n * 7919).padStart(9, '0')}`
  const sum = [...body].reduce((s, d, i) => s + Number(d) * (i % 2 === 0 ? 1 : 3), 0)
  return body + String((10 - sum % 10) % 10)
})

/** Mostly absent: a query with every parameter would match nothing. */
const maybe = <T>(arbitrary: fc.Arbitrary<T>, weight = 1): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight, arbitrary })

// The first few words of each list come up as often as all the others together, so that searches and filters
// match more than the tiny cap often enough.
const often = <T>(values: T[], common: number): fc.Arbitrary<T> =>
  fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...values.slice(0, common)) }, { weight: 1, arbitrary: fc.constantFrom(...values.slice(common)) })
const titleArb = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(fc.array(often(titleWords, 7), { minLength: 1, maxLength: 3 }), fc.constantFrom(' ', ' ', '-', ': '), fc.constantFrom('', '', '', ' 😀', '!')).map(([words, separator, tail]) => words.join(separator) + tail) },
  { weight: 1, arbitrary: fc.constant('😀') }
)
export const bookArb = fc.record({
  title: titleArb,
  author: often(authors, 4),
  isbn: fc.option(fc.nat(isbnPool.length - 2), { nil: null, freq: 3 }),
  hyphens: fc.boolean(),
  published_year: fc.constantFrom(null, null, -500, 0, 1965, 1965, 2001, 9999)
})
export type BookGen = typeof bookArb extends fc.Arbitrary<infer B> ? B : never
export const studentArb = fc.record({
  name: often(names, 3),
  upperEmail: fc.boolean(),
  enrollment_year: fc.constantFrom(null, 1800, 2020, 2020, 2021, 9999),
  status: fc.constantFrom(undefined, 'active', 'graduated', 'withdrawn')
})
export type StudentGen = typeof studentArb extends fc.Arbitrary<infer S> ? S : never
const changeArb = fc.record({ students: fc.boolean(), remove: fc.boolean(), target: fc.nat(60), book: bookArb, student: studentArb })

const datasetArb = fc.record({
  books: fc.array(bookArb, { minLength: 8, maxLength: 26 }),
  students: fc.array(studentArb, { minLength: 5, maxLength: 12 }),
  changes: fc.array(changeArb, { maxLength: 10 })
})
type Dataset = typeof datasetArb extends fc.Arbitrary<infer D> ? D : never

const word = often(searchWords, 9)
const plainSearch = fc.array(word, { minLength: 1, maxLength: 2 }).map(words => words.join(' '))
// The grammar of the real module; the stand-in reads these as plain words, and so does the reference through it.
const grammarSearch = fc.array(fc.oneof(
  word,
  fc.tuple(word, word).map(([a, b]) => `"${a} ${b}"`),
  word.map(w => `-${w}`),
  fc.tuple(word, word).map(([a, b]) => `${a} OR ${b}`),
  fc.constantFrom('du*', 'DÜN*', 'ors*', 'stra*', 'ém*', 'lo*', '東*', 'x*')
), { minLength: 1, maxLength: 3 }).map(parts => parts.join(' '))
// Nothing searchable in these: an invalid-search for either module.
const emptySearch = fc.constantFrom('😀', '!!!', '-', '*', '""')
const searchArb = fc.oneof({ weight: 6, arbitrary: plainSearch }, { weight: 3, arbitrary: grammarSearch }, { weight: 1, arbitrary: emptySearch })

interface InstantPick { pick: number, delta: number, fraction: string, zone: string }
const instantArb: fc.Arbitrary<InstantPick> = fc.record({
  pick: fc.nat(1000),
  delta: fc.constantFrom(-1, 0, 0, 1),
  // Digits past the millisecond: an instant between two of the service's timestamps.
  fraction: fc.constantFrom('', '', '000', '5', '999'),
  zone: fc.constantFrom('Z', 'Z', '+02:00', '-05:30')
})

const bookQueryArb = fc.record({
  q: maybe(searchArb, 2),
  author: maybe(fc.array(fc.constantFrom(...authorQueries), { minLength: 1, maxLength: 3 })),
  isbn: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat(isbnPool.length - 1) }),
  published_year_min: maybe(fc.constantFrom(-5000, -500, 0, 1965, 2000, 9999)),
  published_year_max: maybe(fc.constantFrom(-5000, -500, 0, 1965, 2000, 9999)),
  updated_since: maybe(instantArb),
  updated_before: maybe(instantArb),
  sort: maybe(fc.constantFrom(...bookSorts), 4),
  limit: fc.integer({ min: 1, max: 7 })
})
const studentQueryArb = fc.record({
  q: maybe(searchArb, 2),
  email: maybe(fc.record({ pick: fc.nat(20), variant: fc.constantFrom('lower', 'upper', 'same') })),
  status: maybe(fc.array(fc.constantFrom(...statuses), { minLength: 1, maxLength: 3 })),
  enrollment_year_min: maybe(fc.constantFrom(1800, 2000, 2020, 2021, 9999)),
  enrollment_year_max: maybe(fc.constantFrom(1800, 2000, 2020, 2021, 9999)),
  updated_since: maybe(instantArb),
  updated_before: maybe(instantArb),
  sort: maybe(fc.constantFrom(...studentSorts), 4),
  limit: fc.integer({ min: 1, max: 7 })
})
type BookQuery = typeof bookQueryArb extends fc.Arbitrary<infer Q> ? Q : never
type StudentQuery = typeof studentQueryArb extends fc.Arbitrary<infer Q> ? Q : never

// --- The reference: lists computed from the records in memory ------------------------------------

interface Stored { record: Json, seq: number }
/** What the database holds, as the reference knows it from the service's answers; seq is creation order. */
export interface Store {
  books: Map<string, Stored>
  students: Map<string, Stored>
  seq: number
  /** Every id ever created. */
  ids: Set<string>
}
export const emptyStore = (): Store => ({ books: new Map(), students: new Map(), seq: 0, ids: new Set() })

type Key = string | number
export interface Kind {
  name: 'books' | 'students'
  path: string
  idField: 'book_id' | 'student_id'
  /** The record's searched fields, as the service indexes them. */
  searched (r: Json): string[]
  /** Each sort's keys before creation order. */
  sorts: Record<string, (r: Json) => Key[]>
  equals: Record<string, { matches (r: Json, values: string[]): boolean, normalise (value: string): string }>
  ranges: { min: string, max: string, instants?: boolean, value (r: Json): number | null }[]
  seekable: Record<string, string[]>
  describe (r: Json): string
}

const updated = (r: Json): number => Date.parse(r.updated_at)

export const books: Kind = {
  name: 'books',
  path: '/books',
  idField: 'book_id',
  searched: r => [fold(r.title), fold(r.author)],
  sorts: {
    created_at: () => [],
    updated_at: r => [updated(r)],
    title: r => [fold(r.title)],
    author: r => [fold(r.author), fold(r.title)],
    published_year: r => [r.published_year ?? -Infinity]
  },
  equals: {
    author: { matches: (r, values) => values.some(v => fold(v) === fold(r.author)), normalise: fold },
    isbn: { matches: (r, values) => values.includes(r.isbn), normalise: v => v }
  },
  ranges: [
    { min: 'published_year_min', max: 'published_year_max', value: r => r.published_year },
    { min: 'updated_since', max: 'updated_before', instants: true, value: updated }
  ],
  seekable: { author: ['created_at', 'title', 'author'] },
  describe: r => `${JSON.stringify(r.title)} by ${JSON.stringify(r.author)}, ${r.published_year}, isbn ${r.isbn}, updated ${r.updated_at}`
}

export const students: Kind = {
  name: 'students',
  path: '/api/students',
  idField: 'student_id',
  searched: r => [fold(r.name)],
  sorts: {
    created_at: () => [],
    updated_at: r => [updated(r)],
    name: r => [fold(r.name)],
    enrollment_year: r => [r.enrollment_year ?? -Infinity]
  },
  equals: {
    email: { matches: (r, values) => values.some(v => v.toLowerCase() === r.email.toLowerCase()), normalise: v => v.toLowerCase() },
    status: { matches: (r, values) => values.includes(r.status), normalise: v => v }
  },
  ranges: [
    { min: 'enrollment_year_min', max: 'enrollment_year_max', value: r => r.enrollment_year },
    { min: 'updated_since', max: 'updated_before', instants: true, value: updated }
  ],
  seekable: { status: ['created_at', 'name'] },
  describe: r => `${JSON.stringify(r.name)} <${r.email}>, ${r.status}, ${r.enrollment_year}, updated ${r.updated_at}`
}

/** The exact instant an RFC 3339 text names, in (fractional) milliseconds: digits past the millisecond count. */
function exactInstant (text: string): number {
  return Date.parse(text) + Number(`0.${/\.\d{3}(\d*)/.exec(text)?.[1] ?? ''}0`)
}

/** Text keys compare as UTF-8 bytes (code points), as SQLite and PostgreSQL's COLLATE "C" compare them; not as JS's `<` (UTF-16 units). */
function compareKeys (a: Key[], b: Key[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    const c = typeof x === 'number' ? (x < (y as number) ? -1 : x > (y as number) ? 1 : 0) : Buffer.compare(Buffer.from(x), Buffer.from(y as string))
    if (c !== 0) return c
  }
  return 0
}

export type Expected =
  | { error: string, parameter: string }
  | { records: Json[], path: string }

/**
 * What the list should answer: the problem the query gets, or the records in order (relevance: by tier,
 * see relevanceTier, newest first within one). `path` names the access path list-sql.ts must take for it, to show the generators reach them all.
 */
export function expectList (kind: Kind, stored: Stored[], params: Params, limits: ListLimits): Expected {
  const values = (name: string): string[] => params.filter(([n]) => n === name).map(([, v]) => v)
  const q = values('q')[0]
  let search: SearchQuery | null = null
  if (q !== undefined) {
    try {
      search = parseSearch(q)
    } catch (error) {
      if (error instanceof SearchSyntaxError) return { error: 'invalid-search', parameter: 'q' }
      throw error
    }
  }
  const filters: ((r: Json) => boolean)[] = []
  for (const [name, { matches }] of Object.entries(kind.equals)) {
    const given = values(name)
    if (given.length > 0) filters.push(r => matches(r, given))
  }
  let ranges = 0
  for (const range of kind.ranges) {
    const [min, max] = [values(range.min)[0], values(range.max)[0]]
    if (min === undefined && max === undefined) continue
    ranges++
    const read = (text: string | undefined, open: number): number => text === undefined ? open : range.instants === true ? exactInstant(text) : Number(text)
    const [low, high] = [read(min, -Infinity), read(max, Infinity)]
    if (range.instants === true ? low >= high : low > high) return { error: 'invalid-range', parameter: range.min }
    filters.push(r => {
      const value = range.value(r)
      return value !== null && value >= low && (range.instants === true ? value < high : value <= high)
    })
  }
  const sortName = values('sort')[0] ?? (search === null ? 'created_at' : 'relevance')
  if (sortName === 'relevance' && search === null) return { error: 'unsupported-combination', parameter: 'sort' }
  const key = sortName.replace(/^-/, '')
  const descending = sortName.startsWith('-')
  const found = (r: Json): boolean => search === null || matchesSearch(search, kind.searched(r))
  const searchCount = search === null ? 0 : stored.filter(s => found(s.record)).length
  if (search !== null && key !== 'relevance' && key !== 'created_at' && searchCount > limits.cap) return { error: 'search-too-broad', parameter: 'sort' }
  const matching = stored.filter(s => found(s.record) && filters.every(f => f(s.record)))
  const tier = (s: Stored): number => relevanceTier(search!, kind.searched(s.record))
  const sorted = key === 'relevance'
    ? [...matching].sort((a, b) => tier(a) - tier(b) || b.seq - a.seq)
    : [...matching].sort((a, b) => {
        const c = compareKeys(kind.sorts[key]!(a.record), kind.sorts[key]!(b.record)) || a.seq - b.seq
        return descending ? -c : c
      })
  const path = (): string => {
    if (search !== null) {
      if (key === 'relevance') {
        const tiers = new Set(stored.filter(s => found(s.record)).map(tier))
        return `relevance over ${tiers.size === 1 ? 'one tier' : 'several tiers'}${searchCount > limits.cap ? ', walked' : ''}`
      }
      return searchCount <= limits.cap ? 'driven by the search' : 'search walked in creation order'
    }
    if (filters.length === 0) return 'seek'
    const equals = Object.keys(kind.equals).filter(name => values(name).length > 0)
    const [only] = equals
    if (equals.length === 1 && ranges === 0 && new Set(values(only!).map(kind.equals[only!]!.normalise)).size === 1 && kind.seekable[only!]?.includes(key) === true) return 'seek'
    const fewest = Math.min(...filters.map(f => stored.filter(s => f(s.record)).length))
    return fewest <= limits.cap ? 'driven by a filter' : 'walk of the sort order'
  }
  return { records: sorted.map(s => s.record), path: path() }
}

export const live = (store: Store, kind: Kind): Stored[] => [...store[kind.name].values()].sort((a, b) => a.seq - b.seq)

// --- Writing through HTTP, keeping the reference in step -----------------------------------------

function bookPayload (gen: BookGen, store: Store, keepIsbn?: string | null): Json {
  let isbn: string | null = keepIsbn !== undefined ? keepIsbn : gen.isbn === null ? null : isbnPool[gen.isbn]!
  if (keepIsbn === undefined && isbn !== null && [...store.books.values()].some(s => s.record.isbn === isbn)) isbn = null
  const written = isbn === null ? null : gen.hyphens ? `${isbn.slice(0, 3)}-${isbn.slice(3, 4)}-${isbn.slice(4)}` : isbn
  return { title: gen.title, author: gen.author, isbn: written, published_year: gen.published_year }
}

function studentPayload (gen: StudentGen, email: string): Json {
  return { name: gen.name, email, enrollment_year: gen.enrollment_year, ...(gen.status !== undefined && { status: gen.status }) }
}

async function expectStatus (res: InjectResponse, status: number, what: string): Promise<Json> {
  if (res.statusCode !== status) throw new Error(`${what} → ${res.statusCode} ${res.body}`)
  return status === 204 ? {} : res.json()
}

export async function createRecord (service: Service, kind: Kind, payload: Json, store: Store): Promise<Json> {
  const record = await expectStatus(await service.call('POST', kind.path, { payload }), 201, `POST ${kind.path} ${JSON.stringify(payload)}`)
  const id = record[kind.idField] as string
  store[kind.name].set(id, { record, seq: ++store.seq })
  store.ids.add(id)
  return record
}

async function replaceRecord (service: Service, kind: Kind, id: string, payload: Json, store: Store): Promise<void> {
  const record = await expectStatus(await service.call('PUT', `${kind.path}/${id}`, { payload }), 200, `PUT ${kind.path}/${id} ${JSON.stringify(payload)}`)
  store[kind.name].get(id)!.record = record
}

async function deleteBook (service: Service, id: string, store: Store): Promise<void> {
  await expectStatus(await service.call('DELETE', `/books/${id}`), 204, `DELETE /books/${id}`)
  store.books.delete(id)
}

/** One change: a book created, replaced or deleted, or a student created or replaced (students are never deleted). */
export async function change (service: Service, store: Store, kind: Kind, c: { remove: boolean, target: number, book: BookGen, student: StudentGen }, create: boolean): Promise<string> {
  const ids = [...store[kind.name].keys()]
  const id = ids[c.target % Math.max(ids.length, 1)]
  if (kind === books) {
    if (create || id === undefined) return (await createRecord(service, books, bookPayload(c.book, store), store)).book_id
    if (c.remove) await deleteBook(service, id, store)
    else await replaceRecord(service, books, id, bookPayload(c.book, store, store.books.get(id)!.record.isbn), store)
    return id
  }
  if (create || id === undefined) {
    const n = store.students.size + store.seq
    return (await createRecord(service, students, studentPayload(c.student, `${c.student.upperEmail ? 'S' : 's'}${n}@example.org`), store)).student_id
  }
  await replaceRecord(service, students, id, studentPayload(c.student, store.students.get(id)!.record.email), store)
  return id
}

async function load (service: Service, dataset: Dataset): Promise<Store> {
  const store = emptyStore()
  for (const book of dataset.books) await createRecord(service, books, bookPayload(book, store), store)
  for (const [i, student] of dataset.students.entries()) {
    await createRecord(service, students, studentPayload(student, `${student.upperEmail ? 'Student' : 'student'}${i}@Example.org`), store)
  }
  for (const c of dataset.changes) await change(service, store, c.students ? students : books, c, false)
  return store
}

// --- Generated queries, resolved against what the store holds -------------------------------------

function instantText ({ pick, delta, fraction, zone }: InstantPick, store: Store, kind: Kind): string {
  const times = [...new Set(live(store, kind).flatMap(s => [Date.parse(s.record.created_at), updated(s.record)]))].sort((a, b) => a - b)
  const ms = (times[pick % Math.max(times.length, 1)] ?? Date.parse('2026-01-01T00:00:00Z')) + delta
  const offset = zone === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)))
  return new Date(ms + offset * 60_000).toISOString().slice(0, 23) + fraction + zone
}

function bookParams (g: BookQuery, store: Store): Params {
  const params: Params = []
  if (g.q !== undefined) params.push(['q', g.q])
  for (const author of g.author ?? []) params.push(['author', author])
  if (g.isbn !== undefined) params.push(['isbn', isbnPool[g.isbn]!])
  if (g.published_year_min !== undefined) params.push(['published_year_min', String(g.published_year_min)])
  if (g.published_year_max !== undefined) params.push(['published_year_max', String(g.published_year_max)])
  if (g.updated_since !== undefined) params.push(['updated_since', instantText(g.updated_since, store, books)])
  if (g.updated_before !== undefined) params.push(['updated_before', instantText(g.updated_before, store, books)])
  if (g.sort !== undefined) params.push(['sort', g.sort])
  return params
}

function studentParams (g: StudentQuery, store: Store): Params {
  const params: Params = []
  if (g.q !== undefined) params.push(['q', g.q])
  if (g.email !== undefined) {
    const emails = live(store, students).map(s => s.record.email as string)
    const email = emails[g.email.pick] ?? 'nobody@example.org'
    params.push(['email', g.email.variant === 'lower' ? email.toLowerCase() : g.email.variant === 'upper' ? email.toUpperCase() : email])
  }
  for (const status of g.status ?? []) params.push(['status', status])
  if (g.enrollment_year_min !== undefined) params.push(['enrollment_year_min', String(g.enrollment_year_min)])
  if (g.enrollment_year_max !== undefined) params.push(['enrollment_year_max', String(g.enrollment_year_max)])
  if (g.updated_since !== undefined) params.push(['updated_since', instantText(g.updated_since, store, students)])
  if (g.updated_before !== undefined) params.push(['updated_before', instantText(g.updated_before, store, students)])
  if (g.sort !== undefined) params.push(['sort', g.sort])
  return params
}

// --- Walking a list by its cursor ------------------------------------------------------------------

export interface Walk {
  items: Json[]
  pages: Json[]
  /** Pages shorter than their limit (empty ones included) that still had a next cursor. */
  short: number
  empty: number
}

/** The Link header's target, checked against the page: present exactly when next_cursor is, carrying it and the limit. */
function checkLink (url: string, res: InjectResponse, body: Json, path: string, limit: number): void {
  const link = res.headers.link as string | undefined
  if ((link === undefined) !== (body.next_cursor === null)) throw new Error(`${url}: Link ${link} with next_cursor ${body.next_cursor}`)
  if (link === undefined) return
  const target = /^<([^>]*)>; rel="next"$/.exec(link)?.[1]
  const next = target === undefined ? null : new URL(target, 'http://service')
  if (next === null || next.pathname !== path || next.searchParams.get('cursor') !== body.next_cursor || next.searchParams.get('limit') !== String(limit)) {
    throw new Error(`${url}: Link ${link} does not carry this list's path, limit ${limit} and next_cursor ${body.next_cursor}`)
  }
}

/**
 * Every page of a query, following next_cursor with the original parameters; `between` runs before each
 * page after the first. A first page other than 200 is returned as it came; a later one throws.
 */
export async function walk (service: Service, path: string, params: Params, limitOf: (page: number) => number,
  between?: (page: number) => Promise<void>, maxPages = 2000): Promise<Walk | InjectResponse> {
  const result: Walk = { items: [], pages: [], short: 0, empty: 0 }
  let cursor: string | null = null
  do {
    const page = result.pages.length
    if (page > 0 && between !== undefined) await between(page)
    const limit = limitOf(page)
    const url = listUrl(path, [...params, ['limit', String(limit)], ...(cursor === null ? [] : [['cursor', cursor] as [string, string]])])
    const res = await service.call('GET', url)
    if (res.statusCode !== 200) {
      if (page === 0) return res
      throw new Error(`${url} → ${res.statusCode} ${res.body} on page ${page + 1}`)
    }
    const body = res.json()
    checkLink(url, res, body, path, limit)
    result.items.push(...body.items)
    result.pages.push(body)
    cursor = body.next_cursor
    if (cursor !== null && body.items.length < limit) result.short++
    if (cursor !== null && body.items.length === 0) result.empty++
    if (result.pages.length > maxPages) throw new Error(`${listUrl(path, params)}: the walk did not end after ${maxPages} pages`)
  } while (cursor !== null)
  return result
}

const isWalk = (w: Walk | InjectResponse): w is Walk => 'items' in w

/** Checks a 400 problem: its media type, type and the parameter its first error names. */
export function problemOf (res: InjectResponse, what: string, type?: string, parameter?: string): Json {
  const mediaType = String(res.headers['content-type']).split(';')[0]
  const body = res.json()
  if (res.statusCode !== 400 || mediaType !== 'application/problem+json') throw new Error(`${what} → ${res.statusCode} ${mediaType} ${res.body}, not a 400 problem`)
  if (typeof body.errors?.[0]?.parameter !== 'string' || body.errors[0].parameter === '') throw new Error(`${what}: the problem names no parameter: ${res.body}`)
  if (type !== undefined && body.type !== `/problems/${type}`) throw new Error(`${what}: expected /problems/${type}, got ${res.body}`)
  if (parameter !== undefined && body.errors[0].parameter !== parameter) throw new Error(`${what}: expected the problem to name ${parameter}: ${res.body}`)
  return body
}

function lines (kind: Kind, records: Json[]): string {
  return records.map(r => `  ${String(r[kind.idField]).slice(-6)} ${kind.describe(r)}`).join('\n') || '  (none)'
}

/** Walks the query and holds its answer to the reference's. */
export async function checkQuery (service: Service, kind: Kind, store: Store, params: Params, limit: number, limits: ListLimits, seen = new Stats()): Promise<void> {
  const expected = expectList(kind, live(store, kind), params, limits)
  const url = listUrl(kind.path, [...params, ['limit', String(limit)]])
  const result = await walk(service, kind.path, params, () => limit)
  if ('error' in expected) {
    if (isWalk(result)) throw new Error(`${url}: expected 400 ${expected.error} naming ${expected.parameter}, got\n${lines(kind, result.items)}`)
    problemOf(result, url, expected.error, expected.parameter)
    seen.count(expected.error)
    return
  }
  if (!isWalk(result)) throw new Error(`${url} → ${result.statusCode} ${result.body}; expected\n${lines(kind, expected.records)}`)
  seen.count(expected.path)
  if (result.short > 0) seen.count('a short page with a next cursor')
  if (result.empty > 0) seen.count('an empty page with a next cursor')
  const ids = result.items.map(r => r[kind.idField] as string)
  if (new Set(ids).size !== ids.length) throw new Error(`${url}: a record came twice\n${lines(kind, result.items)}`)
  if (!isDeepStrictEqual(result.items, expected.records)) {
    throw new Error(`${url} (${expected.path}) answered\n${lines(kind, result.items)}\nexpected\n${lines(kind, expected.records)}`)
  }
  // One query in three is also exported (the export reads everything: its cost would double the suite's).
  if (url.length % 3 === 0) await checkExport(service, kind, store, params, seen)
}

/** The query's export: every record the reference finds, in its order, however broad a search (no cap applies). */
async function checkExport (service: Service, kind: Kind, store: Store, params: Params, seen: Stats): Promise<void> {
  const expected = expectList(kind, live(store, kind), params, { cap: Number.MAX_SAFE_INTEGER })
  const url = listUrl(`${kind.path}/export.ndjson`, params)
  const res = await service.call('GET', url)
  if ('error' in expected) {
    problemOf(res, `export ${url}`, expected.error, expected.parameter)
    return
  }
  if (res.statusCode !== 200) throw new Error(`export ${url} → ${res.statusCode} ${res.body}`)
  const records = res.payload.split('\n').slice(0, -1).map(line => JSON.parse(line) as Json)
  if (!isDeepStrictEqual(records, expected.records)) {
    throw new Error(`export ${url} answered\n${lines(kind, records)}\nexpected\n${lines(kind, expected.records)}`)
  }
  seen.count('an export')
}

/** How often each access path, problem and page shape came up. */
export class Stats {
  readonly seen = new Map<string, number>()
  count (what: string, times = 1): void {
    this.seen.set(what, (this.seen.get(what) ?? 0) + times)
  }
}

// --- Version 3 databases for the migration test ---------------------------------------------------

export interface Version3Rows { books: Json[], students: Json[] }

/** Records as the service before version 4 stored them; `fillers` plain books after the interesting ones. */
export function version3Rows (fillers: number): Version3Rows {
  const base = Date.parse('2025-03-01T08:00:00.000Z')
  const at = (i: number): string => new Date(base + i * 1000).toISOString()
  const bookValues = [
    ['Dune', 'Frank Herbert', isbnPool[0], 1965],
    ['Düne Messiah', 'FRANK HERBERT', null, 1969],
    ['Ørsted and the Needle', 'Hans Christian Ørsted', null, null],
    ['STRASSE der Sterne', 'Straße', null, 2001],
    ['Straße', 'émile zola', null, -500],
    ['Émile', 'Émile Zola', isbnPool[1], 1762],
    ['𐐀𐐨 Tales', '𐐀𐐨', null, null],
    ['﨎 Poems', '﨎 東京', null, 1965],
    ['Naïve Æther 😀', 'hans christian orsted', null, 0],
    ['😀', 'Nobody', null, null]
  ] as const
  const bookRows = [
    ...bookValues.map(([title, author, isbn, year]) => ({ title, author, isbn: isbn ?? null, published_year: year })),
    ...Array.from({ length: fillers }, (_, n) => ({ title: `Filler ${n}`, author: 'Anonymous', isbn: null, published_year: n % 3 === 0 ? null : 1900 + n % 100 }))
  ].map((values, i) => ({ book_id: uuidv7(), ...values, created_at: at(i), updated_at: at(i + (i % 4 === 0 ? 5000 : 0)) }))
  const studentRows = [
    ['Ada Lovelace', 'ada@example.org', 'active', 1833],
    ['ÅDA LØVELACE', 'ADA2@Example.org', 'graduated', null],
    ['Grace Hopper', 'grace@example.org', 'withdrawn', 1928],
    ['Émile Noether', 'emmy@example.org', 'active', 1900],
    ['東京 Taro', 'taro@example.org', 'active', 2020]
  ].map(([name, email, status, year], i) => ({ student_id: uuidv7(), name, email, status, enrollment_year: year, created_at: at(i), updated_at: at(i + 1) }))
  return { books: bookRows, students: studentRows }
}

// --- The suite ----------------------------------------------------------------------------------

/** A walk of one list while writes happen between its pages. */
interface WalkSpec { name: string, kind: Kind, params: Params }
const walkSpecs: WalkSpec[] = [
  { name: 'created_at (the default)', kind: books, params: [] },
  { name: '-created_at', kind: books, params: [['sort', '-created_at']] },
  { name: 'updated_at', kind: books, params: [['sort', 'updated_at']] },
  { name: 'title', kind: books, params: [['sort', 'title']] },
  { name: '-published_year', kind: books, params: [['sort', '-published_year']] },
  { name: 'filtered, by author', kind: books, params: [['author', 'Frank Herbert'], ['author', 'émile zola'], ['author', 'Straße'], ['published_year_min', '-500'], ['sort', 'author']] },
  { name: 'q, created_at', kind: books, params: [['q', 'dune'], ['sort', 'created_at']] },
  { name: 'students by name, filtered', kind: students, params: [['status', 'active'], ['status', 'graduated'], ['sort', '-name']] }
]

export function listQuerySuite (t: Test, engine: Engine): void {
  const service = async (t: Test, limits?: ListLimits): Promise<Service> => startService(t, await engine.open(t, limits))

  for (const [label, limits, numRuns] of [['default limits', defaultListLimits, 8], ['tiny limits (cap 3)', tinyLimits, 14]] as const) {
    t.test(`GET /books and GET /api/students answer every filter, sort and search as the in-memory reference does (${label})`, async t => {
      const seen = new Stats()
      await fc.assert(fc.asyncProperty(
        datasetArb,
        fc.array(bookQueryArb, { minLength: 14, maxLength: 14 }),
        fc.array(studentQueryArb, { minLength: 8, maxLength: 8 }),
        async (dataset, bookQueries, studentQueries) => {
          const api = await service(t, limits)
          try {
            const store = await load(api, dataset)
            for (const g of bookQueries) await checkQuery(api, books, store, bookParams(g, store), g.limit, limits, seen)
            for (const g of studentQueries) await checkQuery(api, students, store, studentParams(g, store), g.limit, limits, seen)
          } finally {
            await api.close()
          }
        }), { seed, numRuns, endOnFailure: true })
      t.pass(`every query matched the reference: ${[...seen.seen].map(([what, n]) => `${what} ×${n}`).join(', ')}`)
      if (limits === tinyLimits) {
        for (const path of ['seek', 'driven by a filter', 'walk of the sort order', 'driven by the search', 'search walked in creation order',
          'relevance over one tier', 'relevance over several tiers', 'relevance over several tiers, walked', 'search-too-broad', 'a short page with a next cursor', 'an empty page with a next cursor']) {
          t.ok(seen.seen.has(path), `the generated queries reached: ${path}`)
        }
      }
      for (const problem of ['invalid-search', 'invalid-range', 'unsupported-combination']) t.ok(seen.seen.has(problem), `the generated queries met ${problem}`)
    })
  }

  for (const [label, limits] of [['default limits', defaultListLimits], ['tiny limits', tinyLimits]] as const) {
    t.test(`a walk by cursor returns every record that matched throughout exactly once while records are created, replaced and deleted between its pages (${label})`, async t => {
      const writeArb = fc.array(fc.record({ create: fc.boolean(), remove: fc.boolean(), target: fc.nat(60), book: bookArb, student: studentArb }), { maxLength: 3 })
      const seen = new Stats()
      await fc.assert(fc.asyncProperty(
        datasetArb,
        fc.array(fc.record({ limits: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }), writes: fc.array(writeArb, { minLength: 1, maxLength: 25 }) }),
          { minLength: walkSpecs.length, maxLength: walkSpecs.length }),
        async (dataset, plans) => {
          const api = await service(t, limits)
          try {
            const store = await load(api, dataset)
            for (const [i, spec] of walkSpecs.entries()) await walkWhileWriting(api, store, spec, plans[i]!, limits, seen)
          } finally {
            await api.close()
          }
        }), { seed, numRuns: limits === tinyLimits ? 6 : 4, endOnFailure: true })
      t.pass(`walks held (${walkSpecs.map(s => s.name).join('; ')}): ${[...seen.seen].map(([what, n]) => `${what} ${n}`).join(', ')}`)
    })
  }

  t.test('GET /books and GET /api/students refuse each query they cannot answer with a 400 problem naming the parameter', async t => {
    const api = await service(t)
    const store = emptyStore()
    for (const title of ['Dune', 'Dune Messiah', 'Children of Dune']) await createRecord(api, books, { title, author: 'Frank Herbert' }, store)
    for (const name of ['Ada', 'Grace']) await createRecord(api, students, { name, email: `${name}@example.org` }, store)
    const since = '2026-01-01T00:00:00Z'
    const cases: [string, string, string][] = [
      // The stand-in and the real module both find nothing searchable here.
      ['/books?q=!!!', 'invalid-search', 'q'],
      ['/api/students?q=%F0%9F%98%80', 'invalid-search', 'q'],
      ['/books?q=%22unbalanced', 'invalid-search', 'q'],
      ['/api/students?q=ada%20%22lovelace', 'invalid-search', 'q'],
      ['/books?published_year_min=1990&published_year_max=1980', 'invalid-range', 'published_year_min'],
      ['/api/students?enrollment_year_min=2021&enrollment_year_max=2020', 'invalid-range', 'enrollment_year_min'],
      [`/books?updated_since=${since}&updated_before=${since}`, 'invalid-range', 'updated_since'],
      ['/api/students?updated_since=2026-01-02T00:00:00Z&updated_before=2026-01-01T00:00:00Z', 'invalid-range', 'updated_since'],
      ['/books?updated_since=2026-01-01T01:00:00%2B01:00&updated_before=2026-01-01T00:00:00Z', 'invalid-range', 'updated_since'],
      ['/books?sort=relevance', 'unsupported-combination', 'sort'],
      ['/api/students?sort=relevance&status=active', 'unsupported-combination', 'sort'],
      // Unknown names, repeated scalars, malformed values: the contract's validation.
      ['/books?Sort=title', 'validation-error', 'Sort'],
      ['/books?filter%5Bauthor%5D=x', 'validation-error', 'filter[author]'],
      ['/books?title_like=x', 'validation-error', 'title_like'],
      ['/api/students?name=Ada', 'validation-error', 'name'],
      ['/books?sort=title&sort=-title', 'validation-error', 'sort'],
      ['/books?q=dune&q=messiah', 'validation-error', 'q'],
      ['/books?isbn=9780441013593&isbn=9780441013594', 'validation-error', 'isbn'],
      ['/api/students?email=a%40example.org&email=b%40example.org', 'validation-error', 'email'],
      ['/books?limit=1&limit=2', 'validation-error', 'limit'],
      ['/books?isbn=978-0-441-01359-3', 'validation-error', 'isbn'],
      ['/books?isbn=0441013597', 'validation-error', 'isbn'],
      [`/books?${Array.from({ length: 11 }, (_, i) => `author=a${i}`).join('&')}`, 'validation-error', 'author'],
      ['/api/students?status=active&status=graduated&status=withdrawn&status=active', 'validation-error', 'status'],
      ['/api/students?status=expelled', 'validation-error', 'status'],
      ['/api/students?email=not-an-email', 'validation-error', 'email'],
      ['/books?published_year_min=1965.5', 'validation-error', 'published_year_min'],
      ['/books?published_year_max=10000', 'validation-error', 'published_year_max'],
      ['/api/students?enrollment_year_min=1799', 'validation-error', 'enrollment_year_min'],
      ['/books?updated_since=yesterday', 'validation-error', 'updated_since'],
      ['/books?updated_before=2026-13-01T00:00:00Z', 'validation-error', 'updated_before'],
      ['/books?sort=rating', 'validation-error', 'sort'],
      ['/api/students?sort=title', 'validation-error', 'sort'],
      ['/books?q=', 'validation-error', 'q'],
      [`/books?q=${'a'.repeat(201)}`, 'validation-error', 'q'],
      ...['%00', '%01', '%0A', '%1F', '%7F'].flatMap(c => [
        [`/books?q=du${c}ne`, 'validation-error', 'q'],
        [`/books?author=Frank${c}Herbert`, 'validation-error', 'author'],
        [`/api/students?q=${c}`, 'validation-error', 'q']
      ] as [string, string, string][]),
      ['/books?cursor=not-a-cursor', 'validation-error', 'cursor']
    ]
    for (const [url, type, parameter] of cases) {
      const res = await api.call('GET', url)
      t.doesNotThrow(() => problemOf(res, url, type, parameter), `GET ${url} → 400 ${type} naming ${parameter}`)
    }
    const unbalanced = await api.call('GET', '/books?q=dune%20%22messiah')
    t.equal(unbalanced.json().errors[0].detail, 'unbalanced quote at 6', 'invalid-search names the position')
    t.equal((await api.call('GET', `/books?published_year_min=1965&published_year_max=1965&updated_since=${since}`)).statusCode, 200, 'a range of one year is no empty range')
    // Within one millisecond, the digits after it still order two instants: such a range is no error, though no record is in it.
    const within = await api.call('GET', '/books?updated_since=2026-01-01T00:00:00.0001Z&updated_before=2026-01-01T00:00:00.00015Z')
    t.same([within.statusCode, within.json().items], [200, []], 'since 0.1 ms, before 0.15 ms past the second: a range, if empty')
    const reversed = '/books?updated_since=2026-01-01T00:00:00.00015Z&updated_before=2026-01-01T00:00:00.0001Z'
    const refused = await api.call('GET', reversed)
    t.doesNotThrow(() => problemOf(refused, reversed, 'invalid-range', 'updated_since'), 'the same instants the other way round are no range')
  })

  t.test('a cursor belongs to its query: another filter, q or sort is a cursor-mismatch; another limit, or the same query spelt otherwise, continues', async t => {
    const api = await service(t)
    const store = emptyStore()
    const rows = [['Dune', 'Frank Herbert'], ['Dune Messiah', 'FRANK HERBERT'], ['Nana', 'Émile Zola'], ['Children of Dune', 'Frånk Hérbert'], ['Germinal', 'emile zola'], ['God Emperor of Dune', 'Frank Herbert']]
    for (const [title, author] of rows) await createRecord(api, books, { title, author, published_year: 1970 }, store)
    for (const name of ['Ada', 'Grace', 'Alan']) await createRecord(api, students, { name, email: `${name}@example.org` }, store)
    const refused = async (url: string, type: string, what: string): Promise<void> => {
      const res = await api.call('GET', url)
      t.doesNotThrow(() => problemOf(res, url, type, 'cursor'), what)
    }
    const issued = (await api.call('GET', '/books?limit=1&author=Frank%20Herbert&sort=title')).json().next_cursor as string
    for (const other of ['author=%C3%89mile%20Zola&sort=title', 'author=Frank%20Herbert&sort=-title', 'author=Frank%20Herbert', 'sort=title',
      'author=Frank%20Herbert&author=Nobody&sort=title', 'author=Frank%20Herbert&sort=title&published_year_min=0', 'author=Frank%20Herbert&sort=title&q=dune']) {
      await refused(`/books?${other}&cursor=${issued}`, 'cursor-mismatch', `${other} is another query`)
    }
    const expected = (params: Params): Json[] => (expectList(books, live(store, books), params, defaultListLimits) as { records: Json[] }).records
    const byTitle = expected([['author', 'Frank Herbert'], ['sort', 'title']])
    for (const [spelling, limit] of [['author=FRANK%20HERBERT&sort=title', 3], ['author=frank-herbert&sort=title', 1], ['author=Fr%C3%A5nk%20H%C3%A9rbert&sort=title', 10]] as const) {
      const page = await api.call('GET', `/books?${spelling}&limit=${limit}&cursor=${issued}`)
      t.equal(page.statusCode, 200, `${spelling}: the same query, spelt otherwise`)
      t.same(page.json().items, byTitle.slice(1, 1 + limit), `limit ${limit} continues from the same position`)
    }
    const searched = (await api.call('GET', '/books?limit=1&q=Dune&sort=created_at')).json().next_cursor as string
    const inSearch = await api.call('GET', `/books?q=D%C3%9CNE&sort=created_at&limit=2&cursor=${searched}`)
    t.same(inSearch.json().items, expected([['q', 'dune'], ['sort', 'created_at']]).slice(1, 3), 'q spelt otherwise is the same search')
    await refused(`/books?q=messiah&sort=created_at&cursor=${searched}`, 'cursor-mismatch', 'another q is another query')
    await refused(`/books?q=dune&sort=-created_at&cursor=${searched}`, 'cursor-mismatch', 'another direction is another query')
    const plain = (await api.call('GET', '/books?limit=2')).json().next_cursor as string
    t.same((await api.call('GET', `/books?sort=created_at&limit=2&cursor=${plain}`)).json().items, expected([]).slice(2, 4), 'sort=created_at is the default spelt out')
    const studentCursor = (await api.call('GET', '/api/students?limit=1&sort=name')).json().next_cursor as string
    await refused(`/api/students?status=active&cursor=${studentCursor}`, 'cursor-mismatch', 'students: another filter is another query')
    await refused(`/api/students?cursor=${issued}`, 'validation-error', 'a cursor of /books is no cursor of /api/students')
    await refused(`/books?sort=title&cursor=${studentCursor}`, 'validation-error', 'nor the reverse')
  })

  t.test('Link rel=next is there exactly when next_cursor is, carries limit, every canonical parameter and the cursor, and leads to the same page', async t => {
    const api = await service(t)
    const store = await load(api, fc.sample(datasetArb, { seed, numRuns: 1 })[0]!)
    for (const author of ['Frank Herbert', 'émile zola', 'Straße']) {
      for (let i = 0; i < 3; i++) await createRecord(api, books, { title: `Dune ${i} ${author}`, author, published_year: 1960 + i }, store)
    }
    const since = new Date(Date.parse(live(store, books)[0]!.record.updated_at) - 1).toISOString()
    const queries: [Kind, Params][] = [
      [books, []],
      [books, [['sort', '-title']]],
      [books, [['q', 'Dune'], ['author', 'FRANK HERBERT'], ['author', 'Émile Zola'], ['author', 'frank herbert'], ['published_year_min', '1900'], ['published_year_max', '2100'], ['updated_since', since.replace('Z', '000Z')], ['updated_before', '2999-01-01T01:00:00+01:00'], ['sort', '-author']]],
      [books, [['q', 'dune & c++ #1'], ['sort', 'published_year']]],
      [books, [['isbn', isbnPool[0]!], ['sort', 'updated_at']]],
      [students, [['status', 'withdrawn'], ['status', 'active'], ['status', 'graduated'], ['enrollment_year_min', '1800'], ['sort', 'name']]],
      [students, [['q', 'ada OR grace'], ['email', live(store, students)[0]!.record.email.toUpperCase()]]]
    ]
    for (const [kind, params] of queries) {
      const viaCursor = await walk(api, kind.path, params, () => 2)
      if (!isWalk(viaCursor)) throw new Error(`${listUrl(kind.path, params)} → ${viaCursor.statusCode} ${viaCursor.body}`)
      // The same walk by Links alone: the first page, then whatever each Link says.
      let url: string | undefined = listUrl(kind.path, [...params, ['limit', '2']])
      const viaLink: Json[] = []
      while (url !== undefined) {
        const res = await api.call('GET', url)
        t.equal(res.statusCode, 200, url)
        viaLink.push(res.json())
        const link = res.headers.link as string | undefined
        if (link !== undefined) checkCanonical(t, kind, params, new URL(/^<([^>]*)>/.exec(link)![1]!, 'http://service'), res.json().next_cursor)
        url = link === undefined ? undefined : /^<([^>]*)>/.exec(link)![1]
      }
      t.same(viaLink, viaCursor.pages, `${listUrl(kind.path, params)}: following Link gives the pages following next_cursor does (${viaLink.length} pages)`)
    }
  })

  t.test('GET /api/students checks the scope before the query: 401 without a key, 403 with a books-only key, then 400', async t => {
    const api = await service(t)
    const booksOnly = (await createKey(api.repositories.apiKeys, 'books only', ['books:read', 'books:write'])).key
    const studentsKey = (await createKey(api.repositories.apiKeys, 'students', ['students:read'])).key
    for (const url of ['/api/students?sort=relevance', '/api/students?status=expelled', '/api/students?Sort=name', '/api/students?enrollment_year_min=2021&enrollment_year_max=2020']) {
      t.equal((await api.call('GET', url, { key: null })).statusCode, 401, `${url} without a key`)
      t.equal((await api.call('GET', url, { key: booksOnly })).statusCode, 403, `${url} with a books-only key`)
      t.equal((await api.call('GET', url, { key: studentsKey })).statusCode, 400, `${url} with a students key`)
    }
    t.equal((await api.call('GET', '/books?sort=relevance', { key: null })).statusCode, 400, 'GET /books is open to anyone, so its 400 comes first')
  })

  t.test('no q of any characters (nor author) makes either list fail: 200 with what the reference finds, or a 400 problem', async t => {
    const api = await service(t)
    const store = await load(api, fc.sample(datasetArb, { seed: seed + 1, numRuns: 1 })[0]!)
    const hostile = ['C++', '"', '-', 'NOT', '*', 'OR OR', 'OR', 'AND dune', 'NEAR(dune herbert)', '(', ')', ':', '^dune', 'title_key:dune', '{title_key}: dune',
      '"dune', 'dune"', "'", '\\', '%', '&', '#', '+', 'a*', '**', '-dune', '- -', 'dune OR', 'OR dune', '" "', 'dune -dune', '\u0000', 'du\u0000ne', '\u0085',
      'x'.repeat(10_000), 'x'.repeat(200), 'ü'.repeat(200), '𐐀'.repeat(200), '😀'.repeat(201), 'שלום עולם', 'مرحبا بالعالم', '\u202Edune', '東京 タワー', '東京', '😀', '👩‍👩‍👧',
      'e\u0301mile', '\u200Bdune', '\uFEFFdune', '\u2028', 'ﬁ', 'Ⅻ', '①', '3e5x', '1e5 dune', 'ǅ', 'ΣΑΣ σας', 'İstanbul', 'ß'.repeat(150)]
    const strings = fc.oneof(fc.constantFrom(...hostile), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.array(fc.constantFrom(...searchWords, ...hostile.slice(0, 30)), { maxLength: 5 }).map(ws => ws.join(' ')))
    let answered = 0
    await fc.assert(fc.asyncProperty(strings, fc.constantFrom(books, students), fc.boolean(), async (text, kind, asAuthor) => {
      const name = asAuthor && kind === books ? 'author' : 'q'
      const url = `${kind.path}?${name}=${encodeURIComponent(text)}&limit=100`
      const res = await api.call('GET', url)
      if (res.statusCode === 400) {
        problemOf(res, url)
        // Only text the contract takes and the search cannot use may be refused.
        const valid = text.length > 0 && [...text].length <= (name === 'q' ? 200 : 300) && ![...text].some(c => c < ' ' || c === '\u007f')
        if (valid && name === 'author') throw new Error(`${url}: a valid author refused: ${res.body}`)
        if (valid) problemOf(res, url, 'invalid-search', 'q')
        return
      }
      if (res.statusCode !== 200) throw new Error(`${url} → ${res.statusCode} ${res.body}`)
      answered++
      const result = await walk(api, kind.path, [[name, text]], () => 100)
      const expected = expectList(kind, live(store, kind), [[name, text]], defaultListLimits)
      if (!isWalk(result) || 'error' in expected) throw new Error(`${url}: answered 200 where the reference expects ${JSON.stringify(expected)}`)
      const ids = (records: Json[]): string[] => records.map(r => r[kind.idField] as string).sort()
      if (!isDeepStrictEqual(ids(result.items), ids(expected.records))) throw new Error(`${url} found\n${lines(kind, result.items)}\nexpected\n${lines(kind, expected.records)}`)
    }), { seed, numRuns: 200, endOnFailure: true })
    for (const text of hostile) {
      for (const kind of [books, students]) {
        const res = await api.call('GET', `${kind.path}?q=${encodeURIComponent(text)}`)
        t.ok([200, 400].includes(res.statusCode), `q=${shown(text.length > 40 ? `${text.slice(0, 20)}… (${text.length})` : text)} on ${kind.path} → ${res.statusCode}`)
      }
    }
    // Not UTF-8 at all, or a lone surrogate's bytes: the query string parser's business, never a 500.
    for (const raw of ['%ED%A0%80', '%ED%B0%80dune', '%', '%zz', '%C0%AF', '%FF%FE', 'dune%E2%82', '%F4%90%80%80']) {
      for (const kind of [books, students]) {
        const url = `${kind.path}?q=${raw}`
        const res = await api.call('GET', url)
        t.ok([200, 400].includes(res.statusCode), `${url} → ${res.statusCode}`)
        if (res.statusCode === 400) problemOf(res, url)
      }
    }
    t.ok(answered > 50, `${answered} of the generated searches were answered 200 and matched the reference`)
  })

  t.test('a database of schema version 3 is migrated: its records are found by q, author and sorted by title, as the reference finds them', async t => {
    const rows = version3Rows(0)
    const progress: string[] = []
    const api = await startService(t, await engine.openVersion3(t, rows, line => progress.push(line)))
    const store = storeOf(rows)
    t.same(progress, [], 'a small database migrates without progress lines')
    const queries: [Kind, Params][] = [
      ...['orsted', 'STRASSE', 'dune', 'émile', 'herbert', '𐐨', '﨎', 'naive aether', 'nobody', 'taro'].flatMap(q => [
        [books, [['q', q]]], [books, [['q', q], ['sort', 'title']]], [students, [['q', q]]]
      ] as [Kind, Params][]),
      ...['frank herbert', 'Hans Christian ORSTED', 'EMILE ZOLA', 'strasse', '𐐀𐐨'].map(author => [books, [['author', author], ['sort', 'title']]] as [Kind, Params]),
      [books, [['sort', 'title']]], [books, [['sort', '-author']]], [books, [['sort', 'published_year']]], [books, [['isbn', isbnPool[1]!]]],
      [students, [['sort', 'name']]], [students, [['email', 'ada2@example.ORG']]]
    ]
    const seen = new Stats()
    for (const [kind, params] of queries) {
      await t.resolves(checkQuery(api, kind, store, params, 3, defaultListLimits, seen), listUrl(kind.path, params))
    }
  })

  t.test('migrating 10,000 books to schema version 4 reports its progress and leaves every book sorted and searchable', async t => {
    const rows = version3Rows(10_000)
    const progress: string[] = []
    const api = await startService(t, await engine.openVersion3(t, rows, line => progress.push(line)))
    const total = rows.books.length
    t.ok(progress.includes(`books: folded keys for ${total} of ${total} rows`), `progress reported: ${JSON.stringify(progress)}`)
    const store = storeOf(rows)
    const seen = new Stats()
    for (const params of [[['q', 'orsted']], [['q', 'filler 9999']], [['sort', '-title']], [['author', 'ANONYMOUS'], ['published_year_min', '1990']]] as Params[]) {
      await t.resolves(checkQuery(api, books, store, params, 100, defaultListLimits, seen), listUrl('/books', params))
    }
  })
}

/** The reference store for rows written straight into a database, in their insertion order. */
export function storeOf (rows: Version3Rows): Store {
  const store = emptyStore()
  for (const [kind, records, fields] of [[books, rows.books, bookFields], [students, rows.students, studentFields]] as const) {
    // A field a later version added reads null on a row written before it, as the service answers it.
    const added = Object.fromEntries(Object.keys(fields).map(field => [field, null]))
    for (const record of records) store[kind.name].set(record[kind.idField], { record: { ...added, ...record }, seq: ++store.seq })
  }
  return store
}

/** The Link's parameters: limit, each given parameter in its canonical form (and the sort, given or not), the cursor; nothing else. */
function checkCanonical (t: Test, kind: Kind, params: Params, link: URL, cursor: string): void {
  const given = (name: string): string[] => params.filter(([n]) => n === name).map(([, v]) => v)
  const carried = (name: string): string[] => link.searchParams.getAll(name)
  const names = new Set([...link.searchParams.keys()])
  const expectedNames = new Set(['limit', 'cursor', 'sort', ...params.map(([n]) => n)])
  t.same([...names].sort(), [...expectedNames].sort(), `${link.search}: the parameters of the query, the limit, the sort and the cursor`)
  t.equal(link.searchParams.get('cursor'), cursor)
  for (const name of names) {
    if (name === 'limit' || name === 'cursor') continue
    if (name === 'q') t.equal(printSearch(parseSearch(carried(name)[0]!)), printSearch(parseSearch(given(name)[0]!)), 'q: the same search')
    else if (name === 'sort') t.equal(carried(name)[0], given(name)[0] ?? (params.some(([n]) => n === 'q') ? 'relevance' : 'created_at'), 'sort spelt out')
    else if (name in kind.equals) {
      const normalise = kind.equals[name]!.normalise
      t.same(new Set(carried(name).map(normalise)), new Set(given(name).map(normalise)), `${name}: the same values`)
      t.equal(new Set(carried(name)).size, carried(name).length, `${name}: each value once`)
    } else if (/_since$|_before$/.test(name)) {
      t.equal(Math.ceil(exactInstant(carried(name)[0]!)), Math.ceil(exactInstant(given(name)[0]!)), `${name}: the same instant, to the millisecond`)
    } else t.equal(Number(carried(name)[0]), Number(given(name)[0]), `${name}: the same number`)
  }
}

async function walkWhileWriting (api: Service, store: Store, spec: WalkSpec, plan: { limits: number[], writes: { create: boolean, remove: boolean, target: number, book: BookGen, student: StudentGen }[][] },
  limits: ListLimits, seen: Stats): Promise<void> {
  const { kind, params } = spec
  const before = expectList(kind, live(store, kind), params, limits)
  if ('error' in before) throw new Error(`${spec.name}: the reference refuses the walk (${before.error})`)
  const startIds = before.records.map(r => r[kind.idField] as string)
  const existed = new Set(store[kind.name].keys())
  const touched = new Set<string>()
  const result = await walk(api, kind.path, params, page => plan.limits[page % plan.limits.length]!, async page => {
    // Writes stop after the plan's last step, so that creates cannot outrun the walk.
    for (const write of plan.writes[page - 1] ?? []) {
      touched.add(await change(api, store, kind, write, write.create))
      seen.count('writes')
    }
  })
  const url = listUrl(kind.path, params)
  if (!isWalk(result)) throw new Error(`${url} → ${result.statusCode} ${result.body}`)
  const ids = result.items.map(r => r[kind.idField] as string)
  const counts = new Map<string, number>()
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
  const stable = startIds.filter(id => !touched.has(id))
  const describe = (): string => `${url} (${spec.name}) walked\n${lines(kind, result.items)}\nmatching at the start\n${lines(kind, before.records)}\ntouched ${[...touched].map(id => id.slice(-6)).join(' ')}`
  const missed = stable.filter(id => counts.get(id) !== 1)
  if (missed.length > 0) throw new Error(`${missed.map(id => `${id.slice(-6)} ×${counts.get(id) ?? 0}`).join(', ')}: matched throughout, expected exactly once; ${describe()}`)
  const strays = ids.filter(id => !store.ids.has(id) || (existed.has(id) && !touched.has(id) && !startIds.includes(id)))
  if (strays.length > 0) throw new Error(`${strays.map(id => id.slice(-6)).join(', ')}: never matched; ${describe()}`)
  if (/created_at/.test(params.find(([n]) => n === 'sort')?.[1] ?? 'created_at')) {
    const twice = [...counts].filter(([, n]) => n > 1)
    if (twice.length > 0) throw new Error(`${twice.map(([id]) => id.slice(-6)).join(', ')}: twice in a walk in creation order; ${describe()}`)
  }
  const order = ids.filter(id => stable.includes(id))
  if (!isDeepStrictEqual(order, stable)) throw new Error(`the records that matched throughout came out of order; ${describe()}`)
  seen.count('walks')
  seen.count('pages', result.pages.length)
  seen.count('records that matched throughout, each seen once', stable.length)
  seen.count('changed records seen twice', [...counts].filter(([, n]) => n > 1).length)
}
