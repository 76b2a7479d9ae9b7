// What each part of a SQLite create costs: the service's schema and statements, one part switched off at a time.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openDatabase } from '../../../dist/storage/sqlite/database.js'
import { bookRow, cpuPer } from './write-rows.mjs'

const { values: options } = parseArgs({ options: { batch: { type: 'string', default: '16' }, rows: { type: 'string', default: '8000' }, rounds: { type: 'string', default: '3' } } })
const [batch, rows, rounds] = [options.batch, options.rows, options.rounds].map(Number)

const ftsInsert = 'INSERT INTO books_fts (rowid, title_key, author_key) VALUES (@seq, @title_key, @author_key)'
// Each variant: schema changes, then how a write runs. `trigger`: the FTS row written by a trigger in the
// write's statement (as before migration 8); `savepoint`: each write in a savepoint (as before, too).
const variants = {
  'before: savepoint per write, FTS trigger': { sql: [], savepoint: true, trigger: true },
  'no savepoint, FTS trigger': { sql: [], trigger: true },
  'now: no savepoint, FTS once per batch': { sql: [] },
  'now, no FTS': { sql: [], noFts: true },
  'now, no books_title index': { sql: ['DROP INDEX books_title'] },
  'now, no books_author_title index': { sql: ['DROP INDEX books_author_title'] },
  'now, no books_published_year index': { sql: ['DROP INDEX books_published_year'] },
  'now, no books_updated index': { sql: ['DROP INDEX books_updated'] },
  'now, no event row': { sql: [], noEvent: true },
  'now, no secondary index, FTS or event': { sql: ['DROP INDEX books_title', 'DROP INDEX books_author_title', 'DROP INDEX books_published_year', 'DROP INDEX books_updated'], noFts: true, noEvent: true }
}

const dir = mkdtempSync(join(tmpdir(), 'bsa-costs-'))
const results = new Map()
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, variant] of Object.entries(variants)) {
      const db = openDatabase(join(dir, `${name.replace(/\W+/g, '-')}-${round}.sqlite`))
      for (const sql of variant.sql) db.exec(sql)
      if (variant.trigger) db.exec(`CREATE TRIGGER books_fts_insert AFTER INSERT ON books BEGIN ${ftsInsert.replace(/@(\w+)/g, 'new.$1')}; END`)
      const insert = db.prepare('INSERT INTO books (book_id, title, author, isbn, published_year, created_at, updated_at, title_key, author_key) VALUES (@book_id, @title, @author, @isbn, @published_year, @created_at, @updated_at, @title_key, @author_key)')
      const event = db.prepare('INSERT INTO events (type, envelope, time) VALUES (?, ?, ?)')
      const fts = db.prepare(ftsInsert)
      let pending = []
      const write = i => {
        const { row, event: values } = bookRow(i)
        const seq = insert.run(row).lastInsertRowid
        if (!variant.trigger && !variant.noFts) pending.push({ seq, ...row })
        if (!variant.noEvent) event.run(...values)
      }
      const run = variant.savepoint ? db.transaction(write) : write
      const [begin, commit] = [db.prepare('BEGIN IMMEDIATE'), db.prepare('COMMIT')]
      const batches = (from, count) => {
        for (let i = from; i < from + count; i += batch) {
          begin.run()
          for (let j = i; j < i + batch; j++) run(j)
          for (const row of pending) fts.run(row)
          pending = []
          commit.run()
        }
      }
      batches(0, 1000)
      const cost = cpuPer(rows, () => batches(1000, rows))
      results.set(name, [...(results.get(name) ?? []), cost])
      db.close()
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`| SQLite create, batches of ${batch} (CPU µs per create, median of ${rounds}) | µs |\n|---|---:|`)
const median = values => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]
for (const [name, values] of results) console.log(`| ${name} | ${median(values).toFixed(0)} |`)
