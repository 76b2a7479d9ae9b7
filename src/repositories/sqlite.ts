// SQLite implementation of the repositories: one generic table store, statements prepared once.
import Database, { type Statement } from 'better-sqlite3'
import { v7 as uuidv7 } from 'uuid'
import type { Book, Student } from '../api-types.js'
import { openDatabase } from '../db/database.js'
import { DuplicateError } from '../errors.js'
import type { BookValues, Page, Repositories, StudentValues } from './types.js'

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
  /** The record's columns in SELECT order; list rows carry seq after them. */
  readonly #columns: string[]
  readonly #list: Statement<[number, number], unknown[]>
  readonly #get: Statement<[string], T>
  readonly #insert: Statement<[Row], T>
  readonly #update: Statement<[Row], T>
  readonly #delete: Statement<[string]>

  constructor (db: Database.Database, spec: TableSpec<V>) {
    this.#spec = spec
    const { table, idColumn } = spec
    const writable = this.#writable = Object.keys(spec.writable)
    const all = this.#columns = [idColumn, ...writable, 'created_at', 'updated_at']
    const columns = all.join(', ')
    // Raw rows turned into records here cost about a quarter less than named rows with seq then
    // dropped by rest-destructuring (measured in the list profile, issue 6); lists are the dearest reads.
    this.#list = db.prepare<[number, number], unknown[]>(`SELECT ${columns}, seq FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`).raw()
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
    cursorSecret: async () => secret.get() as Buffer,
    close: () => db.close()
  }
}
