// Issue 12's list behaviour on SQLite (test/list-query.ts).
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { sqliteMigrations } from '../src/storage/sqlite/migrations.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'
import { type Engine, listQuerySuite, version3Rows } from './list-query.js'

/** A file at schema version 3 (migrations 1–3 run by hand) holding `rows`; returns its path. */
function version3File (t: Test, rows: ReturnType<typeof version3Rows>): string {
  const path = tempDatabase(t)
  const db = new Database(path)
  for (const version of [1, 2, 3] as const) db.exec(sqliteMigrations[version])
  db.pragma('user_version = 3')
  const book = db.prepare('INSERT INTO books (book_id, title, author, isbn, published_year, created_at, updated_at) VALUES (@book_id, @title, @author, @isbn, @published_year, @created_at, @updated_at)')
  const student = db.prepare('INSERT INTO students (student_id, name, email, enrollment_year, status, created_at, updated_at) VALUES (@student_id, @name, @email, @enrollment_year, @status, @created_at, @updated_at)')
  db.transaction(() => {
    for (const row of rows.books) book.run(row)
    for (const row of rows.students) student.run(row)
  })()
  db.close()
  return path
}

const engine: Engine = {
  open: async (_t, listLimits) => openSqliteRepositories(':memory:', { ...(listLimits !== undefined && { listLimits }) }),
  openVersion3: async (t, rows, onMigrationProgress) => openSqliteRepositories(version3File(t, rows), { onMigrationProgress })
}

listQuerySuite(t, engine)
