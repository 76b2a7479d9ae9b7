// One SQLite record table (books or students): statements prepared once, reads cached, writes group-committed.
import Database, { type Statement } from 'better-sqlite3'
import { LRUCache } from 'lru-cache'
import { uuidv7 } from 'uuidv7'
import { RevisionNotCurrentError, ValueTakenError } from '../../domain/outcomes.js'
import type { ListLimits } from '../list-sql.js'
import { derivedColumns, type TableSpec } from '../tables.js'
import type { EventFeed, EventLane, ExpectedRevisions, ExportOptions, GivenIdentity, IdempotencyEntry, ListCaller, ListedPage, ListQuery, Page, RecordExport, Versioned } from '../types.js'
import { recordColumns, SqliteListing } from './listing.js'
import type { ReadPool } from './read-pool.js'
import { eventEnvelope, type EventType } from '../events.js'
import type { EventWriter, SqliteEventFeed } from './events.js'
import { type ExportThreads, memoryExport } from './export.js'
import type { ExternalWrites } from './external-writes.js'
import type { GroupCommit } from './group-commit.js'
import { SqliteSearchIndex } from './search-index.js'
import type { SqliteIdempotency } from './idempotency.js'

type Row = Record<string, unknown>
type VersionedRow = Row & { revision: number }
/** What a replace or delete reads of the row first: its seq, revision, creation, unique and searched columns. */
type CurrentRow = VersionedRow & { seq: number, created_at: string }

const versioned = <T>({ revision, ...record }: VersionedRow): Versioned<T> => ({ record: record as T, revision })

export interface TableDependencies {
  idempotency: SqliteIdempotency
  writes: GroupCommit
  external: ExternalWrites
  /** Records kept in memory per table; 0 reads every record from the file. */
  cacheSize: number
  listLimits: ListLimits
  /** Where each change's event goes, in the change's transaction, and whose head a list may report. */
  events: EventWriter & Pick<EventFeed, 'head'> & Pick<SqliteEventFeed, 'headIn'>
  /** Reader threads for the list pages that are more than a seek; null reads them all here. */
  readers: ReadPool | null
  /** Threads that read exports of a file; null (a database in memory) reads them here. */
  exports: ExportThreads | null
}

// List pages are cheap to hold (a page of 20 is a few kB) and dear to read (a row costs about 1.5 µs).
const pagesCached = 256

/**
 * A page no creation can change, and the ids of its records: a page in creation order (ORDER BY seq),
 * unfiltered, ascending, with more records after it. A new row's seq is above every stored one, so it
 * lands after the page, whose records and next cursor stay as they are; only a change to one of its
 * own records changes it. A deletion can change any page (the record just after a page decides
 * whether it has a next one): it drops them all, as any write drops every other page.
 */
interface LastingPage<T> {
  page: Page<T>
  ids: Set<string>
}

const unfilteredCreationOrder = ({ equals, ranges, search, sort }: ListQuery): boolean =>
  equals.length === 0 && ranges.length === 0 && search === null && sort.key === 'created_at' && !sort.descending

export class SqliteTable<T, V extends object> {
  readonly #db: Database.Database
  readonly #spec: TableSpec<V>
  readonly #writable: string[]
  readonly #listing: SqliteListing<T>
  readonly #readers: ReadPool | null
  readonly #exports: ExportThreads | null
  readonly #get: Statement<[string], VersionedRow>
  readonly #current: Statement<[string], CurrentRow>
  readonly #insert: Statement<[Row]>
  readonly #update: Statement<[Row]>
  readonly #updateKeepingUnique: Statement<[Row]>
  readonly #delete: Statement<[string]>
  readonly #writes: GroupCommit
  readonly #external: ExternalWrites
  readonly #feed: TableDependencies['events']
  /** Recently read records and pages; emptied of whatever this process writes and of everything when another process writes. */
  readonly #records: LRUCache<string, Versioned<T>> | null
  readonly #pages: LRUCache<string, Page<T>> | null
  /** Pages no creation changes (LastingPage), apart: a creation empties #pages without looking at these. */
  readonly #lastingPages: LRUCache<string, LastingPage<T>> | null
  /** Counts the writes: a page read meanwhile (on a reader thread) may be stale, and is not cached. */
  #writesSeen = 0
  readonly #create: (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry, given?: GivenIdentity, lane?: EventLane) => Versioned<T>
  readonly #replace: (id: string, values: V, expected: ExpectedRevisions) => Versioned<T> | null
  readonly #remove: (id: string, expected: ExpectedRevisions) => boolean

  constructor (db: Database.Database, spec: TableSpec<V>, { idempotency, writes, external, cacheSize, listLimits, events, readers, exports }: TableDependencies) {
    this.#db = db
    this.#spec = spec
    this.#readers = readers
    this.#exports = exports
    this.#writes = writes
    this.#external = external
    this.#feed = events
    this.#records = cacheSize === 0 ? null : external.watch(new LRUCache<string, Versioned<T>>({ max: cacheSize }))
    this.#pages = cacheSize === 0 ? null : new LRUCache<string, Page<T>>({ max: pagesCached })
    this.#lastingPages = cacheSize === 0 ? null : new LRUCache<string, LastingPage<T>>({ max: pagesCached })
    external.watch({ clear: () => this.#dropPages(null) })
    const { table, idColumn, kind } = spec
    const writable = this.#writable = Object.keys(spec.writable)
    const all = recordColumns(spec as unknown as TableSpec<object>)
    const columns = all.join(', ')
    const derived = Object.keys(spec.derived)
    this.#listing = new SqliteListing<T>(db, spec as unknown as TableSpec<object>, listLimits)
    this.#get = db.prepare(`SELECT ${columns}, revision FROM ${table} WHERE ${idColumn} = ?`)
    this.#current = db.prepare(`SELECT ${['seq', 'revision', 'created_at', ...spec.unique, ...spec.list.searched].join(', ')} FROM ${table} WHERE ${idColumn} = ?`)
    // The stored record is exactly the values written (STRICT tables convert nothing), so writes build
    // it in JS rather than read it back with RETURNING, which costs a row object per write.
    this.#insert = db.prepare(`INSERT INTO ${table} (${[...all, ...derived].join(', ')}) VALUES (${[...all, ...derived].map(c => '@' + c).join(', ')})`)
    const update = (set: string[]) => db.prepare<[Row]>(
      `UPDATE ${table} SET ${[...set, ...derived, 'updated_at'].map(c => `${c} = @${c}`).join(', ')}, revision = revision + 1
       WHERE ${idColumn} = @${idColumn}`
    )
    this.#update = update(writable)
    // SQLite rewrites a column's index entries whenever the column is SET, even to the value it had:
    // one more page in the commit (63 against 43 µs for a lone update, issue 6). A replacement that
    // keeps the unique fields (most do) leaves them out.
    this.#updateKeepingUnique = update(writable.filter(c => !(spec.unique as string[]).includes(c)))
    this.#delete = db.prepare(`DELETE FROM ${table} WHERE ${idColumn} = ?`)

    const search = new SqliteSearchIndex(db, table, spec.list.searched)
    writes.join(search)
    const searched = (row: Row) => spec.list.searched.map(c => row[c])
    // Each write runs inside GroupCommit's IMMEDIATE transaction, so a check and its write see the same row.
    const current = (id: string, expected: ExpectedRevisions): CurrentRow | null => {
      const row = this.#current.get(id)
      if (row === undefined) return null
      if (expected !== null && !expected.includes(row.revision)) throw RevisionNotCurrentError.of(kind, expected, row.revision)
      return row
    }
    // In the write's transaction: the change and its event are kept together or not at all.
    const changed = (change: 'created' | 'replaced' | 'deleted', id: string, time: string, revision: number, record: unknown, lane: EventLane = 'live') => {
      const type = `${kind}.${change}` as EventType
      events.append(type, eventEnvelope(type, `${spec.path}/${id}`, time, id, revision, record), time, lane)
    }
    // No savepoints (GroupCommit): each write refuses before its first change, or undoes what it changed.
    this.#create = (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry, given?: GivenIdentity, lane?: EventLane) => {
      this.#dropPages({ created: true })
      const now = new Date()
      const time = now.toISOString()
      const createdAt = given?.createdAt ?? time
      const record = { [idColumn]: given?.id ?? uuidv7(), ...values, created_at: createdAt, updated_at: given?.updatedAt ?? createdAt }
      // A new row's revision is the column's default, 1.
      const created: Versioned<T> = { record: record as T, revision: 1 }
      // The key is claimed first: a request whose key another process stored meanwhile replays that
      // one's answer rather than meeting its record as a duplicate.
      const entry = remember?.(created)
      if (entry !== undefined) idempotency.store(entry, now.getTime())
      const row = { ...record, ...derivedColumns(this.#spec, values) }
      let seq: number
      try {
        seq = Number(this.#insert.run(row).lastInsertRowid)
      } catch (error) {
        // A failed statement undoes itself; the claim before it is given back.
        if (entry !== undefined) idempotency.release(entry)
        throw this.#refusal(error)
      }
      search.indexed(seq, searched(row))
      changed('created', record[idColumn] as string, time, 1, record, lane)
      return created
    }
    this.#replace = (id: string, values: V, expected: ExpectedRevisions) => {
      this.#records?.delete(id)
      this.#dropPages({ replaced: id })
      const row = current(id, expected)
      if (row === null) return null
      const keepsUnique = spec.unique.every(c => values[c] === row[c])
      const record = { [idColumn]: id, ...values, created_at: row.created_at, updated_at: new Date().toISOString() }
      const written = { ...record, ...derivedColumns(this.#spec, values) }
      try {
        ;(keepsUnique ? this.#updateKeepingUnique : this.#update).run(written)
      } catch (error) {
        throw this.#refusal(error)
      }
      const [before, after] = [searched(row), searched(written)]
      if (before.some((value, i) => value !== after[i])) {
        search.unindexed(row.seq, before)
        search.indexed(row.seq, after)
      }
      changed('replaced', id, record.updated_at, row.revision + 1, record)
      return { record: record as T, revision: row.revision + 1 }
    }
    this.#remove = (id: string, expected: ExpectedRevisions) => {
      this.#records?.delete(id)
      this.#dropPages(null)
      const row = current(id, expected)
      if (row === null) return false
      this.#delete.run(id)
      search.unindexed(row.seq, searched(row))
      // A deletion is the record's last change: its revision is one past the last one stored.
      changed('deleted', id, new Date().toISOString(), row.revision + 1, null)
      return true
    }
  }

  /**
   * Drops the pages a write makes stale (`null`: a deletion, or another process's writes: every page).
   * Called as the write runs inside its batch, after every read that came before it: a failed commit
   * leaves nothing stale either, since nothing new is cached here.
   */
  #dropPages (write: { created: true } | { replaced: string } | null): void {
    this.#writesSeen++
    this.#pages?.clear()
    const lasting = this.#lastingPages
    if (lasting === null || (write !== null && 'created' in write)) return
    if (write === null) return lasting.clear()
    const stale = [...lasting.entries()].filter(([, { ids }]) => ids.has(write.replaced))
    for (const [key] of stale) lasting.delete(key)
  }

  async list (query: ListQuery, limit: number, after: string | null, feedPosition = false, caller?: ListCaller): Promise<ListedPage<T>> {
    this.#external.check()
    // Read before the page, on the one connection: no write can fall between the two.
    const position = feedPosition ? await this.#feed.head() : null
    const key = `${JSON.stringify(query)}:${limit}:${after}`
    const cached = this.#lastingPages?.get(key)?.page ?? this.#pages?.get(key)
    if (cached !== undefined) return { ...cached, position }
    const writes = this.#writesSeen
    const page = this.#readers === null || this.#listing.seeks(query)
      ? await this.#listing.page(query, limit, after)
      : await this.#readers.page<T>(this.#spec.table as 'books' | 'students', query, limit, after, caller)
    if (writes === this.#writesSeen) {
      const idColumn = this.#spec.idColumn
      if (page.after === null || !unfilteredCreationOrder(query)) this.#pages?.set(key, page)
      else this.#lastingPages?.set(key, { page, ids: new Set(page.items.map(item => (item as Record<string, unknown>)[idColumn] as string)) })
    }
    return { ...page, position }
  }

  async export (query: ListQuery, { format, feedPosition = false }: ExportOptions): Promise<RecordExport> {
    const statements = this.#listing.everything(query)
    const fields = this.#listing.fields
    if (this.#exports === null) return memoryExport(this.#db, statements, fields, format, feedPosition ? () => this.#feed.headIn(this.#db) : null)
    return this.#exports.open(statements, fields, format, feedPosition)
  }

  async get (id: string): Promise<Versioned<T> | null> {
    this.#external.check()
    const cached = this.#records?.get(id)
    if (cached !== undefined) return cached
    const row = this.#get.get(id)
    if (row === undefined) return null
    const found = versioned<T>(row)
    this.#records?.set(id, found)
    return found
  }

  async create (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry, given?: GivenIdentity): Promise<Versioned<T>> {
    return this.#writes.run(() => this.#create(values, remember, given))
  }

  async createMany (records: { values: V, given: GivenIdentity }[]): Promise<(Versioned<T> | ValueTakenError)[]> {
    // One write of the batch: a record refused undoes itself (see #create), the others stay.
    return this.#writes.run(() => records.map(({ values, given }) => {
      try {
        return this.#create(values, undefined, given, 'imported')
      } catch (error) {
        if (error instanceof ValueTakenError) return error
        throw error
      }
    }))
  }

  async replace (id: string, values: V, expected: ExpectedRevisions): Promise<Versioned<T> | null> {
    return this.#writes.run(() => this.#replace(id, values, expected))
  }

  async delete (id: string, expected: ExpectedRevisions): Promise<boolean> {
    return this.#writes.run(() => this.#remove(id, expected))
  }

  /** A failed write statement's error: a unique value taken is the 409 naming the field; anything else as it is. */
  #refusal (error: unknown): unknown {
    const field = error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE'
      ? /\.(\w+)$/.exec(error.message)?.[1]
      : undefined
    return field !== undefined && (this.#writable.includes(field) || field === this.#spec.idColumn) ? new ValueTakenError(this.#spec.kind, field) : error
  }
}
