// `npm run bench`: drives the built service and a bare node:http ceiling through the same scenarios,
// in one run on one machine, and reports each figure beside the ceiling's (see BENCHMARKS.md).
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import Database from 'better-sqlite3'
import pg from 'pg'
import { commandLine } from './cli.mjs'
import { cores, cpuSeconds, hasTaskset, pinLoadGenerator, startServer } from './processes.mjs'
import { bookGenerator, generatorVersion, idSeed, prng, Tally, uuidAt } from './bench-data.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const usage = `usage: npm run bench -- [options]
  --quick              short runs (under a minute): 1 run of 2 s per scenario after 0.5 s warm-up
  --scale              the scenarios at 1,000 / 100,000 / 1,000,000 books instead of one size
  --sizes N,N          book counts for --scale (default 1000,100000,1000000)
  --books N            books seeded for the normal run (default 10000)
  --runs N             measured runs per scenario, the median is reported (default 3, quick 1)
  --duration S         seconds per measured run (default 8, quick 2)
  --connections N      concurrent connections (default 32)
  --write              also write the result into BENCHMARKS.md (between its bench markers)
  --no-build           use the existing dist/ instead of running npm run build
  --log FILE           keep the service's log there (default: written to /dev/null)
  --cache-size N       the service's RECORD_CACHE_SIZE (default: the service's own, 10000); 0 reads
                       every record and page from SQLite. Written to its own BENCHMARKS.md sections
  --only ID,ID         only these scenarios: get-book, list-first, list-deep, post-book, put-book,
                       get-student, mix, and the list queries (issue 12): list-filter, list-filter-years,
                       list-sorted-deep, list-filter-broad, list-walk-sparse, search-rare, search-common,
                       search-common-created
  --seed-cache DIR     keep each seeded database in DIR (per engine, size, schema version and data
                       generator) and start later runs from it instead of seeding; off unless given
  --profile DIR        run the service under node --cpu-prof and leave its .cpuprofile files in DIR
  --engine E           the storage engine: sqlite (default), postgres, or both (in turns, in one run;
                       not with --scale). PostgreSQL gets a database bsa_bench_<pid> of its own, dropped after
  --postgres-url URL   the PostgreSQL server for --engine postgres (default $BENCH_POSTGRES_URL or
                       postgres://postgres@127.0.0.1:5432/postgres); only its bsa_bench_* databases are touched
  --env KEY=VALUE      an environment variable for the service (repeatable), e.g. --env OTEL_TRACES_EXPORTER=otlp;
                       named in the report, and not with --write (the default's sections would hold another setup)`

const { opts, badUsage, positive } = commandLine('npm run bench', usage, {
  quick: { type: 'boolean', default: false },
  scale: { type: 'boolean', default: false },
  sizes: { type: 'string', default: '1000,100000,1000000' },
  books: { type: 'string', default: '10000' },
  runs: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string', default: '32' },
  write: { type: 'boolean', default: false },
  'no-build': { type: 'boolean', default: false },
  log: { type: 'string', default: '/dev/null' },
  'cache-size': { type: 'string' },
  profile: { type: 'string' },
  only: { type: 'string' },
  'seed-cache': { type: 'string' },
  engine: { type: 'string', default: 'sqlite' },
  'postgres-url': { type: 'string', default: process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  env: { type: 'string', multiple: true, default: [] }
})
const settings = {
  runs: positive('runs', opts.runs ?? (opts.quick || opts.scale ? 1 : 3)),
  duration: positive('duration', opts.duration ?? (opts.quick ? 2 : 8)),
  warmup: opts.quick ? 0.5 : 2,
  connections: positive('connections', opts.connections),
  books: positive('books', opts.books),
  sizes: opts.sizes.split(',').map(s => positive('sizes', s)),
  students: 1000
}
if (!['sqlite', 'postgres', 'both'].includes(opts.engine)) badUsage(`--engine must be sqlite, postgres or both (got ${opts.engine})`)
if (opts.engine === 'both' && opts.scale) badUsage('--scale measures one engine: --engine sqlite or --engine postgres')
if (!URL.canParse(opts['postgres-url'])) badUsage(`--postgres-url is not a URL (got ${opts['postgres-url']})`)
const engines = opts.engine === 'both' ? ['sqlite', 'postgres'] : [opts.engine]
const serviceEnv = Object.fromEntries(opts.env.map(pair => {
  const match = /^([A-Za-z_]\w*)=(.*)$/s.exec(pair)
  if (match === null) badUsage(`--env must be KEY=VALUE (got ${pair})`)
  return [match[1], match[2]]
}))
if (opts.env.length > 0 && opts.write) badUsage('--env runs are not written to BENCHMARKS.md: drop --write or --env')
// A run with another cache size or engine goes to sections of its own, beside the default's.
const sectionSuffix = (opts.engine === 'sqlite' ? '' : `-${opts.engine}`) + (opts['cache-size'] === undefined ? '' : `-cache-${opts['cache-size']}`)
const cacheNote = opts['cache-size'] === undefined ? '' : `, RECORD_CACHE_SIZE=${opts['cache-size']}`
const apiKey = 'bench-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'
const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')

// --- progress and machine ------------------------------------------------------------------

const progress = message => process.stderr.write(`bench: ${message}\n`)

function bar (label, done, total) {
  if (!process.stderr.isTTY && done !== total && done % Math.max(1, Math.floor(total / 10)) !== 0) return
  const width = 30
  const filled = Math.round(width * done / total)
  const line = `bench: ${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')}`
  process.stderr.write(process.stderr.isTTY ? `\r${line}${done === total ? '\n' : ''}` : `${line}\n`)
}

function machine () {
  const model = os.cpus()[0]?.model ?? 'unknown CPU'
  return `${model}, ${cores} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}, ` +
    `autocannon ${JSON.parse(readFileSync(join(root, 'node_modules/autocannon/package.json'), 'utf8')).version}, ` +
    (hasTaskset ? 'server pinned to core 0 and load generator to core 1 (taskset)' : 'no pinning (taskset unavailable or one core)')
}

// --- processes ------------------------------------------------------------------------------

function rssMegabytes (pid) {
  if (process.platform !== 'linux') return NaN
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

// --- PostgreSQL ---------------------------------------------------------------------------

// One database per bench process, so a crashed run's leftover is recognised by its dead pid and dropped.
const benchDatabase = `bsa_bench_${process.pid}`

function postgresUrl (database) {
  const url = new URL(opts['postgres-url'])
  url.pathname = `/${database}`
  return url.toString()
}

async function onPostgres (database, work) {
  const client = new pg.Client({ connectionString: postgresUrl(database), connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

const alive = pid => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** A new, empty database for this run; leftovers of bench runs that no longer run are dropped first. */
async function createBenchDatabase () {
  const maintenance = new URL(opts['postgres-url']).pathname.slice(1) || 'postgres'
  await onPostgres(maintenance, async client => {
    const { rows } = await client.query("SELECT datname FROM pg_database WHERE datname LIKE 'bsa\\_bench\\_%'")
    for (const { datname } of rows) {
      const pid = Number(/^bsa_bench_(\d+)$/.exec(datname)?.[1])
      if (Number.isNaN(pid)) continue
      if (pid === process.pid || !alive(pid)) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    }
    await client.query(`CREATE DATABASE ${benchDatabase}`)
  })
}

async function dropBenchDatabase () {
  const maintenance = new URL(opts['postgres-url']).pathname.slice(1) || 'postgres'
  await onPostgres(maintenance, client => client.query(`DROP DATABASE IF EXISTS ${benchDatabase} WITH (FORCE)`))
}

/**
 * The CPU seconds so far of PostgreSQL's processes for this run, by pid: the backends serving the
 * service (pg_stat_activity, application_name books-students-api, this run's database) and the shared
 * background processes that do work on their behalf (WAL writer, checkpointer, background writer,
 * autovacuum). Read before and after a window; a process that ends within the window is not counted.
 */
async function postgresCpu (client) {
  const { rows } = await client.query(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'books-students-api'", [benchDatabase])
  const backends = new Map()
  for (const { pid } of rows) {
    try { backends.set(pid, cpuSeconds(pid)) } catch {}
  }
  const background = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (/^postgres: .*(walwriter|checkpointer|background writer|autovacuum)/.test(cmdline)) background.set(Number(entry), cpuSeconds(Number(entry)))
    } catch {}
  }
  return { backends, background }
}

const cpuSince = (before, after) => [...after].reduce((sum, [pid, cpu]) => sum + cpu - (before.get(pid) ?? 0), 0)

// --- data -----------------------------------------------------------------------------------

function isbn13 (first12) {
  let sum = 0
  for (let i = 0; i < 12; i++) sum += Number(first12[i]) * (i % 2 === 0 ? 1 : 3)
  return first12 + ((10 - (sum % 10)) % 10)
}

// Seeded books use 978 prefixes and posted books 979, so every ISBN in a run is unique.
const seededIsbn = i => isbn13('978' + String(i).padStart(9, '0'))
let posted = 0
const nextPostedIsbn = () => isbn13('979' + String(posted++).padStart(9, '0'))

// Seeded books were created 10 ms apart from this instant on (and never updated), the same in every
// run, so that updated_since has a range to cut and a seed cache stays valid.
const seededFrom = Date.parse('2020-01-01T00:00:00.000Z')
/** The creation time of the book `fraction` of the way through a collection of `count`. */
const seededAt = count => fraction => new Date(seededFrom + Math.floor(count * fraction) * 10).toISOString()

const bookColumns = ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at', 'title_key', 'author_key']
const studentColumns = ['student_id', 'name', 'email', 'enrollment_year', 'status', 'created_at', 'updated_at', 'name_key']

/**
 * SQLite: a new file through the service's own migrations, one prepared statement in transactions of a
 * chunk. The service's triggers keep the search index (FTS5) as they do for every create, so the index
 * has the shape incremental writes give it (dropping the trigger and building the index with FTS5's
 * 'rebuild' seeds 1,000,000 books in 49 s rather than 84, but leaves one fully merged index, kinder to
 * searches than a real one); the seeding connection only gets a bigger page cache and skips the syncs
 * of a file thrown away after the run.
 */
async function sqliteSeeder (dbPath) {
  const { openDatabase } = await import(join(root, 'dist/storage/sqlite/database.js'))
  const db = openDatabase(dbPath)
  db.pragma('cache_size = -524288')
  db.pragma('synchronous = OFF')
  const insert = (table, columns) => {
    const statement = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(c => `@${c}`).join(', ')})`)
    return async rows => db.transaction(() => { for (const row of rows) statement.run(row) })()
  }
  return {
    books: insert('books', bookColumns),
    students: insert('students', studentColumns),
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
async function postgresSeeder () {
  await createBenchDatabase()
  const { migrate } = await import(join(root, 'dist/storage/postgres/migrations.js'))
  const client = new pg.Client({ connectionString: postgresUrl(benchDatabase) })
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

/**
 * Writes `count` books (scripts/bench-data.mjs: Zipf titles, scaled authors, years with NULLs) and the
 * students into each engine's new database, the same records in each. Returns what the scenarios pick
 * from: a sample of the records spread over the whole collection, the rare and common terms and the
 * authors (`picks`), positions in the middle of the title order, and each engine's cursor secret.
 */
async function seed (targets, count) {
  const { fold } = await import(join(root, 'dist/search/fold.js'))
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

/** A new database of `count` books for each engine of the run, taken from the seed cache when there is one. */
async function seedEngines (dir, count) {
  const sqlitePath = join(dir, `books-${count}.sqlite`)
  const cached = opts['seed-cache'] === undefined ? null : await seedCache(count)
  if (cached !== null) {
    const hit = await cached.restore(sqlitePath)
    if (hit !== null) return hit
  }
  const targets = {}
  for (const engine of engines) targets[engine] = engine === 'sqlite' ? await sqliteSeeder(sqlitePath) : await postgresSeeder()
  const seeded = await seed(targets, count)
  if (cached !== null) await cached.save(sqlitePath, seeded)
  return seeded
}

/**
 * --seed-cache DIR: one seeded database per engine, size, schema version and data generator, kept in
 * DIR (a copy of the SQLite file; pg_dump's custom format for PostgreSQL, restored with pg_restore)
 * beside a JSON file of what the scenarios pick from. Never used unless asked for.
 */
async function seedCache (count) {
  const { latestVersion } = await import(join(root, 'dist/storage/schema.js'))
  const dir = opts['seed-cache']
  mkdirSync(dir, { recursive: true })
  const name = engine => join(dir, `${engine}-${count}-schema${latestVersion}-data${generatorVersion}`)
  const dumpArgs = ['--no-owner', '--no-privileges', '-d', postgresUrl(benchDatabase)]
  return {
    async restore (sqlitePath) {
      if (!engines.every(engine => existsSync(`${name(engine)}.json`))) return null
      const started = performance.now()
      const metas = engines.map(engine => JSON.parse(readFileSync(`${name(engine)}.json`, 'utf8')))
      const secrets = {}
      for (const engine of engines) {
        if (engine === 'sqlite') {
          copyFileSync(`${name(engine)}.sqlite`, sqlitePath)
          const db = new Database(sqlitePath, { fileMustExist: true })
          secrets.sqlite = db.prepare("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck().get()
          db.close()
        } else {
          await createBenchDatabase()
          execFileSync('pg_restore', ['--jobs', '2', ...dumpArgs, `${name(engine)}.dump`], { stdio: ['ignore', 'ignore', 'inherit'] })
          await onPostgres(benchDatabase, async client => {
            await client.query('VACUUM ANALYZE books')
            await client.query('VACUUM ANALYZE students')
            secrets.postgres = (await client.query("SELECT value FROM settings WHERE name = 'cursor_secret'")).rows[0].value
          })
        }
      }
      // The same generator, so the same records (ids included); seq is each engine's own and both must agree.
      if (metas.some(m => JSON.stringify([m.titleMiddle, m.sample]) !== JSON.stringify([metas[0].titleMiddle, metas[0].sample]))) {
        throw new Error(`the seed caches of ${engines.join(' and ')} in ${dir} hold different books: delete them`)
      }
      const { sample, picks, titleMiddle } = metas[0]
      progress(`restored ${count.toLocaleString('en')} books from the seed cache in ${((performance.now() - started) / 1000).toFixed(0)} s`)
      return { count, sample, picks, titleMiddle, updatedAt: seededAt(count), secrets, seconds: NaN }
    },
    async save (sqlitePath, seeded) {
      for (const engine of engines) {
        if (engine === 'sqlite') copyFileSync(sqlitePath, `${name(engine)}.sqlite`)
        else execFileSync('pg_dump', ['--format', 'custom', '--compress', '1', ...dumpArgs, '--file', `${name(engine)}.dump`], { stdio: ['ignore', 'ignore', 'inherit'] })
        const { sample, picks, titleMiddle } = seeded
        writeFileSync(`${name(engine)}.json`, JSON.stringify({ sample, picks, titleMiddle }))
      }
      progress(`kept the seeded ${count.toLocaleString('en')} books in ${opts['seed-cache']}`)
    }
  }
}

// --- scenarios ------------------------------------------------------------------------------

const pick = list => list[randomInt(list.length)]
const bookBody = () => JSON.stringify({ title: 'A benchmark book', author: 'Bench Author', isbn: nextPostedIsbn(), published_year: 2001 })
const putBody = book => JSON.stringify({ title: `${book.title} (revised)`, author: book.author, isbn: book.isbn, published_year: book.published_year })

const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' }

// autocannon writes Content-Length into the headers object it is handed and keeps it for the next
// request, so every request gets a fresh copy: a GET after a POST must not announce a body.
const request = (req, method, path, body) => ({ ...req, method, path, body, headers: { ...headers } })

/**
 * Per engine, the signed cursors the scenarios start from: the middle of the creation order, and
 * positions in the middle of the title order (sort=title), each bound to its query as the service binds it.
 */
async function listCursors (seeded) {
  const { CursorCodec } = await import(join(root, 'dist/http/cursor.js'))
  const { signCursor } = await import(join(root, 'dist/handlers/paging.js'))
  const { bookList } = await import(join(root, 'dist/handlers/books.js'))
  return Object.fromEntries(Object.entries(seeded.secrets).map(([engine, secret]) => {
    const codec = new CursorCodec(Buffer.from(secret))
    return [engine, {
      deep: signCursor(codec, bookList, {}, JSON.stringify({ k: [String(Math.floor(seeded.count / 2))] })),
      titleMiddle: seeded.titleMiddle.map(m => signCursor(codec, bookList, { sort: 'title' }, JSON.stringify({ k: [m.title_key, String(m.seq)] })))
    }]
  }))
}

/** `cursors`: per engine, the signed cursors of listCursors(); the target of a request is 'ceiling' or an engine. */
function scenarios (seeded, cursors) {
  const only = opts.only?.split(',')
  return allScenarios(seeded, cursors).filter(s => only === undefined || only.includes(s.id))
}

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const share = (books, count) => `${(100 * books / count).toFixed(books < count / 100 ? 3 : 0)} %`

function allScenarios ({ sample, picks, updatedAt, count }, cursors) {
  const getBook = req => request(req, 'GET', `/books/${pick(sample.books).book_id}`)
  const postBook = req => request(req, 'POST', '/books', bookBody())
  const putBook = req => {
    const book = pick(sample.books)
    return request(req, 'PUT', `/books/${book.book_id}`, putBody(book))
  }
  // Query scenarios (issue 12): the ceiling has no filters or search, so it serves its first page of 20
  // in their place, the yardstick of what answering a page costs bare Node. Each request draws its query
  // from a pool (authors, terms, ranges, cursors) so that SQLite's page cache (256 pages) seldom holds
  // the answer; where the pool is small (the one common term; the few authors with a few dozen books at
  // 1,000 books) it does, so the queries' own cost on SQLite is measured with --cache-size 0.
  const query = (id, name, path) => ({
    name,
    id,
    read: true,
    query: true,
    setup: (req, target) => request(req, 'GET', target === 'ceiling' ? '/books?limit=20' : path(target))
  })
  const q = encodeURIComponent
  const books = list => {
    const [low, high] = [Math.min(...list.map(p => p.books)), Math.max(...list.map(p => p.books))]
    return low === high ? `${int(low)} book${low === 1 ? '' : 's'}` : `${int(low)}–${int(high)} books`
  }
  const years = (min, max) => `published_year_min=${min}&published_year_max=${max}`
  // Pools larger than the 256 pages SQLite caches: 450 narrow ranges, 1,254 broad ones, 651 sparse combinations.
  const narrow = range(1800, 2024).flatMap(year => [years(year, year + 1), years(year, year + 2)])
  const broad = range(1800, 1913).flatMap(year => range(108, 118).map(span => years(year, year + span)))
  const sparse = range(1800, 1830).flatMap(year => range(0, 20).map(i => `${years(year, year + 50)}&updated_since=${q(updatedAt(0.95 + i * 0.002))}`))
  return [
    { name: 'GET one book', id: 'get-book', read: true, setup: getBook },
    { name: 'GET list, first page', id: 'list-first', read: true, setup: req => request(req, 'GET', '/books?limit=20') },
    {
      name: 'GET list, page deep in the collection',
      id: 'list-deep',
      read: true,
      setup: (req, target) => request(req, 'GET', `/books?limit=20&cursor=${target === 'ceiling' ? Math.floor(sample.books.length / 2) : cursors[target].deep}`)
    },
    // The list queries before the writes, which add tens of thousands of books (all alike) to the collection.
    query('list-filter', `list: author= (one of ${picks.authors.length} with ${books(picks.authors)})`,
      () => `/books?limit=20&author=${q(pick(picks.authors).author)}`),
    query('list-filter-years', 'list: 2- or 3-year published_year range, sort=title', () => `/books?limit=20&${pick(narrow)}&sort=title`),
    query('list-sorted-deep', 'list: sort=title, cursor in the middle of the title order',
      target => `/books?limit=20&sort=title&cursor=${pick(cursors[target].titleMiddle)}`),
    query('list-filter-broad', 'list: published_year range over about half the years (109–119), sort=title', () => `/books?limit=20&${pick(broad)}&sort=title`),
    query('list-walk-sparse', 'list: 51-year published_year range + updated_since in the last 1–5 %, sort=title',
      () => `/books?limit=20&${pick(sparse)}&sort=title`),
    query('search-rare', `search: rare term (one of ${picks.rare.length}, in ${books(picks.rare)})`,
      () => `/books?limit=20&q=${q(pick(picks.rare).term)}`),
    query('search-common', `search: common term (${picks.common.map(c => `${c.term}, ${share(c.books, count)} of books`).join('; ')}), by relevance`,
      () => `/books?limit=20&q=${q(pick(picks.common).term)}`),
    query('search-common-created', 'search: common term, sort=created_at',
      () => `/books?limit=20&q=${q(pick(picks.common).term)}&sort=created_at`),
    { name: 'POST book', id: 'post-book', setup: postBook },
    { name: 'PUT book', id: 'put-book', setup: putBook },
    { name: 'GET one student (with auth)', id: 'get-student', read: true, setup: req => request(req, 'GET', `/api/students/${pick(sample.students).student_id}`) },
    {
      name: 'mix: 80% GET one book, 10% POST, 10% PUT',
      id: 'mix',
      setup: req => {
        const roll = randomInt(10)
        return roll < 8 ? getBook(req) : roll === 8 ? postBook(req) : putBook(req)
      }
    }
  ]
}

async function load (server, scenario, target, duration) {
  const pgBefore = server.postgres && await postgresCpu(server.postgres)
  const before = cpuSeconds(server.pid)
  const result = await autocannon({
    url: server.url,
    connections: settings.connections,
    duration,
    requests: [{ setupRequest: req => scenario.setup(req, target) }]
  })
  const cpu = cpuSeconds(server.pid) - before
  const total = result.requests.total
  const pgAfter = server.postgres && await postgresCpu(server.postgres)
  return {
    ...(pgAfter && {
      pgCpuUs: total > 0 ? cpuSince(pgBefore.backends, pgAfter.backends) / total * 1e6 : NaN,
      pgBackgroundUs: total > 0 ? cpuSince(pgBefore.background, pgAfter.background) / total * 1e6 : NaN,
      pgConnections: pgAfter.backends.size
    }),
    rps: total / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs: total > 0 ? cpu / total * 1e6 : NaN,
    rss: rssMegabytes(server.pid),
    total
  }
}

const median = values => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Checks the scenario answers 2xx once, so a broken setup shows up before minutes of 4xx. */
async function probe (server, scenario, target) {
  const req = scenario.setup({ headers: {} }, target)
  const res = await fetch(server.url + req.path, {
    method: req.method,
    body: req.body,
    headers
  })
  if (!res.ok) progress(`WARNING: ${server.name} answers ${res.status} to ${req.method} ${req.path}: ${(await res.text()).slice(0, 300)}`)
}

let step = 0

/** The medians of a scenario's runs; errors and non-2xx are summed, as one failed request in any run must show. */
function aggregate (runs) {
  const result = Object.fromEntries(Object.keys(runs[0]).map(key => [key, median(runs.map(r => r[key]))]))
  result.errors = runs.reduce((sum, r) => sum + r.errors, 0)
  result.non2xx = runs.reduce((sum, r) => sum + r.non2xx, 0)
  return result
}

const summary = result =>
  `${Math.round(result.rps).toLocaleString('en')} req/s, p99 ${result.p99} ms, ${result.cpuUs.toFixed(0)} µs CPU/req, ${result.non2xx} non-2xx` +
  (result.pgCpuUs === undefined ? '' : `; PostgreSQL ${result.pgCpuUs.toFixed(0)} + ${result.pgBackgroundUs.toFixed(0)} µs CPU/req, ${result.pgConnections} connections`)

async function measure (server, scenario, target, steps) {
  await probe(server, scenario, target)
  progress(`[${++step}/${steps}] ${server.name}: ${scenario.name} (warm-up ${settings.warmup} s, ${settings.runs} x ${settings.duration} s)`)
  await load(server, scenario, target, settings.warmup)
  const runs = []
  for (let run = 0; run < settings.runs; run++) runs.push(await load(server, scenario, target, settings.duration))
  const result = aggregate(runs)
  progress(`    ${summary(result)}`)
  return result
}

/**
 * The ceiling and the services (one per engine) in turns, run after run: the host's speed drifts by
 * tens of percent within minutes here, and a ratio of two figures taken minutes apart carried that
 * drift. Each service's CPU ratio is the median of the ratios to the ceiling run just before it.
 */
async function measureTurns (ceiling, services, scenario, steps) {
  const targets = [['ceiling', ceiling], ...Object.entries(services)]
  for (const [target, server] of targets) await probe(server, scenario, target)
  progress(`[${++step}/${steps}] ${scenario.name}: ${targets.map(([target]) => target).join(', ')} in turns (warm-up ${settings.warmup} s each, ${settings.runs} x ${settings.duration} s each)`)
  for (const [target, server] of targets) await load(server, scenario, target, settings.warmup)
  const runs = Object.fromEntries(targets.map(([target]) => [target, []]))
  for (let run = 0; run < settings.runs; run++) {
    for (const [target, server] of targets) runs[target].push(await load(server, scenario, target, settings.duration))
  }
  const result = { ceiling: aggregate(runs.ceiling), services: {}, cpuRatios: {} }
  progress(`    ceiling ${summary(result.ceiling)}`)
  for (const engine of Object.keys(services)) {
    result.services[engine] = aggregate(runs[engine])
    result.cpuRatios[engine] = median(runs.ceiling.map((c, i) => c.cpuUs / runs[engine][i].cpuUs))
    progress(`    ${engine} ${summary(result.services[engine])}; CPU ratio ${result.cpuRatios[engine].toFixed(2)}`)
  }
  return result
}

// --- report ---------------------------------------------------------------------------------

const int = n => Number.isFinite(n) ? Math.round(n).toLocaleString('en') : 'n/a'
const fixed = (n, digits = 2) => Number.isFinite(n) ? n.toFixed(digits) : 'n/a'
// autocannon records latency in whole milliseconds.
const ms = n => Number.isFinite(n) ? String(Math.round(n * 10) / 10) : 'n/a'

// The issue's targets, as ceiling CPU per request divided by the service's (higher is better).
const cpuTargets = { 'get-book': 0.6, 'list-first': 0.4, 'post-book': 0.5, 'put-book': 0.5 }

// Issue 11's targets for the PostgreSQL engine: requests per second, p99, and against SQLite in the same run.
const postgresRpsTargets = { 'get-book': 11_000, 'post-book': 8_500, 'put-book': 8_500 }

/** The target checks of one engine's row; `sqlite` is SQLite's figures from the same run, if it was measured. */
function targetChecks (engine, scenario, s, cpuRatio, sqlite) {
  const checks = []
  if (engine === 'sqlite') {
    if (cpuTargets[scenario.id] !== undefined) checks.push(`CPU ratio ≥ ${cpuTargets[scenario.id]}: ${cpuRatio >= cpuTargets[scenario.id] ? 'met' : 'not met'}`)
    if (scenario.query) checks.push(`p99 < 50 ms: ${s.p99 < 50 ? 'met' : 'not met'}`)
    else if (scenario.read) checks.push(`p99 < 10 ms: ${s.p99 < 10 ? 'met' : 'not met'}`)
    return checks
  }
  const target = postgresRpsTargets[scenario.id]
  if (target !== undefined) checks.push(`≥ ${int(target)}/s: ${s.rps >= target ? 'met' : `not met (${Math.round(100 * s.rps / target)} %)`}`)
  if (scenario.id === 'get-book' && sqlite !== undefined) checks.push(`≥ ½ SQLite: ${s.rps >= sqlite.rps / 2 ? 'met' : 'not met'} (${fixed(s.rps / sqlite.rps)})`)
  if (scenario.query) checks.push(`p99 < 50 ms: ${s.p99 < 50 ? 'met' : 'not met'}`)
  else checks.push(`p99 < 20 ms: ${s.p99 < 20 ? 'met' : 'not met'}`)
  checks.push(`0 errors: ${s.errors + s.non2xx === 0 ? 'met' : 'not met'}`)
  return checks
}

function mainTable (rows, engine) {
  const postgres = engine === 'postgres'
  const lines = [
    '| scenario | req/s | ceiling req/s | req/s ratio | p50 / p99 ms | ceiling p50 / p99 ms | errors / non-2xx | CPU µs/req | ceiling CPU µs/req | CPU ratio (ceiling ÷ service) | RSS MB |' +
      (postgres ? ' PostgreSQL backends CPU µs/req | PostgreSQL background CPU µs/req | PostgreSQL connections |' : '') + ' target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|' + (postgres ? '---:|---:|---:|' : '') + '---|'
  ]
  for (const { scenario, services, ceiling: c, cpuRatios } of rows) {
    const s = services[engine]
    const cpuRatio = cpuRatios[engine]
    const checks = targetChecks(engine, scenario, s, cpuRatio, services.sqlite)
    lines.push(`| ${scenario.name} | ${int(s.rps)} | ${int(c.rps)} | ${fixed(s.rps / c.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${ms(c.p50)} / ${ms(c.p99)} | ` +
      `${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} | ${int(c.cpuUs)} | ${fixed(cpuRatio)} | ${int(s.rss)} |` +
      (postgres ? ` ${int(s.pgCpuUs)} | ${int(s.pgBackgroundUs)} | ${int(s.pgConnections)} |` : '') + ` ${checks.join('; ') || '–'} |`)
  }
  return lines.join('\n')
}

/** Both engines of one run side by side. */
function engineTable (rows) {
  const lines = [
    '| scenario | SQLite req/s | PostgreSQL req/s | PostgreSQL ÷ SQLite | SQLite CPU µs/req | PostgreSQL: service + database CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|'
  ]
  for (const { scenario, services: { sqlite: l, postgres: p } } of rows) {
    lines.push(`| ${scenario.name} | ${int(l.rps)} | ${int(p.rps)} | ${fixed(p.rps / l.rps)} | ${int(l.cpuUs)} | ${int(p.cpuUs)} + ${int(p.pgCpuUs + p.pgBackgroundUs)} |`)
  }
  return lines.join('\n')
}

/**
 * One row per size and scenario. On PostgreSQL a request's cost is the service's CPU and its backends'
 * together (the database does a list's work there), and "vs 1st size" compares that sum. The list
 * queries' targets (issue 12) are checked at sizes of 1,000,000 and more: p99 < 50 ms, and the cost
 * within 2 × of the first size's.
 */
function scaleTable (bySize, ceiling) {
  const postgres = engines[0] === 'postgres'
  const cost = s => postgres ? s.cpuUs + s.pgCpuUs : s.cpuUs
  const lines = [
    '| books | scenario | req/s | p50 / p99 ms | errors / non-2xx | CPU µs/req | ' + (postgres ? 'PostgreSQL backends CPU µs/req | PostgreSQL background CPU µs/req | service + backends ' : '') +
      'CPU vs 1st size | CPU ratio (ceiling ÷ service) | RSS MB | target |',
    '|---:|---|---:|---:|---:|---:|' + (postgres ? '---:|---:|' : '') + '---:|---:|---:|---|'
  ]
  const first = bySize[0]
  for (const { size, rows } of bySize) {
    for (const [i, { scenario, service: s }] of rows.entries()) {
      const growth = cost(s) / cost(first.rows[i].service)
      const checks = scenario.query && size >= 1_000_000
        ? [`p99 < 50 ms: ${s.p99 < 50 ? 'met' : 'not met'}`, `≤ 2 × 1st size: ${growth <= 2 ? 'met' : 'not met'}`]
        : []
      lines.push(`| ${int(size)} | ${scenario.name} | ${int(s.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} | ` +
        (postgres ? `${int(s.pgCpuUs)} | ${int(s.pgBackgroundUs)} | ` : '') +
        `${fixed(growth)} | ${fixed(ceiling[i].cpuUs / s.cpuUs)} | ${int(s.rss)} | ${checks.join('; ') || '–'} |`)
    }
  }
  return lines.join('\n')
}

async function postgresVersion () {
  return onPostgres(new URL(opts['postgres-url']).pathname.slice(1) || 'postgres', async client => (await client.query('SHOW server_version')).rows[0].server_version)
}

async function report (title, tables, peakRss) {
  const services = {
    sqlite: `fresh SQLite file (WAL, synchronous=NORMAL), RECORD_CACHE_SIZE=${opts['cache-size'] ?? '10000 (default)'}`,
    postgres: engines.includes('postgres') &&
      `PostgreSQL ${await postgresVersion()} on the same machine, not pinned (it shares both cores with the service and the load generator), ` +
      `database ${benchDatabase} created for the run, PG_POOL_MAX=4 (default), RECORD_CACHE_SIZE=${opts['cache-size'] ?? '0 (default on PostgreSQL)'}; ` +
      'PostgreSQL CPU is user + system time from /proc of the backends serving the service (pg_stat_activity, application_name books-students-api) and, ' +
      'as "background", of the WAL writer, checkpointer, background writer and autovacuum, each over the measured window, per request'
  }
  return [
    `### ${title}`,
    '',
    `- Command: \`${command}\``,
    `- When: ${new Date().toISOString()}`,
    `- Machine: ${machine()}`,
    `- Load: ${settings.connections} connections, ${settings.runs} run(s) of ${settings.duration} s per scenario after ${settings.warmup} s of warm-up, medians reported (errors summed)${opts.scale ? '' : '; ceiling and service runs alternate, and the CPU ratio is the median of the ratios of each pair'}`,
    `- Service: \`node dist/server.js\`, LOG_LEVEL=info, ADMIN_API_KEY set and sent${opts.env.map(pair => `, ${pair}`).join('')}; ${engines.map(e => `${engines.length > 1 ? `${e}: ` : ''}${services[e]}`).join('; ')}; peak RSS ${int(peakRss)} MB`,
    '',
    ...tables.flatMap(([heading, table]) => [...(heading === null ? [] : [`#### ${heading}`, '']), table, '']),
    ''
  ].join('\n').replace(/\n\n$/, '\n')
}

function writeSection (marker, text) {
  const file = join(root, 'BENCHMARKS.md')
  const start = `<!-- bench:${marker}:start -->`
  const end = `<!-- bench:${marker}:end -->`
  let doc = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n'
  const block = `${start}\n${text}\n${end}`
  const at = doc.indexOf(start)
  doc = at === -1 ? `${doc.trimEnd()}\n\n${block}\n` : doc.slice(0, at) + block + doc.slice(doc.indexOf(end) + end.length)
  writeFileSync(file, doc)
  progress(`wrote the ${marker} section of BENCHMARKS.md`)
}

// --- main -----------------------------------------------------------------------------------

const peakRss = pid => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

/**
 * Starts a service per engine on the databases seeded for `size`, hands them to `use` ({ engine: server }),
 * and stops them; returns what `use` returned and the services' highest peak RSS.
 */
async function withServices (dir, size, use) {
  const services = {}
  try {
    for (const engine of engines) {
      // Logging stays on at info, as in production; the lines go to a file (by default /dev/null, so a
      // full run does not fill the disk) and the cost of formatting and writing them is still paid.
      const log = openSync(opts.log, 'a')
      const service = await startServer({
        name: engine,
        script: join(root, 'dist/server.js'),
        apiKey,
        env: {
          ...(engine === 'sqlite' ? { DATABASE_PATH: join(dir, `books-${size}.sqlite`) } : { DATABASE_URL: postgresUrl(benchDatabase) }),
          LOG_LEVEL: 'info',
          ADMIN_API_KEY: apiKey,
          // The limiter counts every request as in production; the quota is set so that it never refuses.
          RATE_LIMIT: '999999999/60',
          // A free port for health and metrics: two services of one run (--engine both), or a test beside
          // the bench, would otherwise both want the default 9464.
          OPS_PORT: '0',
          ...(opts['cache-size'] !== undefined && { RECORD_CACHE_SIZE: opts['cache-size'] }),
          ...serviceEnv
        },
        check: '/books?limit=1',
        logTo: log,
        nodeOptions: opts.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', opts.profile]
      })
      closeSync(log)
      services[engine] = service
      if (engine === 'postgres') {
        // Reads pg_stat_activity around each window; its own backend is not the service's (no application_name).
        service.postgres = new pg.Client({ connectionString: postgresUrl(benchDatabase) })
        await service.postgres.connect()
      }
    }
    const result = await use(services)
    return { result, peak: process.platform === 'linux' ? Math.max(...Object.values(services).map(s => peakRss(s.pid))) : NaN }
  } finally {
    for (const service of Object.values(services)) {
      await service.postgres?.end()
      await service.stop()
    }
  }
}

async function main () {
  pinLoadGenerator()
  if (!opts['no-build']) {
    progress('building the service (npm run build)')
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
    if (build.status !== 0) throw new Error('npm run build failed')
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'books-bench-'))
  const stops = []
  try {
    const sizes = opts.scale ? settings.sizes : [settings.books]
    const first = await seedEngines(dir, sizes[0])
    const ceiling = await startServer({ name: 'ceiling', script: join(root, 'scripts/bench-ceiling.mjs'), env: {}, check: '/books?limit=1', apiKey })
    stops.push(ceiling.stop)
    const seeded = await fetch(ceiling.url + '/__seed', { method: 'POST', body: JSON.stringify(first.sample) })
    if (!seeded.ok) throw new Error(`the ceiling refused its seed: ${seeded.status}`)

    const list = scenarios(first, await listCursors(first))
    if (list.length === 0) throw new Error(`--only names no scenario (got ${opts.only})`)
    const engineNote = opts.engine === 'sqlite' ? '' : opts.engine === 'postgres' ? ', PostgreSQL' : ', SQLite and PostgreSQL'

    if (!opts.scale) {
      const { result: rows, peak } = await withServices(dir, sizes[0], async services => {
        const rows = []
        for (const scenario of list) rows.push({ scenario, ...await measureTurns(ceiling, services, scenario, list.length) })
        return rows
      })
      const names = { sqlite: 'SQLite', postgres: 'PostgreSQL' }
      const tables = engines.map(engine => [engines.length > 1 ? names[engine] : null, mainTable(rows, engine)])
      if (engines.length > 1) tables.push(['The engines side by side', engineTable(rows)])
      const text = await report(`${opts.quick ? 'Quick run' : 'Full run'}${engineNote}${cacheNote}: ${int(sizes[0])} books, ${settings.students.toLocaleString('en')} students`, tables, peak)
      console.log('\n' + text)
      if (opts.write) writeSection((opts.quick ? 'quick' : 'full') + sectionSuffix, text)
      return
    }
    // At scale, cost is compared with the first size's, and the ceiling (which does not grow) is measured once.
    const [engine] = engines
    const steps = list.filter(s => !s.query).length + Math.min(1, list.filter(s => s.query).length) + list.length * sizes.length
    const ceilingRows = []
    // The list queries all send the ceiling its first page, measured once for them.
    let firstPage
    for (const scenario of list) {
      if (scenario.query) ceilingRows.push(firstPage ??= await measure(ceiling, scenario, 'ceiling', steps))
      else ceilingRows.push(await measure(ceiling, scenario, 'ceiling', steps))
    }
    const bySize = []
    let peak = 0
    for (const [i, size] of sizes.entries()) {
      const seeded = i === 0 ? first : await seedEngines(dir, size)
      const { result: rows, peak: sizePeak } = await withServices(dir, size, async services => {
        const rows = []
        const cursors = await listCursors(seeded)
        for (const scenario of scenarios(seeded, cursors)) rows.push({ scenario, service: await measure(services[engine], scenario, engine, steps) })
        return rows
      })
      peak = Math.max(peak, sizePeak)
      bySize.push({ size, rows })
      rmSync(join(dir, `books-${size}.sqlite`), { force: true })
    }
    const text = await report(`Scale run${engineNote}${cacheNote}: ${sizes.map(int).join(' / ')} books`, [[null, scaleTable(bySize, ceilingRows)]], peak)
    console.log('\n' + text)
    if (opts.write) writeSection('scale' + sectionSuffix, text)
  } finally {
    for (const stop of stops) await stop()
    rmSync(dir, { recursive: true, force: true })
    if (engines.includes('postgres')) await dropBenchDatabase().catch(error => progress(`could not drop ${benchDatabase}: ${error.message}`))
  }
}

main().catch(error => {
  console.error(`bench: ${error.stack ?? error}`)
  process.exit(1)
})
