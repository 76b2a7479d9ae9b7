// The SQLite list-page cache is never stale: generated sequences of writes and lists, a cached and an uncached repository answering alike.
import fc from 'fast-check'
import t from 'tap'
import { fold } from '../src/domain/search/fold.js'
import { creationOrder } from '../src/storage/list-sql.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import type { BookValues, ListQuery } from '../src/storage/types.js'

const authors = ['Ann', 'Bo', 'Cy']

/** The queries a page may be of: the cache keeps pages in creation order through creations, drops the others on any write. */
const queries: ListQuery[] = [
  creationOrder,
  { ...creationOrder, sort: { key: 'created_at', descending: true } },
  { ...creationOrder, sort: { key: 'title', descending: false } },
  { ...creationOrder, equals: [{ field: 'author', values: [fold('Ann')] }] },
  { ...creationOrder, ranges: [{ field: 'published_year', min: 1990, max: null }] }
]

const values = fc.record<BookValues>({
  title: fc.constantFrom('Dune', 'Emma', 'Ulysses', 'Beloved'),
  author: fc.constantFrom(...authors),
  isbn: fc.constant(null),
  published_year: fc.option(fc.integer({ min: 1980, max: 2000 }), { nil: null })
})

type Step =
  | { kind: 'create', values: BookValues, count: number, createdAt: string }
  | { kind: 'replace', pick: number, values: BookValues }
  | { kind: 'delete', pick: number }
  | { kind: 'list', query: number, limit: number, cursor: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  // Imports keep the creation time they were given, earlier than the stored ones or not.
  fc.record({ kind: fc.constant('create' as const), values, count: fc.integer({ min: 1, max: 3 }), createdAt: fc.constantFrom('2019-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z') }),
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), values }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  { arbitrary: fc.record({ kind: fc.constant('list' as const), query: fc.nat(queries.length - 1), limit: fc.integer({ min: 1, max: 4 }), cursor: fc.nat() }), weight: 3 }
)

const withoutWriteTime = (items: unknown[]) => items.map(item => ({ ...item as Record<string, unknown>, updated_at: undefined }))

t.test('every page the cache answers is the page the database holds, whatever writes came between', async t => {
  let runs = 0
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), async steps => {
    runs++
    const cached = openSqliteRepositories(':memory:')
    const uncached = openSqliteRepositories(':memory:', { cacheSize: 0 })
    try {
      const ids: string[] = []
      // The cursors each query handed out so far, the first page's (null) among them.
      const cursors = queries.map(() => [null] as (string | null)[])
      // Every page listed so far: each is asked again after every write, when the cache may hold it.
      const listed = new Map<string, { query: number, limit: number, after: string | null }>()
      const compare = async ({ query, limit, after }: { query: number, limit: number, after: string | null }) => {
        const [got, expected] = await Promise.all([cached.books.list(queries[query]!, limit, after), uncached.books.list(queries[query]!, limit, after)])
        if (JSON.stringify(withoutWriteTime(got.items)) !== JSON.stringify(withoutWriteTime(expected.items)) || got.after !== expected.after) {
          throw new Error(`query ${query}, limit ${limit}, after ${after}: cached ${JSON.stringify(got)} against ${JSON.stringify(expected)}`)
        }
        if (expected.after !== null && !cursors[query]!.includes(expected.after)) cursors[query]!.push(expected.after)
      }
      let made = 0
      for (const s of steps) {
        if (s.kind === 'list') {
          const known = cursors[s.query]!
          const page = { query: s.query, limit: s.limit, after: known[s.cursor % known.length]! }
          listed.set(JSON.stringify(page), page)
          await compare(page)
          continue
        }
        if (s.kind === 'create') {
          const records = Array.from({ length: s.count }, () => {
            const id = `0190a5d2-7c1e-7b4a-9f3e-${String(++made).padStart(12, '0')}`
            ids.push(id)
            return { values: s.values, given: { id, createdAt: s.createdAt } }
          })
          await Promise.all([cached.books.createMany(records), uncached.books.createMany(records)])
        } else if (ids.length === 0) {
          continue
        } else if (s.kind === 'replace') {
          const id = ids[s.pick % ids.length]!
          // A title of its own each time: a stale page differs from the stored one in what it shows.
          const changed = { ...s.values, title: `${s.values.title} ${++made}` }
          await Promise.all([cached.books.replace(id, changed, null), uncached.books.replace(id, changed, null)])
        } else {
          const [id] = ids.splice(s.pick % ids.length, 1)
          await Promise.all([cached.books.delete(id!, null), uncached.books.delete(id!, null)])
        }
        for (const page of listed.values()) await compare(page)
      }
    } finally {
      await Promise.all([cached.close(), uncached.close()])
    }
  }), { numRuns: 200 })
  t.equal(runs >= 200, true, 'every generated sequence ran')
})
