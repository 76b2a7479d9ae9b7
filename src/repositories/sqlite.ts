// SQLite implementation of the repositories: one generic table store, statements prepared once.
import Database, { type Statement } from 'better-sqlite3'
import { v7 as uuidv7 } from 'uuid'
import type { Book, Student } from '../api-types.js'
import type { Config } from '../config.js'
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

class SqliteTable<T, V extends object> {
  readonly #spec: TableSpec<V>
  readonly #writable: string[]
  /** The record's columns in SELECT order; list rows carry seq after them. */
  readonly #columns: string[]
  readonly #list: Statement<[number, number], unknown[]>
  readonly #get: Statement<[string], VersionedRow>
  readonly #revision: Statement<[string], number>
  readonly #insert: Statement<[Row], VersionedRow>
  readonly #update: Statement<[Row], VersionedRow>
  readonly #delete: Statement<[string]>
  readonly #writes: GroupCommit
  readonly #create: (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry) => Versioned<T>
  readonly #replace: (id: string, values: V, expected: ExpectedRevisions) => Versioned<T> | null
  readonly #remove: (id: string, expected: ExpectedRevisions) => boolean

  constructor (db: Database.Database, spec: TableSpec<V>, idempotency: SqliteIdempotency, writes: GroupCommit) {
    this.#spec = spec
    this.#writes = writes
    const { table, idColumn, kind } = spec
    const writable = this.#writable = Object.keys(spec.writable)
    const all = this.#columns = [idColumn, ...writable, 'created_at', 'updated_at']
    const columns = all.join(', ')
    // Raw rows turned into records here cost about a quarter less than named rows with seq then
    // dropped by rest-destructuring (measured in the list profile, issue 6); lists are the dearest reads.
    this.#list = db.prepare<[number, number], unknown[]>(`SELECT ${columns}, seq FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`).raw()
    this.#get = db.prepare(`SELECT ${columns}, revision FROM ${table} WHERE ${idColumn} = ?`)
    this.#revision = db.prepare<[string], number>(`SELECT revision FROM ${table} WHERE ${idColumn} = ?`).pluck()
    this.#insert = db.prepare(
      `INSERT INTO ${table} (${columns}) VALUES (${all.map(c => '@' + c).join(', ')}) RETURNING ${columns}, revision`
    )
    this.#update = db.prepare(
      `UPDATE ${table} SET ${[...writable, 'updated_at'].map(c => `${c} = @${c}`).join(', ')}, revision = revision + 1
       WHERE ${idColumn} = @${idColumn} RETURNING ${columns}, revision`
    )
    this.#delete = db.prepare(`DELETE FROM ${table} WHERE ${idColumn} = ?`)

    // Each write runs inside GroupCommit's IMMEDIATE transaction, so a check and its write see the same row.
    const checked = (id: string, expected: ExpectedRevisions): boolean => {
      const current = this.#revision.get(id)
      if (current === undefined) return false
      if (expected !== null && !expected.includes(current)) throw new PreconditionFailedError(kind)
      return true
    }
    // Called inside the batch's transaction, these run as savepoints: a failure undoes only its own write.
    this.#create = db.transaction((values: V, remember?: (created: Versioned<T>) => IdempotencyEntry) => {
      const now = new Date()
      const created = versioned<T>(this.#insert.get({ ...values, [idColumn]: uuidv7(), created_at: now.toISOString(), updated_at: now.toISOString() })!)
      if (remember !== undefined) idempotency.store(remember(created), now.getTime())
      return created
    })
    this.#replace = db.transaction((id: string, values: V, expected: ExpectedRevisions) => {
      if (!checked(id, expected)) return null
      return versioned<T>(this.#update.get({ ...values, [idColumn]: id, updated_at: new Date().toISOString() })!)
    })
    this.#remove = db.transaction((id: string, expected: ExpectedRevisions) => checked(id, expected) && this.#delete.run(id).changes > 0)
  }

  async list (limit: number, after: string | null): Promise<Page<T>> {
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
    const row = this.#get.get(id)
    return row === undefined ? null : versioned<T>(row)
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

function sqliteApiKeys (db: Database.Database): ApiKeyRepository {
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
      return keyInfo(row)
    },
    async find (keyId) {
      const row = find.get(keyId)
      return row === undefined ? null : { ...keyInfo(row), secretHash: row.secret_hash }
    },
    async list () {
      return list.all().map(keyInfo)
    },
    async revoke (keyId) {
      return revoke.run(new Date().toISOString(), keyId).changes > 0
    }
  }
}

export function openSqliteRepositories (path: string, options: DatabaseOptions = {}): Repositories {
  const db = openDatabase(path, options)
  const idempotency = new SqliteIdempotency(db)
  idempotency.sweep(Date.now())
  const writes = new GroupCommit(db)
  const books = new SqliteTable<Book, BookValues>(db, {
    table: 'books',
    kind: 'book',
    idColumn: 'book_id',
    writable: { title: true, author: true, isbn: true, published_year: true }
  }, idempotency, writes)
  const students = new SqliteTable<Student, StudentValues>(db, {
    table: 'students',
    kind: 'student',
    idColumn: 'student_id',
    writable: { name: true, email: true, enrollment_year: true, status: true }
  }, idempotency, writes)
  // Migration 1 inserts the secret, so the row always exists.
  const secret = db.prepare<[], Buffer>("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck()
  return {
    books,
    students,
    idempotency,
    apiKeys: sqliteApiKeys(db),
    cursorSecret: async () => secret.get() as Buffer,
    close: () => {
      writes.flush()
      db.close()
    }
  }
}

/** The repositories at the configured database with the configured durability, for every process that opens it. */
export function openConfiguredRepositories (config: Pick<Config, 'databasePath' | 'databaseSynchronous'>): Repositories {
  return openSqliteRepositories(config.databasePath, { synchronous: config.databaseSynchronous })
}
