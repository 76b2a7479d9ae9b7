// SQLite implementation of the repositories: one generic table store, statements prepared once.
import Database, { type Statement } from 'better-sqlite3'
import { v7 as uuidv7 } from 'uuid'
import type { Book, Student } from '../api-types.js'
import { openDatabase } from '../db/database.js'
import { DuplicateError } from '../errors.js'
import { type ApiKeyInfo, isScope } from '../api-keys.js'
import type { ApiKeyRepository, BookValues, Page, Repositories, StudentValues } from './types.js'

interface TableSpec<V> {
  table: string
  /** Singular noun used in error messages. */
  kind: string
  idColumn: string
  /** Every writable field, so that a field added to the contract but not here fails to compile. */
  writable: Record<keyof V & string, true>
}

type Row = Record<string, unknown>

class SqliteTable<T, V extends object> {
  readonly #spec: TableSpec<V>
  readonly #writable: string[]
  readonly #list: Statement<[number, number], Row & { seq: number }>
  readonly #get: Statement<[string], T>
  readonly #insert: Statement<[Row], T>
  readonly #update: Statement<[Row], T>
  readonly #delete: Statement<[string]>

  constructor (db: Database.Database, spec: TableSpec<V>) {
    this.#spec = spec
    const { table, idColumn } = spec
    const writable = this.#writable = Object.keys(spec.writable)
    const all = [idColumn, ...writable, 'created_at', 'updated_at']
    const columns = all.join(', ')
    this.#list = db.prepare(`SELECT seq, ${columns} FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`)
    this.#get = db.prepare(`SELECT ${columns} FROM ${table} WHERE ${idColumn} = ?`)
    this.#insert = db.prepare(
      `INSERT INTO ${table} (${columns}) VALUES (${all.map(c => '@' + c).join(', ')}) RETURNING ${columns}`
    )
    this.#update = db.prepare(
      `UPDATE ${table} SET ${[...writable, 'updated_at'].map(c => `${c} = @${c}`).join(', ')} WHERE ${idColumn} = @${idColumn} RETURNING ${columns}`
    )
    this.#delete = db.prepare(`DELETE FROM ${table} WHERE ${idColumn} = ?`)
  }

  async list (limit: number, after: string | null): Promise<Page<T>> {
    // One extra row tells whether another page follows without a COUNT.
    const rows = this.#list.all(after === null ? 0 : Number(after), limit + 1)
    const more = rows.length > limit
    const page = more ? rows.slice(0, limit) : rows
    return {
      items: page.map(({ seq, ...record }) => record as T),
      after: more ? String(page.at(-1)?.seq) : null
    }
  }

  async get (id: string): Promise<T | null> {
    return this.#get.get(id) ?? null
  }

  async create (values: V): Promise<T> {
    const now = new Date().toISOString()
    return this.#write(() => this.#insert.get({ ...values, [this.#spec.idColumn]: uuidv7(), created_at: now, updated_at: now }) as T)
  }

  async replace (id: string, values: V): Promise<T | null> {
    return this.#write(() => this.#update.get({ ...values, [this.#spec.idColumn]: id, updated_at: new Date().toISOString() }) ?? null)
  }

  async delete (id: string): Promise<boolean> {
    return this.#delete.run(id).changes > 0
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

export function openSqliteRepositories (path: string): Repositories {
  const db = openDatabase(path)
  const books = new SqliteTable<Book, BookValues>(db, {
    table: 'books',
    kind: 'book',
    idColumn: 'book_id',
    writable: { title: true, author: true, isbn: true, published_year: true }
  })
  const students = new SqliteTable<Student, StudentValues>(db, {
    table: 'students',
    kind: 'student',
    idColumn: 'student_id',
    writable: { name: true, email: true, enrollment_year: true, status: true }
  })
  // Migration 1 inserts the secret, so the row always exists.
  const secret = db.prepare<[], Buffer>("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck()
  return {
    books,
    students,
    apiKeys: sqliteApiKeys(db),
    cursorSecret: async () => secret.get() as Buffer,
    close: () => db.close()
  }
}
