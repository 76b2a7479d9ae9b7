// A list query as bounded SQL for either engine: chooses the access path from a fixed table, never the planner's guess.
import { exactText, exclusions, type SearchQuery, type SearchScope } from '../domain/search/query.js'
import type { ListSpec } from './tables.js'
import type { ListQuery, Page } from './types.js'

export type SqlValue = string | number | null
/**
 * Runs one list statement and returns its rows as arrays, columns in SELECT order. `planFixed`: the
 * best plan is the same whatever the parameters' values (a seek down the sort's index), so an engine
 * may plan it once and keep the plan. Every list statement's first column is never NULL.
 */
export type RunSql = (sql: string, params: SqlValue[], planFixed?: boolean) => Promise<SqlValue[][]>

/**
 * The LIMIT of a seek for a page of `limit`: one more than the smallest of a few sizes that holds the
 * page, written into the statement; beyond them (the contract's largest page is 100), a bound
 * parameter. PostgreSQL prices a LIMIT parameter as a tenth of the table, so at a million books the
 * plan it keeps looked dear and every run was planned again (about 100 µs for a page that runs in 30);
 * with a literal LIMIT one plan is kept. The sizes are the code's, never a request's number, and few:
 * a handful of statements per query shape, not one per page size.
 */
export const seekSizes = [1, 5, 10, 20, 50, 100]
function seekLimit (limit: number, p: Params): string {
  const size = seekSizes.find(size => size >= limit)
  return size === undefined ? p.add(limit + 1) : String(size + 1)
}

/** What differs between the engines' SQL for lists. */
export interface ListDialect {
  /** The n-th (1-based) parameter. */
  placeholder (n: number): string
  /** The record's columns for SELECT, each qualified with `alias`, in the order of the record's fields. */
  record (alias: string): string
  /**
   * A SELECT of the `seq` of the rows `search` finds in `scope`, where `where(seqColumn)` adds conditions
   * on seq; the compiled search (an FTS5 MATCH expression, tsqueries) goes in as parameters by `add`.
   */
  matches (search: SearchQuery, scope: SearchScope, add: (value: SqlValue) => string, where: (seqColumn: string) => string[], tail?: (seqColumn: string) => string): string
  /** The row `alias` is found by `search` in `scope`: a test of one row, not a scan. */
  rowMatches (alias: string, search: SearchQuery, scope: SearchScope, add: (value: SqlValue) => string): string
  /** True when matches come from an index in seq order (FTS5 rowids): a search is then walked through it. */
  streamsMatches: boolean
  /** `column` equals one of `values` (placeholders), ignoring ASCII letter case. */
  equalsIgnoringCase (column: string, values: string[]): string
  /** A position's seq as the engine's driver takes it. */
  seq (value: string): SqlValue
}

/**
 * Numbers the code sets, never a request, and safe integers: the statements carry them as literals
 * (what a request gives is always a bound parameter; its page size only picks one of seekSizes).
 */
export interface ListLimits {
  /** Most rows one request may read through an index or a search, beyond its page. */
  cap: number
}

/**
 * The same on both engines, so that they accept and refuse the same queries. Measured on SQLite at
 * 200,000 books: counting a common term's first 5,001 matches cost 2 ms of a 2.4 ms page, 2,001 about
 * 0.6 ms (BENCHMARKS.md has the figures at 1,000,000).
 */
export const defaultListLimits: ListLimits = { cap: 2000 }

/**
 * Entries a search in creation order walks before it counts its matches where they do not stream
 * (PostgreSQL): a word in more than about one record in ten fills a page of 20 within them.
 */
const probeEntries = 256

/** Every record in creation order: what a list without parameters asks for. */
export const creationOrder: ListQuery = { equals: [], ranges: [], search: null, sort: { key: 'created_at', descending: false } }

/** A search matching more records than `cap` cannot be sorted by anything but relevance or creation order. */
export class SearchTooBroadError extends Error {
  override name = 'SearchTooBroadError'
  readonly cap: number

  constructor (cap: number) {
    super(`the search matches more than ${cap} records`)
    this.cap = cap
  }
}

/** A list page not read within the time one request may take (waiting for a reader included). */
export class ListTimeoutError extends Error {
  override name = 'ListTimeoutError'
  readonly budgetMs: number

  constructor (budgetMs: number) {
    super(`the page was not read within ${budgetMs} ms`)
    this.budgetMs = budgetMs
  }
}

/** Where a page ends: the last row's sort keys; in a relevance order, also its tier (`k` null: the tier's start). */
type Position = { k: SqlValue[] } | { t: number, k: SqlValue[] | null }

/** A condition on one row beyond the query's filters; one that `drives` may be counted and drive the page as a filter does. */
interface Condition { on: (alias: string, p: Params) => string, drives: boolean }

/** A query as the statements below run it: a relevance tier narrows its search and adds conditions. */
interface Part extends ListQuery {
  scope: SearchScope
  extra: Condition[]
  /** The conditions are an equality an index orders by seq after: the page is one seek down it. */
  seeks?: boolean
}

/** A query as asked: its search over every field, nothing added. */
const whole = (query: ListQuery): Part => ({ ...query, scope: 'all', extra: [] })

/** Collects a statement's parameters and hands out their placeholders. */
class Params {
  readonly values: SqlValue[] = []
  readonly dialect: ListDialect

  constructor (dialect: ListDialect) {
    this.dialect = dialect
  }

  add (value: SqlValue): string {
    this.values.push(value)
    return this.dialect.placeholder(this.values.length)
  }
}

export class ListStatements {
  readonly #table: string
  readonly #spec: ListSpec
  readonly #dialect: ListDialect
  readonly #limits: ListLimits
  readonly #recordWidth: number

  constructor (table: string, spec: ListSpec, dialect: ListDialect, limits: ListLimits, recordWidth: number) {
    this.#table = table
    this.#spec = spec
    this.#dialect = dialect
    this.#limits = limits
    this.#recordWidth = recordWidth
  }

  /** Whether page() answers `query` with one seek down an index (no search, no filter or one an index pairs with the sort). */
  seeks (query: ListQuery): boolean {
    const part = whole(query)
    return query.search === null && (this.#conditions(part).length === 0 || this.#seekable(part))
  }

  /**
   * Statements that read every record `query` matches, in its order, record columns only (one per
   * relevance tier): an export runs them one after another in one snapshot and streams their rows.
   * Unbounded by design, unlike page(): no cap, so a broad search may be sorted by anything.
   */
  everything (query: ListQuery): { sql: string, params: SqlValue[] }[] {
    const parts = query.search !== null && query.sort.key === 'relevance' ? this.#tiers(query, query.search) : [whole(query)]
    return parts.map(part => {
      const p = new Params(this.#dialect)
      const source = part.search === null ? `${this.#table} t` : `(${this.#matches(part)(p)}) d CROSS JOIN ${this.#table} t`
      const where = [...part.search === null ? [] : ['t.seq = d.seq'], ...this.#filters('t', part, p, false)]
      return { sql: `SELECT ${this.#dialect.record('t')} FROM ${source} ${this.#where(where)} ORDER BY ${this.#order('t', part.sort)}`, params: p.values }
    })
  }

  async page (query: ListQuery, limit: number, after: string | null, run: RunSql): Promise<Page<SqlValue[]>> {
    const position = after === null ? null : JSON.parse(after) as Position
    const { search, sort } = query
    if (search !== null && sort.key === 'relevance') return this.#ranked(query, search, limit, position as Extract<Position, { t: number }> | null, run)
    return this.#part(whole(query), limit, position === null ? null : position.k, run)
  }

  async #part (query: Part, limit: number, keyset: SqlValue[] | null, run: RunSql): Promise<Page<SqlValue[]>> {
    const { search, sort } = query
    const filters = this.#conditions(query)
    if (search !== null) {
      if (sort.key === 'created_at' && filters.length === 0) {
        // Matches that stream in creation order, unfiltered, fill the page as they come: nothing to count.
        if (this.#dialect.streamsMatches) return this.#walk(query, limit, keyset, run, true)
        // Elsewhere, a common word fills its page within the first entries walked, while counting its
        // matches reads them all (a GIN index's whole list: 20 ms of PostgreSQL's CPU for a word in
        // 14 % of 1,000,000 books); only a page the first few entries leave short is worth a count.
        const probed = await this.#walk(query, limit, keyset, run, true, Math.min(probeEntries, this.#limits.cap))
        if (probed.items.length === limit) return probed
      }
      const driven = await this.#count(this.#matches(query), run) <= this.#limits.cap
        ? await this.#driven(query, limit, keyset, run, this.#matches(query))
        : null
      if (driven !== null) return driven
      if (sort.key !== 'created_at') throw new SearchTooBroadError(this.#limits.cap)
      return this.#walk(query, limit, keyset, run, true)
    }
    if (filters.length === 0 || query.seeks === true || this.#seekable(query)) return this.#seek(query, limit, keyset, run)
    // Probe-then-choose: the filter with the fewest matches (each counted no further than cap) drives;
    // when every filter matches more than cap rows, the sort order is walked, cap entries at a time.
    let best: { count: number, filter: typeof filters[number] } | null = null
    for (const filter of filters) {
      const count = await this.#count(p => `SELECT 1 FROM ${this.#table} d WHERE ${filter('d', p)}`, run)
      if (best === null || count < best.count) best = { count, filter }
    }
    const driver = best!.filter
    const driven = best!.count <= this.#limits.cap
      ? await this.#driven(query, limit, keyset, run, p => `SELECT d.seq FROM ${this.#table} d WHERE ${driver('d', p)}`)
      : null
    return driven ?? await this.#walk(query, limit, keyset, run, false)
  }

  #seekable ({ equals, ranges, sort, extra }: Part): boolean {
    const [only] = equals
    return equals.length === 1 && ranges.length === 0 && extra.length === 0 && only!.values.length === 1 && (this.#spec.seekable[only!.field]?.includes(sort.key) ?? false)
  }

  #keys (sort: ListQuery['sort']): string[] {
    return [...this.#spec.sorts[sort.key]!, 'seq']
  }

  #order (alias: string, sort: ListQuery['sort']): string {
    return this.#keys(sort).map(c => `${alias}.${c}${sort.descending ? ' DESC' : ''}`).join(', ')
  }

  /** Rows after `keyset` in the sort's direction, as one row-value comparison (an index seek, never an OR). */
  #after (alias: string, sort: ListQuery['sort'], keyset: SqlValue[] | null, p: Params): string[] {
    if (keyset === null) return []
    const keys = this.#keys(sort)
    const values = keyset.map((v, i) => i === keys.length - 1 ? this.#dialect.seq(String(v)) : v)
    const op = sort.descending ? '<' : '>'
    return keys.length === 1
      ? [`${alias}.seq ${op} ${p.add(values[0]!)}`]
      : [`(${keys.map(c => `${alias}.${c}`).join(', ')}) ${op} (${values.map(v => p.add(v)).join(', ')})`]
  }

  #equals (alias: string, { field, values }: ListQuery['equals'][number], p: Params): string {
    const { column, ignoringCase } = this.#spec.equals[field]!
    const placeholders = values.map(v => p.add(v))
    if (ignoringCase === true) return this.#dialect.equalsIgnoringCase(`${alias}.${column}`, placeholders)
    return placeholders.length === 1 ? `${alias}.${column} = ${placeholders[0]}` : `${alias}.${column} IN (${placeholders.join(', ')})`
  }

  #range (alias: string, { field, min, max }: ListQuery['ranges'][number], p: Params): string {
    const { column, lowest, maxIsExclusive } = this.#spec.ranges[field]!
    const low = min ?? lowest ?? null
    const conditions = []
    if (low !== null) conditions.push(`${alias}.${column} >= ${p.add(low)}`)
    if (max !== null) conditions.push(`${alias}.${column} ${maxIsExclusive === true ? '<' : '<='} ${p.add(max)}`)
    return conditions.join(' AND ')
  }

  /** Each filter of the query (search aside) that may drive a page, as a condition on a table alias. */
  #conditions (query: Part): ((alias: string, p: Params) => string)[] {
    return [
      ...query.equals.map(e => (alias: string, p: Params) => this.#equals(alias, e, p)),
      ...query.ranges.map(r => (alias: string, p: Params) => this.#range(alias, r, p)),
      ...query.extra.filter(c => c.drives).map(c => c.on)
    ]
  }

  /** Every filter of the query on `alias`, the search included unless the rows come from it. */
  #filters (alias: string, query: Part, p: Params, withSearch: boolean): string[] {
    const conditions = [...this.#conditions(query), ...query.extra.filter(c => !c.drives).map(c => c.on)].map(condition => condition(alias, p))
    if (withSearch && query.search !== null) conditions.push(this.#dialect.rowMatches(alias, query.search, query.scope, v => p.add(v)))
    return conditions
  }

  /** A SELECT of the seqs the query's search finds in its scope. */
  #matches (query: Part, where: (seq: string) => string[] = () => [], tail?: (seq: string) => string): (p: Params) => string {
    return p => this.#dialect.matches(query.search!, query.scope, v => p.add(v), where, tail)
  }

  /** How many rows `source` yields, counting no further than cap + 1. */
  async #count (source: (p: Params) => string, run: RunSql): Promise<number> {
    const p = new Params(this.#dialect)
    const sql = `SELECT count(*) FROM (${source(p)} LIMIT ${this.#limits.cap + 1}) c`
    const [[count]] = await run(sql, p.values) as [[number | string]]
    return Number(count)
  }

  #select (alias: string, sort: ListQuery['sort']): string {
    return [this.#dialect.record(alias), ...this.#keys(sort).map(c => `${alias}.${c}`)].join(', ')
  }

  /** Turns rows (record, then sort keys) into a page; `next` gives the position when the rows end the window. */
  #pageOf (rows: SqlValue[][], limit: number, next: SqlValue[] | null): Page<SqlValue[]> {
    const more = rows.length > limit
    const items = more ? rows.slice(0, limit) : rows
    const last = more ? items.at(-1)!.slice(this.#recordWidth) : next
    return { items: items.map(row => row.slice(0, this.#recordWidth)), after: last === null ? null : JSON.stringify({ k: last.map(String) }) }
  }

  async #seek (query: Part, limit: number, keyset: SqlValue[] | null, run: RunSql): Promise<Page<SqlValue[]>> {
    const p = new Params(this.#dialect)
    const where = [...this.#filters('t', query, p, false), ...this.#after('t', query.sort, keyset, p)]
    const sql = `SELECT ${this.#select('t', query.sort)} FROM ${this.#table} t ${this.#where(where)}
      ORDER BY ${this.#order('t', query.sort)} LIMIT ${seekLimit(limit, p)}`
    return this.#pageOf(await run(sql, p.values, true), limit, null)
  }

  /**
   * At most cap rows, found through `driver`, filtered, sorted and paged in full; null when the driver
   * matches more than cap rows after all (writes between the count and this statement, on PostgreSQL),
   * since a page of an arbitrary cap of them could leave records out.
   */
  async #driven (query: Part, limit: number, keyset: SqlValue[] | null, run: RunSql, driver: (p: Params) => string): Promise<Page<SqlValue[]> | null> {
    const p = new Params(this.#dialect)
    const source = `${driver(p)} LIMIT ${this.#limits.cap + 1}`
    const where = ['t.seq = d.seq', ...this.#filters('t', query, p, false), ...this.#after('t', query.sort, keyset, p)]
    const rows = await run(`WITH d AS MATERIALIZED (${source})
      SELECT ${this.#select('t', query.sort)}, (SELECT count(*) FROM d) FROM d CROSS JOIN ${this.#table} t WHERE ${where.join(' AND ')}
      ORDER BY ${this.#order('t', query.sort)} LIMIT ${p.add(limit + 1)}`, p.values)
    const found = rows.length > 0 ? Number(rows[0]!.at(-1)) : await this.#count(driver, run)
    return found > this.#limits.cap ? null : this.#pageOf(rows.map(row => row.slice(0, -1)), limit, null)
  }

  /**
   * The next cap entries of the sort order (or, for a search the engine streams, of its matches in
   * creation order), filtered: a page may be short, and then continues after the last entry read.
   */
  async #walk (query: Part, limit: number, keyset: SqlValue[] | null, run: RunSql, searching: boolean, entries = this.#limits.cap): Promise<Page<SqlValue[]>> {
    const { sort } = query
    const stream = searching && this.#dialect.streamsMatches
    const window = (p: Params, columns: string, bound: string): string => {
      if (stream) {
        const direction = sort.descending ? ' DESC' : ''
        return this.#matches(query, seq => keyset === null ? [] : [`${seq} ${sort.descending ? '<' : '>'} ${p.add(this.#dialect.seq(String(keyset[0])))}`],
          seq => `ORDER BY ${seq}${direction} ${bound}`)(p)
      }
      const where = [...this.#after('w', sort, keyset, p), ...this.#leadingRanges('w', query, p)]
      return `SELECT ${columns} FROM ${this.#table} w ${this.#where(where)} ORDER BY ${this.#order('w', sort)} ${bound}`
    }
    const p = new Params(this.#dialect)
    const bound = `LIMIT ${entries}`
    // A walk filters the window's rows as the index scan reads them; a stream joins the matches to their rows.
    const sql = stream
      ? this.#joined(window(p, 'w.seq', bound), sort, this.#filters('t', query, p, false), limit, p)
      : `SELECT ${this.#select('t', sort)} FROM (${window(p, 'w.*', bound)}) t ${this.#where(this.#filters('t', query, p, true))}
        ORDER BY ${this.#order('t', sort)} LIMIT ${p.add(limit + 1)}`
    const rows = await run(sql, p.values)
    if (rows.length > limit) return this.#pageOf(rows, limit, null)
    // The window's last entry: the next page starts after it, or the walk is over when there is none.
    const q = new Params(this.#dialect)
    const [last] = await run(window(q, this.#keys(sort).map(c => `w.${c}`).join(', '), `LIMIT 1 OFFSET ${entries - 1}`), q.values)
    return this.#pageOf(rows, limit, last ?? null)
  }

  #where (conditions: string[]): string {
    return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  }

  /**
   * The rows of `source` (matches streamed in seq order, at most cap of them), filtered, in the same
   * order. CROSS JOIN makes SQLite read the source first (it might otherwise walk the whole sort index,
   * testing each row); ordering by the source's own column lets it keep the stream's order and stop at
   * the page (ordered by t.seq, it sorted all cap rows first: 655 against 84 µs at 1,000,000 books).
   */
  #joined (source: string, sort: ListQuery['sort'], where: string[], limit: number, p: Params): string {
    return `SELECT ${this.#select('t', sort)} FROM (${source}) d CROSS JOIN ${this.#table} t WHERE ${['t.seq = d.seq', ...where].join(' AND ')}
      ORDER BY d.seq${sort.descending ? ' DESC' : ''} LIMIT ${p.add(limit + 1)}`
  }

  /** Ranges on the sort's leading column bound the walk's index range itself. */
  #leadingRanges (alias: string, query: Part, p: Params): string[] {
    const leading = this.#spec.sorts[query.sort.key]![0]
    return query.ranges.filter(r => this.#spec.ranges[r.field]!.column === leading).map(r => this.#range(alias, r, p))
  }

  /**
   * Relevance: the records whose first searched field (a title, a name) is exactly the query's text,
   * then those with every term to search for in that field, then the other matches; newest first in
   * each tier. Each tier is walked as a search in creation order is, so a page costs what one such
   * page does, and every match of the whole collection is ranked.
   */
  async #ranked (query: ListQuery, search: SearchQuery, limit: number, position: { t: number, k: SqlValue[] | null } | null, run: RunSql): Promise<Page<SqlValue[]>> {
    const tiers = this.#tiers(query, search)
    const items: SqlValue[][] = []
    let keyset = position?.k ?? null
    for (let tier = position?.t ?? 0; tier < tiers.length; tier++, keyset = null) {
      if (items.length === limit) return { items, after: JSON.stringify({ t: tier, k: null }) }
      const page = await this.#part(tiers[tier]!, limit - items.length, keyset, run)
      items.push(...page.items)
      if (page.after !== null) return { items, after: JSON.stringify({ t: tier, k: (JSON.parse(page.after) as { k: SqlValue[] }).k }) }
    }
    return { items, after: null }
  }

  #tiers (query: ListQuery, search: SearchQuery): Part[] {
    const byCreation = { ...query, sort: { key: 'created_at', descending: true } }
    const first = this.#spec.searched[0]!
    const exact = exactText(search)
    const excluded = exclusions(search)
    const tiers: Part[] = []
    let notExact: Condition[] = []
    if (exact !== null) {
      // A title made of exactly the words holds them all: only the exclusions are left to test.
      const unexcluded: Condition[] = excluded === null ? [] : [{ on: (alias, p) => `NOT ${this.#dialect.rowMatches(alias, excluded, 'all', v => p.add(v))}`, drives: false }]
      // Without filters or exclusions, a seek down the (title, seq) index that sorting by title uses:
      // a common one-word title ("Dune") is held by thousands of books, too many to drive a page.
      const seeks = query.equals.length === 0 && query.ranges.length === 0 && excluded === null
      tiers.push({ ...byCreation, search: null, scope: 'all', seeks, extra: [{ on: (alias, p) => `${alias}.${first} = ${p.add(exact)}`, drives: true }, ...unexcluded] })
      notExact = [{ on: (alias, p) => `${alias}.${first} <> ${p.add(exact)}`, drives: false }]
    }
    if (this.#spec.searched.length === 1) return [...tiers, { ...byCreation, scope: 'all', extra: notExact }]
    return [...tiers, { ...byCreation, scope: 'first', extra: notExact }, { ...byCreation, scope: 'rest', extra: [] }]
  }
}
