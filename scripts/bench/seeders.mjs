// The seeders: how records are written into each engine's new database, in chunks, through the service's own migrations.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { benchDatabaseUrl, postgresServer } from './options.mjs'
import { fromDist } from './paths.mjs'
import { createBenchDatabase } from './postgres.mjs'

const bookColumns = ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at', 'title_key', 'author_key']
const studentColumns = ['student_id', 'name', 'email', 'enrollment_year', 'status', 'created_at', 'updated_at', 'name_key']

/**
 * SQLite: a new file through the service's own migrations, one prepared statement in transactions of a
 * chunk. The search index (FTS5) is written with each chunk by the service's own SqliteSearchIndex, as
 * it is with each batch of writes, so the index has the shape incremental writes give it (building it
 * at the end with FTS5's 'rebuild' seeds 1,000,000 books in 49 s rather than 84, but leaves one fully
 * merged index, kinder to searches than a real one); the seeding connection only gets a bigger page
 * cache and skips the syncs of a file thrown away after the run.
 */
export async function sqliteSeeder (dbPath) {
  const { openDatabase } = await fromDist('storage/sqlite/database.js')
  const { SqliteSearchIndex } = await fromDist('storage/sqlite/search-index.js')
  const { bookTable, studentTable } = await fromDist('storage/tables.js')
  const db = openDatabase(dbPath)
  db.pragma('cache_size = -524288')
  db.pragma('synchronous = OFF')
  const insert = ({ table, list: { searched } }, columns) => {
    const statement = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(c => `@${c}`).join(', ')})`)
    const search = new SqliteSearchIndex(db, table, searched)
    return async rows => db.transaction(() => {
      for (const row of rows) search.indexed(Number(statement.run(row).lastInsertRowid), searched.map(c => row[c]))
      search.write()
    })()
  }
  return {
    books: insert(bookTable, bookColumns),
    students: insert(studentTable, studentColumns),
    async seqs (bookIds) {
      const statement = db.prepare('SELECT seq FROM books WHERE book_id = ?').pluck()
      return bookIds.map(id => statement.get(id))
    },
    async finish () {
      // Big transactions leave a big WAL; the service should start from a checkpointed file.
      db.pragma('wal_checkpoint(TRUNCATE)')
      const secret = db.prepare("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck().get()
      db.close()
      return secret
    }
  }
}

/**
 * PostgreSQL: this run's new database through the service's own migrations, a chunk per INSERT … SELECT
 * FROM unnest; the generated search vector (tsv) and its GIN index follow each insert, as for a create.
 */
export async function postgresSeeder () {
  await createBenchDatabase(postgresServer)
  const { migrate } = await fromDist('storage/postgres/migrations.js')
  const client = new pg.Client({ connectionString: benchDatabaseUrl })
  await client.connect()
  await migrate(client)
  const insert = (table, columns, types) => async rows => {
    const arrays = columns.map(c => rows.map(r => r[c]))
    await client.query(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`, arrays)
  }
  return {
    books: insert('books', bookColumns, ['uuid', 'text', 'text', 'text', 'int', 'timestamptz', 'timestamptz', 'text', 'text']),
    students: insert('students', studentColumns, ['uuid', 'text', 'text', 'int', 'text', 'timestamptz', 'timestamptz', 'text']),
    async seqs (bookIds) {
      const { rows } = await client.query('SELECT book_id, seq FROM books WHERE book_id = ANY($1::uuid[])', [bookIds])
      const seqs = new Map(rows.map(r => [r.book_id, Number(r.seq)]))
      return bookIds.map(id => seqs.get(id))
    },
    async finish () {
      // Fresh statistics and visibility map, as a database that has been serving a while would have.
      await client.query('VACUUM ANALYZE books')
      await client.query('VACUUM ANALYZE students')
      // The service keeps the secret it finds, so the cursors signed here are ones it issued itself.
      const secret = randomBytes(32)
      await client.query("INSERT INTO settings (name, value) VALUES ('cursor_secret', $1)", [secret])
      await client.end()
      return secret
    }
  }
}
