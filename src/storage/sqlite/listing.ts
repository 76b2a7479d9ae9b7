// How one SQLite connection answers a list page of a table: its dialect, its statements kept prepared, rows as records.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { LRUCache } from 'lru-cache'
import { toFts5 } from '../../domain/search/query.js'
import { type ListDialect, type ListLimits, ListStatements, type SqlValue } from '../list-sql.js'
import type { TableSpec } from '../tables.js'
import type { ListQuery, Page } from '../types.js'

// List statements differ by their filters' shapes; the common ones stay prepared.
const statementsCached = 256

function sqliteDialect (spec: TableSpec<object>, columns: string[]): ListDialect {
  const fts = `${spec.table}_fts`
  return {
    placeholder: n => `?${n}`,
    record: alias => columns.map(c => `${alias}.${c}`).join(', '),
    matches: (search, scope, add, where, tail) => `SELECT rowid AS seq FROM ${fts}
      WHERE ${[`${fts} MATCH ${add(toFts5(search, spec.list.searched, scope))}`, ...where('rowid')].join(' AND ')}${tail === undefined ? '' : ` ${tail('rowid')}`}`,
    // FTS5 takes the rowid as a bound on the terms' lists: a few seeks, not a pass over the matches.
    rowMatches: (alias, search, scope, add) => `EXISTS (SELECT 1 FROM ${fts} WHERE ${fts} MATCH ${add(toFts5(search, spec.list.searched, scope))} AND rowid = ${alias}.seq)`,
    streamsMatches: true,
    // Emails are ASCII, and the unique index is NOCASE: this seeks it.
    equalsIgnoringCase: (column, values) => `(${values.map(v => `${column} = ${v} COLLATE NOCASE`).join(' OR ')})`,
    seq: value => Number(value)
  }
}

/** The record's columns in SELECT order. */
export const recordColumns = (spec: TableSpec<object>): string[] => [spec.idColumn, ...Object.keys(spec.writable), 'created_at', 'updated_at']

export class SqliteListing<T> {
  readonly #db: Database.Database
  readonly #statements = new LRUCache<string, Statement>({ max: statementsCached })
  readonly #listing: ListStatements
  readonly #columns: string[]

  constructor (db: Database.Database, spec: TableSpec<object>, limits: ListLimits) {
    this.#db = db
    this.#columns = recordColumns(spec)
    this.#listing = new ListStatements(spec.table, spec.list, sqliteDialect(spec, this.#columns), limits, this.#columns.length)
  }

  /** Whether the page is one seek down an index: bounded by its size, never worth a trip to another thread. */
  seeks (query: ListQuery): boolean {
    return this.#listing.seeks(query)
  }

  /** The statements that read every record `query` matches, in its order (ListStatements.everything). */
  everything (query: ListQuery): { sql: string, params: SqlValue[] }[] {
    return this.#listing.everything(query)
  }

  /** The record's field names, in the order of a row's values. */
  get fields (): readonly string[] {
    return this.#columns
  }

  async page (query: ListQuery, limit: number, after: string | null): Promise<Page<T>> {
    const page = await this.#listing.page(query, limit, after, async (sql, params) => this.#run(sql, params))
    // Raw rows turned into records here cost about a quarter less than named rows (measured in the
    // list profile, issue 6); lists are the dearest reads.
    const names = this.#columns
    return {
      items: page.items.map(row => {
        const record: Record<string, unknown> = {}
        for (let i = 0; i < names.length; i++) record[names[i]!] = row[i]
        return record as T
      }),
      after: page.after
    }
  }

  #run (sql: string, params: SqlValue[]): SqlValue[][] {
    let statement = this.#statements.get(sql)
    if (statement === undefined) this.#statements.set(sql, statement = this.#db.prepare(sql).raw())
    return statement.all(Object.fromEntries(params.map((value, i) => [i + 1, value]))) as SqlValue[][]
  }
}
