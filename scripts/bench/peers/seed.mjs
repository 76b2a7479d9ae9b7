// The peers' databases: their own tables (integer ids, the schema Platformatic DB maps), filled with the same books and students as the service's.
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { bookGenerator } from '../data.mjs'
import { seededIsbn } from '../isbn.mjs'
import { createBenchDatabase, peerDatabase, postgresUrl } from '../postgres.mjs'

// The tables a user would write for Platformatic's migrations; bare Fastify reads the same.
const tables = idColumn => [
  `CREATE TABLE books (id ${idColumn}, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER, isbn TEXT)`,
  `CREATE TABLE students (id ${idColumn}, name TEXT NOT NULL, email TEXT NOT NULL, year INTEGER)`
]

/**
 * The `seeded` run's books (regenerated from ../data.mjs, in the service's creation order, so ids run
 * from 1 in that order) and students, as the peers store them, and `sampleIds`: the peers' id of each
 * book of seeded.sample, the books the scenarios pick from.
 */
export function peerRecords (seeded) {
  const next = bookGenerator(seeded.count)
  const books = []
  const idByIsbn = new Map()
  for (let i = 0; i < seeded.count; i++) {
    const { title, author, published_year: year } = next()
    const book = { id: i + 1, title, author, year, isbn: seededIsbn(i) }
    books.push(book)
    idByIsbn.set(book.isbn, book.id)
  }
  const students = seeded.sample.students.map((s, i) => ({ id: i + 1, name: s.name, email: s.email, year: s.enrollment_year }))
  const sampleIds = seeded.sample.books.map(book => idByIsbn.get(book.isbn))
  // A request must find the same book on every target, or the targets would not do the same work.
  if (seeded.sample.books.some((book, i) => books[sampleIds[i] - 1]?.title !== book.title)) {
    throw new Error('the peers\' books differ from the service\'s (a seed cache of another data generator?)')
  }
  return { books, students, sampleIds }
}

/**
 * SQLite files for the peers named `names`, in `dir`, each a copy of one seeded file. Left in SQLite's
 * default journal mode, as Platformatic DB creates and keeps its database; bare Fastify switches its
 * copy to WAL itself. Returns each name's path.
 */
export function seedPeerSqlite (dir, records, names) {
  const [first, ...others] = names.map(name => join(dir, `peer-${name}.sqlite`))
  const db = new Database(first)
  for (const statement of tables('INTEGER PRIMARY KEY')) db.exec(statement)
  const insertBook = db.prepare('INSERT INTO books (id, title, author, year, isbn) VALUES (@id, @title, @author, @year, @isbn)')
  const insertStudent = db.prepare('INSERT INTO students (id, name, email, year) VALUES (@id, @name, @email, @year)')
  db.transaction(() => {
    for (const book of records.books) insertBook.run(book)
    for (const student of records.students) insertStudent.run(student)
  })()
  db.close()
  for (const path of others) copyFileSync(first, path)
  return Object.fromEntries(names.map((name, i) => [name, i === 0 ? first : others[i - 1]]))
}

/** A new database of this run for the PostgreSQL peer `name` on `serverUrl`, seeded; returns its URL. */
export async function seedPeerPostgres (serverUrl, records, name) {
  const database = peerDatabase(name)
  await createBenchDatabase(serverUrl, database)
  const url = postgresUrl(serverUrl, database)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (const statement of tables('SERIAL PRIMARY KEY')) await client.query(statement)
    const insert = async (table, rows, columns, types) => {
      // Chunks keep each statement's parameters to a few megabytes at a million books.
      for (let from = 0; from < rows.length; from += 100_000) {
        const chunk = rows.slice(from, from + 100_000)
        await client.query(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
          columns.map(c => chunk.map(r => r[c])))
      }
      // The ids were given, so the sequence is moved past them for the creates to come.
      await client.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`)
    }
    await insert('books', records.books, ['id', 'title', 'author', 'year', 'isbn'], ['int', 'text', 'text', 'int', 'text'])
    await insert('students', records.students, ['id', 'name', 'email', 'year'], ['int', 'text', 'text', 'int'])
    await client.query('VACUUM ANALYZE books')
    await client.query('VACUUM ANALYZE students')
  } finally {
    await client.end()
  }
  return url
}
