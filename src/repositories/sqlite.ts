// SQLite implementation of the repositories: one generic table store, statements prepared once.
import Database, { type Statement } from 'better-sqlite3'
import { LRUCache } from 'lru-cache'
import { uuidv7 } from 'uuidv7'
import type { Book, Student } from '../api-types.js'
import { type Config, defaults } from '../config.js'
import { type DatabaseOptions, openDatabase } from '../db/database.js'
import { DuplicateError, PreconditionFailedError } from '../errors.js'
import { type ApiKeyInfo, isScope } from '../api-keys.js'
import type {
  ApiKeyRepository, BookValues, ExpectedRevisions, IdempotencyEntry, IdempotencyStore, Page, Repositories, StudentValues, Versioned
} from './types.js'

interface TableSpec<V> {
  table: string
  /** Singular noun used in error messages. */
  kind: string
  idColumn: string
  /** Every writable field, so that a field added to the contract but not here fails to compile. */
  writable: Record<keyof V & string, true>
  /** The writable fields with a UNIQUE index. */
  unique: (keyof V & string)[]
}

type Row = Record<string, unknown>
type VersionedRow = Row & { revision: number }

const versioned = <T>({ revision, ...record }: VersionedRow): Versioned<T> => ({ record: record as T, revision })

/** Idempotency entries: stored with their record, forgotten once expired (swept on every keyed create). */
class SqliteIdempotency implements IdempotencyStore {
  readonly #find: Statement<[string, string, number], { fingerprint: string, status: number, headers: string, body: string }>
  readonly #insert: Statement<[Omit<IdempotencyEntry, 'response'> & { status: number, headers: string, body: string }]>
  readonly #sweep: Statement<[number]>

  constructor (db: Database.Database) {
    this.#find = db.prepare('SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = ? AND key = ? AND expires_at > ?')
    this.#insert = db.prepare(`INSERT INTO idempotency_keys (scope, key, fingerprint, status, headers, body, expires_at)
      VALUES (@scope, @key, @fingerprint, @status, @headers, @body, @expiresAt)`)
    // The index on expires_at keeps this cheap, so no separate cleanup job is needed.
    this.#sweep = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?')
  }

  async find (scope: string, key: string, now: number) {
    const row = this.#find.get(scope, key, now)
    if (row === undefined) return null
    return { fingerprint: row.fingerprint, response: { status: row.status, headers: JSON.parse(row.headers), body: row.body } }
  }

  /** Call inside the record's transaction. */
  store ({ response, ...entry }: IdempotencyEntry, now: number): void {
    this.#sweep.run(now)
    this.#insert.run({ ...entry, status: response.status, headers: JSON.stringify(response.headers), body: response.body })
  }

  sweep (now: number): void {
    this.#sweep.run(now)
  }
}

/**
 * Notices commits made by other connections to the file (the keys CLI, sqlite3, another process) so
 * that caches never outlive them. PRAGMA data_version changes only for such commits; reading it costs
 * about a third of a point lookup, so it is read at most once per event-loop turn: a request is
 * answered from state no older than the turn in which it was read from its socket.
 */
class ExternalWrites {
  readonly #dataVersion: Statement<[], number>
  readonly #caches: { clear (): void }[] = []
  #seen: number
  #checkedThisTurn = false
  readonly #endTurn = () => { this.#checkedThisTurn = false }

  constructor (db: Database.Database) {
    this.#dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
    this.#seen = this.#dataVersion.get()!
  }

  /** A cache to empty whenever another connection commits. */
  watch<C extends { clear (): void }> (cache: C): C {
    this.#caches.push(cache)
    return cache
  }

  /** Call before answering from a cache. */
  check (): void {
    if (this.#checkedThisTurn) return
    this.#checkedThisTurn = true
    setImmediate(this.#endTurn)
    const version = this.#dataVersion.get()!
    if (version === this.#seen) return
    this.#seen = version
    for (const cache of this.#caches) cache.clear()
  }
}

interface PendingWrite {
  write: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: the writes that arrive within one event-loop tick run in ONE transaction, each in a
 * savepoint of its own (a db.transaction() function called inside a transaction is one), so a write
 * that fails (409, 412) rolls back alone. A commit is the dearest part of a write, and one commit for
 * the batch instead of one per write is what pays (issue 6). Every write is acknowledged only after
 * the COMMIT, so an acknowledged write is as durable as before; a failed COMMIT fails every write of
 * the batch. The transaction never spans an await: the batch runs synchronously from BEGIN to COMMIT.
 */
class GroupCommit {
  readonly #db: Database.Database
  readonly #begin: Statement<[]>
  readonly #commit: Statement<[]>
  readonly #rollback: Statement<[]>
  #queue: PendingWrite[] = []

  constructor (db: Database.Database) {
    this.#db = db
    // IMMEDIATE takes the write lock before the first read, so a check and its write see the same row
    // even if another connection (another process) writes to the file.
    this.#begin = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#rollback = db.prepare('ROLLBACK')
  }

  /** Runs `write` (a db.transaction() function, so a savepoint here) in the next batch. */
  run<R> (write: () => R): Promise<R> {
    return new Promise((resolve, reject) => {
      // setImmediate runs after the poll phase, so every request read in this tick joins the batch.
      if (this.#queue.length === 0) setImmediate(() => this.flush())
      this.#queue.push({ write, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  /** Commits the pending writes now (also before the database closes), then settles their promises. */
  flush (): void {
    const batch = this.#queue
    if (batch.length === 0) return
    this.#queue = []
    const outcomes: { ok: boolean, value: unknown }[] = []
    try {
      this.#begin.run()
      for (const { write } of batch) {
        try {
          outcomes.push({ ok: true, value: write() })
        } catch (error) {
          // Some failures (disk full, I/O error, a trigger's RAISE(ROLLBACK)) end the whole transaction:
          // the batch's earlier writes are gone and later ones would commit on their own, so stop here.
          if (!this.#db.inTransaction) throw error
          outcomes.push({ ok: false, value: error })
        }
      }
      this.#commit.run()
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run()
      for (const pending of batch) pending.reject(error)
      return
    }
    batch.forEach((pending, i) => {
      const { ok, value } = outcomes[i]!
      if (ok) pending.resolve(value)
      else pending.reject(value)
    })
  }
}

interface TableDependencies {
  idempotency: SqliteIdempotency
  writes: GroupCommit
  external: ExternalWrites
  /** Records kept in memory per table; 0 reads every record from the file. */
  cacheSize: number
}

// List pages are cheap to hold (a page of 20 is a few kB) and dear to read (a row costs about 1.5 µs).
const pagesCached = 256

class SqliteTable<T, V extends object> {
  readonly #spec: TableSpec<V>
  readonly #writable: string[]
  /** The record's columns in SELECT order; list rows carry seq after them. */
  readonly #columns: string[]
  readonly #list: Statement<[number, number], unknown[]>
  readonly #get: Statement<[string], VersionedRow>
  readonly #current: Statement<[string], VersionedRow>
  readonly #insert: Statement<[Row]>
  readonly #update: Statement<[Row]>
  readonly #updateKeepingUnique: Statement<[Row]>
  readonly #delete: Statement<[string]>
  readonly #writes: GroupCommit
  readonly #external: ExternalWrites
  /** Recently read records and pages; emptied of whatever this process writes and of everything when another process writes. */
  readonly #records: LRUCache<string, Versioned<T>> | null
  readonly #pages: LRUCache<string, Page<T>> | null
  readonly #create: (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry) => Versioned<T>
  readonly #replace: (id: string, values: V, expected: ExpectedRevisions) => Versioned<T> | null
  readonly #remove: (id: string, expected: ExpectedRevisions) => boolean

  constructor (db: Database.Database, spec: TableSpec<V>, { idempotency, writes, external, cacheSize }: TableDependencies) {
    this.#spec = spec
    this.#writes = writes
    this.#external = external
    this.#records = cacheSize === 0 ? null : external.watch(new LRUCache<string, Versioned<T>>({ max: cacheSize }))
    this.#pages = cacheSize === 0 ? null : external.watch(new LRUCache<string, Page<T>>({ max: pagesCached }))
    const { table, idColumn, kind } = spec
    const writable = this.#writable = Object.keys(spec.writable)
    const all = this.#columns = [idColumn, ...writable, 'created_at', 'updated_at']
    const columns = all.join(', ')
    // Raw rows turned into records here cost about a quarter less than named rows with seq then
    // dropped by rest-destructuring (measured in the list profile, issue 6); lists are the dearest reads.
    this.#list = db.prepare<[number, number], unknown[]>(`SELECT ${columns}, seq FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`).raw()
    this.#get = db.prepare(`SELECT ${columns}, revision FROM ${table} WHERE ${idColumn} = ?`)
    this.#current = db.prepare(`SELECT ${['revision', 'created_at', ...spec.unique].join(', ')} FROM ${table} WHERE ${idColumn} = ?`)
    // The stored record is exactly the values written (STRICT tables convert nothing), so writes build
    // it in JS rather than read it back with RETURNING, which costs a row object per write.
    this.#insert = db.prepare(`INSERT INTO ${table} (${columns}) VALUES (${all.map(c => '@' + c).join(', ')})`)
    const update = (set: string[]) => db.prepare<[Row]>(
      `UPDATE ${table} SET ${[...set, 'updated_at'].map(c => `${c} = @${c}`).join(', ')}, revision = revision + 1
       WHERE ${idColumn} = @${idColumn}`
    )
    this.#update = update(writable)
    // SQLite rewrites a column's index entries whenever the column is SET, even to the value it had:
    // one more page in the commit (63 against 43 µs for a lone update, issue 6). A replacement that
    // keeps the unique fields (most do) leaves them out.
    this.#updateKeepingUnique = update(writable.filter(c => !(spec.unique as string[]).includes(c)))
    this.#delete = db.prepare(`DELETE FROM ${table} WHERE ${idColumn} = ?`)

    // Each write runs inside GroupCommit's IMMEDIATE transaction, so a check and its write see the same row.
    const current = (id: string, expected: ExpectedRevisions): VersionedRow | null => {
      const row = this.#current.get(id)
      if (row === undefined) return null
      if (expected !== null && !expected.includes(row.revision)) throw new PreconditionFailedError(kind)
      return row
    }
    // Called inside the batch's transaction, these run as savepoints: a failure undoes only its own write.
    this.#create = db.transaction((values: V, remember?: (created: Versioned<T>) => IdempotencyEntry) => {
      this.#pages?.clear()
      const now = new Date()
      const record = { [idColumn]: uuidv7(), ...values, created_at: now.toISOString(), updated_at: now.toISOString() }
      this.#insert.run(record)
      // A new row's revision is the column's default, 1.
      const created: Versioned<T> = { record: record as T, revision: 1 }
      if (remember !== undefined) idempotency.store(remember(created), now.getTime())
      return created
    })
    this.#replace = db.transaction((id: string, values: V, expected: ExpectedRevisions) => {
      this.#forget(id)
      const row = current(id, expected)
      if (row === null) return null
      const keepsUnique = spec.unique.every(c => values[c] === row[c])
      const record = { [idColumn]: id, ...values, created_at: row.created_at, updated_at: new Date().toISOString() }
      ;(keepsUnique ? this.#updateKeepingUnique : this.#update).run(record)
      return { record: record as T, revision: row.revision + 1 }
    })
    this.#remove = db.transaction((id: string, expected: ExpectedRevisions) => {
      this.#forget(id)
      return current(id, expected) !== null && this.#delete.run(id).changes > 0
    })
  }

  /**
   * Drops what a write to `id` makes stale. Called as the write runs inside its batch, after every read
   * that came before it: a failed commit leaves nothing stale either, since nothing new is cached here.
   */
  #forget (id: string): void {
    this.#records?.delete(id)
    this.#pages?.clear()
  }

  async list (limit: number, after: string | null): Promise<Page<T>> {
    this.#external.check()
    const key = `${limit}:${after}`
    const cached = this.#pages?.get(key)
    if (cached !== undefined) return cached
    const page = this.#read(limit, after)
    this.#pages?.set(key, page)
    return page
  }

  #read (limit: number, after: string | null): Page<T> {
    // One extra row tells whether another page follows without a COUNT.
    const rows = this.#list.all(after === null ? 0 : Number(after), limit + 1)
    const more = rows.length > limit
    const page = more ? rows.slice(0, limit) : rows
    const names = this.#columns
    return {
      items: page.map(row => {
        const record: Row = {}
        for (let i = 0; i < names.length; i++) record[names[i]!] = row[i]
        return record as T
      }),
      after: more ? String(page.at(-1)?.[names.length]) : null
    }
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

  async create (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry): Promise<Versioned<T>> {
    return this.#writes.run(() => this.#write(() => this.#create(values, remember)))
  }

  async replace (id: string, values: V, expected: ExpectedRevisions): Promise<Versioned<T> | null> {
    return this.#writes.run(() => this.#write(() => this.#replace(id, values, expected)))
  }

  async delete (id: string, expected: ExpectedRevisions): Promise<boolean> {
    return this.#writes.run(() => this.#remove(id, expected))
  }

  /** Runs a write, turning a unique-constraint failure into a DuplicateError naming the field. */
  #write<R> (write: () => R): R {
    try {
      return write()
    } catch (error) {
      const field = error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE'
        ? /\.(\w+)$/.exec(error.message)?.[1]
        : undefined
      if (field !== undefined && this.#writable.includes(field)) throw new DuplicateError(this.#spec.kind, field)
      throw error
    }
  }
}

interface ApiKeyRow {
  key_id: string
  name: string
  scopes: string
  secret_hash: Buffer
  created_at: string
  revoked_at: string | null
}

function keyInfo (row: ApiKeyRow): ApiKeyInfo {
  return { key_id: row.key_id, name: row.name, scopes: row.scopes.split(' ').filter(isScope), created_at: row.created_at, revoked_at: row.revoked_at }
}

function sqliteApiKeys (db: Database.Database, external: ExternalWrites): ApiKeyRepository {
  // Every request with a key reads its row; the few keys there are stay in memory until one changes.
  const known = external.watch(new Map<string, ApiKeyInfo & { secretHash: Buffer }>())
  const insert = db.prepare<[ApiKeyRow]>(
    'INSERT INTO api_keys (key_id, name, scopes, secret_hash, created_at, revoked_at) VALUES (@key_id, @name, @scopes, @secret_hash, @created_at, @revoked_at)'
  )
  const find = db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE key_id = ?')
  const list = db.prepare<[], ApiKeyRow>('SELECT * FROM api_keys ORDER BY created_at, key_id')
  const revoke = db.prepare<[string, string]>('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL')
  return {
    async create ({ keyId, name, scopes, secretHash }) {
      const row = { key_id: keyId, name, scopes: scopes.join(' '), secret_hash: secretHash, created_at: new Date().toISOString(), revoked_at: null }
      insert.run(row)
      known.clear()
      return keyInfo(row)
    },
    async find (keyId) {
      external.check()
      const cached = known.get(keyId)
      if (cached !== undefined) return cached
      const row = find.get(keyId)
      if (row === undefined) return null
      const found = { ...keyInfo(row), secretHash: row.secret_hash }
      known.set(keyId, found)
      return found
    },
    async list () {
      return list.all().map(keyInfo)
    },
    async revoke (keyId) {
      known.clear()
      return revoke.run(new Date().toISOString(), keyId).changes > 0
    }
  }
}

export interface RepositoryOptions extends DatabaseOptions {
  /** Records of each table kept in memory (RECORD_CACHE_SIZE's default unless given); 0 turns the cache off. */
  cacheSize?: number
}

export function openSqliteRepositories (path: string, { cacheSize = defaults.recordCacheSize, ...options }: RepositoryOptions = {}): Repositories {
  const db = openDatabase(path, options)
  const idempotency = new SqliteIdempotency(db)
  idempotency.sweep(Date.now())
  const writes = new GroupCommit(db)
  const external = new ExternalWrites(db)
  const dependencies = { idempotency, writes, external, cacheSize }
  const books = new SqliteTable<Book, BookValues>(db, {
    table: 'books',
    kind: 'book',
    idColumn: 'book_id',
    writable: { title: true, author: true, isbn: true, published_year: true },
    unique: ['isbn']
  }, dependencies)
  const students = new SqliteTable<Student, StudentValues>(db, {
    table: 'students',
    kind: 'student',
    idColumn: 'student_id',
    writable: { name: true, email: true, enrollment_year: true, status: true },
    unique: ['email']
  }, dependencies)
  // Migration 1 inserts the secret, so the row always exists.
  const secret = db.prepare<[], Buffer>("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck()
  return {
    books,
    students,
    idempotency,
    apiKeys: sqliteApiKeys(db, external),
    cursorSecret: async () => secret.get() as Buffer,
    close: () => {
      writes.flush()
      db.close()
    }
  }
}

/** The repositories at the configured database with the configured durability, for every process that opens it. */
export function openConfiguredRepositories (
  config: Pick<Config, 'databasePath' | 'databaseSynchronous' | 'recordCacheSize'>,
  { create }: Pick<DatabaseOptions, 'create'> = {}
): Repositories {
  return openSqliteRepositories(config.databasePath, { synchronous: config.databaseSynchronous, cacheSize: config.recordCacheSize, create })
}
