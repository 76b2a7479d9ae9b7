// Issue 12's list behaviour on SQLite (test/list-query.ts), and what only SQLite has: its FTS5 index, kept in step by the service, once per batch.
import Database from 'better-sqlite3'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { fold } from '../src/domain/search/fold.js'
import { defaultListLimits } from '../src/storage/list-sql.js'
import { sqliteMigrations } from '../src/storage/sqlite/migrations.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'
import { bookArb, books, change, checkQuery, emptyStore, type Engine, listQuerySuite, listUrl, searchWords, startService, storeOf, studentArb, students, tinyLimits, version3Rows } from './list-query.js'

// Generated data sets walked page by page on a 2-core CI machine running other files beside this one.
t.setTimeout(360_000)

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
  // A file, so that every page other than a seek is read on a reader thread, as the service reads it; with
  // the tiny limits (which reach every access path) on the event loop, where coverage sees the statements.
  // The budget is not what these tests are about: a loaded CI machine is given time.
  open: async (t, listLimits) => openSqliteRepositories(tempDatabase(t), {
    readers: listLimits === tinyLimits ? 0 : 1, listBudgetMs: 60_000, ...(listLimits !== undefined && { listLimits })
  }),
  openVersion3: async (t, rows, onMigrationProgress) => openSqliteRepositories(version3File(t, rows), { onMigrationProgress })
}

listQuerySuite(t, engine)

/** FTS5's own check of both search indexes against the tables they index (rank 1: the external content too); throws when either is off. */
function checkIndexes (path: string): void {
  const db = new Database(path)
  try {
    for (const table of ['books_fts', 'students_fts']) {
      db.prepare(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`).run()
      db.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('integrity-check', 1)`).run()
    }
  } finally {
    db.close()
  }
}

t.test('SQLite only: the FTS5 indexes stay in step through creates, replaces (new titles, authors, names) and deletes; old words no longer find a changed record', async t => {
  // A replace may keep the title or the author: the service must reindex a book when either changes.
  const write = fc.record({ students: fc.boolean(), create: fc.boolean(), remove: fc.boolean(), target: fc.nat(60), book: bookArb, student: studentArb, keep: fc.constantFrom('nothing', 'title', 'author') })
  let checked = 0
  await fc.assert(fc.asyncProperty(fc.array(write, { minLength: 10, maxLength: 40 }), async writes => {
    const path = tempDatabase(t)
    const api = await startService(t, openSqliteRepositories(path))
    try {
      const store = emptyStore()
      // Words each record was once found by; those it has lost must find it no more.
      const once = new Map<string, Set<string>>()
      const words = (kind: typeof books, id: string): string[] => {
        const record = store[kind.name].get(id)?.record
        return record === undefined ? [] : kind.searched(record).join(' ').split(' ').filter(w => w !== '')
      }
      for (const w of writes) {
        const kind = w.students ? students : books
        const ids = [...store[kind.name].keys()]
        const target = ids[w.target % Math.max(ids.length, 1)]
        if (target !== undefined && !w.create) for (const word of words(kind, target)) once.set(target, (once.get(target) ?? new Set()).add(word))
        const kept = target === undefined || kind !== books || w.keep === 'nothing' ? {} : { [w.keep]: store.books.get(target)!.record[w.keep] as string }
        await change(api, store, kind, { ...w, book: { ...w.book, ...kept } }, w.create)
      }
      checkIndexes(path)
      for (const [id, old] of once) {
        const kind = store.books.has(id) || !store.students.has(id) ? books : students
        for (const word of old) {
          if (words(kind, id).includes(word)) continue
          const res = await api.call('GET', listUrl(kind.path, [['q', word], ['limit', '100']]))
          if (res.statusCode !== 200) throw new Error(`q=${word} → ${res.statusCode} ${res.body}`)
          if (res.json().items.some((r: Record<string, unknown>) => r[kind.idField] === id)) throw new Error(`q=${word} still finds ${id}, which lost that word (or was deleted)`)
          checked++
        }
      }
      for (const word of new Set(searchWords.map(fold))) {
        for (const kind of [books, students]) await checkQuery(api, kind, store, [['q', word]], 100, defaultListLimits)
      }
    } finally {
      await api.close()
    }
  }), { seed: 20261213, numRuns: 4, endOnFailure: true })
  t.ok(checked > 20, `integrity-check passed after every sequence; ${checked} lost words no longer found their records`)
})

t.test('SQLite only: the FTS5 indexes a migration to version 4 builds from existing rows pass integrity-check', async t => {
  const rows = version3Rows(2500)
  const path = version3File(t, rows)
  const api = await startService(t, openSqliteRepositories(path))
  t.teardown(() => api.close())
  t.doesNotThrow(() => checkIndexes(path), 'integrity-check, content included')
  const store = storeOf(rows)
  for (const q of ['orsted', 'filler 2499', 'strasse', 'anonymous']) await t.resolves(checkQuery(api, books, store, [['q', q]], 100, defaultListLimits), `q=${q}`)
})
