// `node scripts/bench-fair-reads.mjs`: a burst of anonymous heavy searches beside a keyed caller's searches, on a seeded database: how many of each get a 503.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { commandLine, run } from './cli.mjs'
import { bookGenerator, word } from './bench/data.mjs'
import { fromDist, root } from './bench/paths.mjs'
import { onPostgres, defaultPostgresUrl, postgresUrl } from './bench/postgres.mjs'
import { startServer } from './bench/processes.mjs'

const usage = `usage: node scripts/bench-fair-reads.mjs [options]
  --engine E          sqlite (default), postgres or both
  --books N           books seeded (default 200000)
  --burst N           anonymous heavy searches sent at once, from one address (default 40)
  --keyed N           keyed searches sent during the burst, 20 ms apart from 10 ms after it starts (default 5)
  --rounds N          bursts, one after another, each counted (default 3)
  --env KEY=VALUE     an environment variable for the service (repeatable)
  --postgres-url URL  the server for --engine postgres (default ${defaultPostgresUrl}); only the
                      database bsa_fair_<pid> is created there, and dropped after`

const { opts, badUsage, positive } = commandLine('node scripts/bench-fair-reads.mjs', usage, {
  engine: { type: 'string', default: 'sqlite' },
  books: { type: 'string', default: '200000' },
  burst: { type: 'string', default: '40' },
  keyed: { type: 'string', default: '5' },
  rounds: { type: 'string', default: '3' },
  env: { type: 'string', multiple: true, default: [] },
  'postgres-url': { type: 'string', default: defaultPostgresUrl }
})
const engines = opts.engine === 'both' ? ['sqlite', 'postgres'] : [opts.engine]
if (!engines.every(engine => engine === 'sqlite' || engine === 'postgres')) badUsage(`--engine must be sqlite, postgres or both (got ${opts.engine})`)
const [books, burst, keyed, rounds] = ['books', 'burst', 'keyed', 'rounds'].map(option => Math.floor(positive(option, opts[option])))
const env = Object.fromEntries(opts.env.map(pair => {
  const at = pair.indexOf('=')
  if (at < 1) badUsage(`--env takes KEY=VALUE (got ${pair})`)
  return [pair.slice(0, at), pair.slice(at + 1)]
}))
const apiKey = 'fair-reads-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'
const database = `bsa_fair_${process.pid}`

/** The books' rows as both engines store them (the bench's generator: Zipf titles over syllabic words). */
async function * rows () {
  const { fold } = await fromDist('domain/search/fold.js')
  const { uuidv7 } = await import('uuidv7')
  const next = bookGenerator(books)
  const chunk = 50_000
  for (let from = 0; from < books; from += chunk) {
    const batch = []
    for (let i = from; i < Math.min(books, from + chunk); i++) {
      const { title, author, published_year: year } = next()
      const now = new Date(Date.parse('2020-01-01T00:00:00.000Z') + i * 10).toISOString()
      batch.push({ book_id: uuidv7(), title, author, isbn: null, published_year: year, created_at: now, updated_at: now, title_key: fold(title), author_key: fold(author) })
    }
    yield batch
  }
}
const columns = ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at', 'title_key', 'author_key']

async function seedSqlite (path) {
  const { openDatabase } = await fromDist('storage/sqlite/database.js')
  const { SqliteSearchIndex } = await fromDist('storage/sqlite/search-index.js')
  const { bookTable } = await fromDist('storage/tables.js')
  const db = openDatabase(path)
  db.pragma('synchronous = OFF')
  const insert = db.prepare(`INSERT INTO books (${columns.join(', ')}) VALUES (${columns.map(c => `@${c}`).join(', ')})`)
  const search = new SqliteSearchIndex(db, 'books', bookTable.list.searched)
  for await (const batch of rows()) {
    db.transaction(() => {
      for (const row of batch) search.indexed(Number(insert.run(row).lastInsertRowid), bookTable.list.searched.map(c => row[c]))
      search.write()
    })()
  }
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
}

async function seedPostgres (url) {
  const { migrate } = await fromDist('storage/postgres/migrations.js')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await migrate(client)
    const types = ['uuid', 'text', 'text', 'text', 'int', 'timestamptz', 'timestamptz', 'text', 'text']
    for await (const batch of rows()) {
      await client.query(`INSERT INTO books (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`, columns.map(c => batch.map(r => r[c])))
    }
    await client.query('VACUUM ANALYZE books')
  } finally {
    await client.end()
  }
}

const heavy = i => `/books?limit=100&q=${encodeURIComponent(`al* an* OR el* be* OR ma* lo* -zq${i}`)}`
// Moderately rare words (ranks in the thousands): a search, so read by a reader thread on SQLite, and cheap.
const light = i => `/books?q=${encodeURIComponent(word(2000 + i))}`

async function timed (url, headers) {
  const started = performance.now()
  const res = await fetch(url, { headers })
  await res.arrayBuffer()
  return { status: res.status, ms: performance.now() - started }
}

function count (outcomes) {
  const statuses = new Map()
  for (const { status } of outcomes) statuses.set(status, (statuses.get(status) ?? 0) + 1)
  return [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${n} × ${status}`).join(', ')
}
const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(values.length * q) - 1)]
const median = values => quantile(values, 0.5)

async function measure (engine, service) {
  const bearer = { authorization: `Bearer ${apiKey}` }
  // Alone first: what one heavy search and one keyed search cost on an idle service.
  const alone = { heavy: (await timed(service.url + heavy('alone'), {})).ms, light: (await timed(service.url + light(99), bearer)).ms }
  console.log(`${engine}: alone, a heavy search takes ${alone.heavy.toFixed(0)} ms and a keyed search ${alone.light.toFixed(0)} ms`)
  const { items: [book] } = await (await fetch(service.url + '/books?limit=1', { headers: bearer })).json()
  for (let round = 0; round < rounds; round++) {
    const state = { attacking: true }
    const attack = Promise.all(Array.from({ length: burst }, (_, i) => timed(service.url + heavy(`${round}x${i}`), {}))).finally(() => { state.attacking = false })
    const victim = Array.from({ length: keyed }, async (_, i) => {
      await new Promise(resolve => setTimeout(resolve, 10 + i * 20))
      return timed(service.url + light(round * keyed + i), bearer)
    })
    // One keyed client reading a book by id, one request after another, for as long as the burst lasts.
    const reads = (async () => {
      const outcomes = []
      while (state.attacking) outcomes.push(await timed(`${service.url}/books/${book.book_id}`, bearer))
      return outcomes
    })()
    const [attacker, keyedOutcomes, gets] = [await attack, await Promise.all(victim), await reads]
    const getMs = gets.map(o => o.ms)
    console.log(`${engine}: round ${round + 1}: anonymous burst of ${burst}: ${count(attacker)}; keyed searches: ${count(keyedOutcomes)} (median ${median(keyedOutcomes.map(o => o.ms)).toFixed(0)} ms, slowest ${Math.max(...keyedOutcomes.map(o => o.ms)).toFixed(0)} ms); GET by id meanwhile: ${count(gets)} (median ${median(getMs).toFixed(1)} ms, p99 ${quantile(getMs, 0.99).toFixed(1)} ms)`)
    // The pages of this round still being read (their answers dropped) finish before the next round.
    await new Promise(resolve => setTimeout(resolve, 1500))
  }
}

run('node scripts/bench-fair-reads.mjs', async () => {
  for (const engine of engines) {
    const dir = mkdtempSync(join(tmpdir(), 'bsa-fair-'))
    const path = join(dir, 'books.sqlite')
    const url = postgresUrl(opts['postgres-url'], database)
    try {
      const started = performance.now()
      if (engine === 'sqlite') await seedSqlite(path)
      else {
        await onPostgres(opts['postgres-url'], new URL(opts['postgres-url']).pathname.slice(1) || 'postgres', client => client.query(`CREATE DATABASE ${database}`))
        await seedPostgres(url)
      }
      console.log(`${engine}: seeded ${books.toLocaleString('en')} books in ${((performance.now() - started) / 1000).toFixed(0)} s`)
      const service = await startServer({
        name: 'service',
        script: join(root, 'dist/server.js'),
        apiKey,
        check: '/books?limit=1',
        // No quota refuses: every request here comes from 127.0.0.1 (one address), and the keyed reads run for as long as the bursts.
        env: { ...(engine === 'sqlite' ? { DATABASE_PATH: path } : { DATABASE_URL: url }), ADMIN_API_KEY: apiKey, LOG_LEVEL: 'warn', OPS_PORT: '0', RATE_LIMIT: '999999999/60', RATE_LIMIT_ANONYMOUS: '999999999/60', ...env }
      })
      try {
        await measure(engine, service)
      } finally {
        await service.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
      if (engine === 'postgres') await onPostgres(opts['postgres-url'], new URL(opts['postgres-url']).pathname.slice(1) || 'postgres', client => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
    }
  }
})
