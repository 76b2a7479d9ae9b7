// Seeding: each engine's new database of `count` books and the students, the same records in each, from the seed cache when there is one.
import { join } from 'node:path'
import { bookGenerator, idSeed, prng, seededAt, seededFrom, Tally, uuidAt } from './data.mjs'
import { seededIsbn } from './isbn.mjs'
import { engines, opts, settings } from './options.mjs'
import { fromDist } from './paths.mjs'
import { bar, progress } from './progress.mjs'
import { seedCache } from './seed-cache.mjs'
import { postgresSeeder, sqliteSeeder } from './seeders.mjs'

/**
 * Writes `count` books (./data.mjs: Zipf titles, scaled authors, years with NULLs) and the
 * students into each engine's new database, the same records in each. Returns what the scenarios pick
 * from: a sample of the records spread over the whole collection, the rare and common terms and the
 * authors (`picks`), positions in the middle of the title order, and each engine's cursor secret.
 */
async function seed (targets, count) {
  const { fold } = await fromDist('domain/search/fold.js')
  const seeders = Object.entries(targets)
  const sampleSize = Math.min(count, 10_000)
  const every = Math.floor(count / sampleSize)
  const sample = { books: [], students: [] }
  const sampleKeys = []
  // Big transactions: at 1,000,000 books SQLite seeds in about 85 s with 200,000 rows per commit,
  // against 115 s with 20,000 (the search index's segments are merged fewer times).
  const chunk = 200_000
  const label = `seeding ${count.toLocaleString('en')} books (${seeders.map(([engine]) => engine).join(', ')})`
  const next = bookGenerator(count)
  const tally = new Tally(count)
  const ids = prng(idSeed)
  const started = performance.now()
  for (let from = 0; from < count; from += chunk) {
    const rows = []
    for (let i = from; i < Math.min(count, from + chunk); i++) {
      const values = next()
      tally.add(values)
      const { title, author } = values
      const now = new Date(seededFrom + i * 10).toISOString()
      const book = { book_id: uuidAt(seededFrom + i * 10, ids), title, author, isbn: seededIsbn(i), published_year: values.published_year, created_at: now, updated_at: now }
      const row = { ...book, title_key: fold(title), author_key: fold(author) }
      rows.push(row)
      if (i % every === 0 && sample.books.length < sampleSize) {
        sample.books.push(book)
        sampleKeys.push({ at: i, title_key: row.title_key })
      }
    }
    for (const [, seeder] of seeders) await seeder.books(rows)
    bar(label, Math.min(count, from + chunk), count)
  }
  // Students enrolled, a second apart, the day before the first book.
  for (let i = 0; i < settings.students; i++) {
    const at = seededFrom - 86_400_000 + i * 1000
    const now = new Date(at).toISOString()
    sample.students.push({ student_id: uuidAt(at, ids), name: `Student ${i}`, email: `student${i}@example.org`, enrollment_year: 2000 + (i % 25), status: 'active', created_at: now, updated_at: now })
  }
  const students = sample.students.map(s => ({ ...s, name_key: fold(s.name) }))
  // The sample's middle fifth in title order (byte order of the folded keys, as both engines sort them).
  const byTitle = sampleKeys.map((key, i) => ({ ...key, book_id: sample.books[i].book_id }))
    .sort((a, b) => a.title_key < b.title_key ? -1 : a.title_key > b.title_key ? 1 : a.at - b.at)
  const middle = byTitle.slice(Math.floor(byTitle.length * 0.4), Math.ceil(byTitle.length * 0.6))
  const secrets = {}
  for (const [engine, seeder] of seeders) {
    await seeder.students(students)
    // Positions carry seq: each engine's own, read back rather than assumed.
    const seqs = await seeder.seqs(middle.map(m => m.book_id))
    for (const [i, m] of middle.entries()) {
      if (m.seq !== undefined && m.seq !== seqs[i]) throw new Error(`book ${m.book_id} has seq ${seqs[i]} on ${engine} but ${m.seq} elsewhere`)
      m.seq = seqs[i]
    }
    secrets[engine] = await seeder.finish()
  }
  const seconds = (performance.now() - started) / 1000
  progress(`seeded ${count.toLocaleString('en')} books in ${seconds.toFixed(0)} s (${Math.round(count / seconds).toLocaleString('en')} books/s)`)
  return {
    count,
    sample,
    picks: tally.picks(),
    titleMiddle: middle.map(m => ({ title_key: m.title_key, seq: m.seq })),
    updatedAt: seededAt(count),
    secrets,
    seconds
  }
}

/** The SQLite file of the run's `count` books in `dir`. */
export const sqlitePath = (dir, count) => join(dir, `books-${count}.sqlite`)

/** A new database of `count` books for each engine of the run, taken from the seed cache when there is one. */
export async function seedEngines (dir, count) {
  const path = sqlitePath(dir, count)
  const cached = opts['seed-cache'] === undefined ? null : await seedCache(count)
  if (cached !== null) {
    const hit = await cached.restore(path)
    if (hit !== null) return hit
  }
  const targets = {}
  for (const engine of engines) targets[engine] = engine === 'sqlite' ? await sqliteSeeder(path) : await postgresSeeder()
  const seeded = await seed(targets, count)
  if (cached !== null) await cached.save(path, seeded)
  return seeded
}
