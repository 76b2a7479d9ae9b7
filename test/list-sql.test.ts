// The list statements' text, below both engines: what a request gives reaches them as bound parameters only.
import fc from 'fast-check'
import t from 'tap'
import { parseSearch } from '../src/domain/search/query.js'
import { defaultListLimits, type ListDialect, ListStatements, type RunSql, seekSizes, type SqlValue } from '../src/storage/list-sql.js'
import { bookTable } from '../src/storage/tables.js'
import type { ListQuery } from '../src/storage/types.js'

/** A dialect that writes placeholders as each engine does and leaves the rest plain; `streams` picks FTS5's way or a GIN index's. */
function dialect (streams: boolean): ListDialect {
  return {
    placeholder: n => `?${n}`,
    record: alias => `${alias}.book_id`,
    matches: (search, scope, add, where, tail) => `SELECT seq FROM books_fts WHERE ${[`books_fts MATCH ${add(JSON.stringify([search, scope]))}`, ...where('seq')].join(' AND ')} ${tail?.('seq') ?? ''}`,
    rowMatches: (alias, search, scope, add) => `${alias}.seq IN (SELECT seq FROM books_fts WHERE books_fts MATCH ${add(JSON.stringify([search, scope]))})`,
    streamsMatches: streams,
    equalsIgnoringCase: (column, values) => `lower(${column}) IN (${values.join(', ')})`,
    seq: value => Number(value)
  }
}

const dune = parseSearch('dune')
/** One query for each way page() reads: a seek, a filter that drives or is walked, a search by relevance or in creation order. */
const queries: Record<string, ListQuery> = {
  everything: { equals: [], ranges: [], search: null, sort: { key: 'created_at', descending: false } },
  seek: { equals: [{ field: 'author', values: ['frank herbert'] }], ranges: [], search: null, sort: { key: 'title', descending: true } },
  filtered: { equals: [{ field: 'isbn', values: ['9780441013593', '9780441013594'] }], ranges: [{ field: 'published_year', min: 1960, max: 1970 }], search: null, sort: { key: 'published_year', descending: false } },
  ranked: { equals: [], ranges: [], search: dune, sort: { key: 'relevance', descending: false } },
  searched: { equals: [], ranges: [{ field: 'updated_at', min: null, max: '2026-01-01T00:00:00.000Z' }], search: dune, sort: { key: 'created_at', descending: true } }
}

/** Every statement page() runs for `limit`, with a `count` answer that steers it to drive (small) or walk (large). */
async function statements (query: ListQuery, limit: number, count: number, streams: boolean): Promise<{ sql: string, params: SqlValue[] }[]> {
  const ran: { sql: string, params: SqlValue[] }[] = []
  const run: RunSql = async (sql, params) => {
    ran.push({ sql, params })
    if (sql.includes('coalesce(max(seq), 0)')) return [[5000]]
    return sql.startsWith('SELECT count(*)') ? [[count]] : []
  }
  await new ListStatements('books', bookTable.list, dialect(streams), defaultListLimits, 1).page(query, limit, null, run)
  return ran
}

t.test('the page size never reaches SQL text: one statement per size class, and a bound parameter beyond the sizes', async t => {
  await fc.assert(fc.asyncProperty(
    fc.constantFrom(...Object.keys(queries)), fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 }),
    fc.constantFrom(3, defaultListLimits.cap + 1), fc.boolean(),
    async (name, a, b, count, streams) => {
      const [first, second] = [await statements(queries[name]!, a, count, streams), await statements(queries[name]!, b, count, streams)]
      const sizeOf = (limit: number) => seekSizes.find(size => size >= limit) ?? 'bound'
      // Limits of one size class read through the same statements: a page size a client sends is never SQL.
      if (sizeOf(a) === sizeOf(b) && JSON.stringify(first.map(s => s.sql)) !== JSON.stringify(second.map(s => s.sql))) {
        throw new Error(`${name}: the text changes with the limit (${a}, ${b})`)
      }
      // The page's statement reads one row more than the page (it tells whether a next page exists):
      // limit + 1 bound, or for a seek within the sizes, one more than the size written in.
      const size = sizeOf(a)
      const readsPage = (s: { sql: string, params: SqlValue[] }) => s.params.includes(a + 1) || (size !== 'bound' && new RegExp(`LIMIT ${size + 1}$`).test(s.sql))
      if (!first.some(readsPage)) throw new Error(`${name}: no statement reads ${a + 1} rows or its size's`)
    }), { numRuns: 300 })
  for (const [name, query] of Object.entries(queries)) {
    const texts = new Set<string>()
    for (let limit = 1; limit <= 500; limit++) texts.add(JSON.stringify((await statements(query, limit, 3, false)).map(s => s.sql)))
    t.ok(texts.size <= seekSizes.length + 1, `${name}: ${texts.size} statement texts for 500 page sizes`)
  }
})
