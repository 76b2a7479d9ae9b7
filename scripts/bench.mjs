// `npm run bench`: drives the built service and a bare node:http ceiling through the same scenarios,
// in one run on one machine, and reports each figure beside the ceiling's (see BENCHMARKS.md).
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { uuidv7 } from 'uuidv7'

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
                       get-student, mix
  --profile DIR        run the service under node --cpu-prof and leave its .cpuprofile files in DIR`

// Bad usage: one line naming the option, exit 2 (parseArgs' and the checks' errors were thrown with a stack).
function badUsage (message) {
  console.error(`bench: ${message}\nFor the usage: npm run bench -- --help`)
  process.exit(2)
}

let opts
try {
  ({ values: opts } = parseArgs({
    options: {
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
      help: { type: 'boolean', short: 'h', default: false }
    }
  }))
} catch (error) {
  // Its first sentence names the option or argument; the rest is a hint about '--' that misleads here.
  badUsage(error.message.split('. ')[0])
}
if (opts.help) {
  console.log(usage)
  process.exit(0)
}

const positive = (name, raw) => {
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) badUsage(`--${name} must be a positive number (got ${raw})`)
  return value
}
const settings = {
  runs: positive('runs', opts.runs ?? (opts.quick || opts.scale ? 1 : 3)),
  duration: positive('duration', opts.duration ?? (opts.quick ? 2 : 8)),
  warmup: opts.quick ? 0.5 : 2,
  connections: positive('connections', opts.connections),
  books: positive('books', opts.books),
  sizes: opts.sizes.split(',').map(s => positive('sizes', s)),
  students: 1000
}
// A run with another cache size goes to sections of its own, beside the default's.
const sectionSuffix = opts['cache-size'] === undefined ? '' : `-cache-${opts['cache-size']}`
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

const cores = os.availableParallelism()
const hasTaskset = process.platform === 'linux' && cores >= 2 &&
  spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0
const clockTicks = process.platform === 'linux' ? Number(execFileSync('getconf', ['CLK_TCK']).toString()) : NaN

function machine () {
  const model = os.cpus()[0]?.model ?? 'unknown CPU'
  return `${model}, ${cores} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}, ` +
    `autocannon ${JSON.parse(readFileSync(join(root, 'node_modules/autocannon/package.json'), 'utf8')).version}, ` +
    (hasTaskset ? 'server pinned to core 0 and load generator to core 1 (taskset)' : 'no pinning (taskset unavailable or one core)')
}

// --- processes ------------------------------------------------------------------------------

async function freePort () {
  const server = createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise(resolve => server.close(resolve))
  return port
}

/** Starts `script` on core 0 and waits until it answers HTTP; `check` is a path that must answer 2xx. */
async function startServer (name, script, env, check, logTo = 'ignore', nodeOptions = []) {
  const port = await freePort()
  const node = [process.execPath, ...nodeOptions, script]
  const [file, ...args] = hasTaskset ? ['taskset', '-c', '0', ...node] : node
  // taskset execs node, so the pid is the server's own and /proc/<pid>/stat is its CPU time.
  const child = spawn(file, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', logTo, 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const exited = new Promise(resolve => child.once('exit', code => resolve(code)))
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    const code = await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 100))])
    if (code !== undefined) throw new Error(`${name} exited with ${code} before answering:\n${stderr}`)
    try {
      const res = await fetch(url + check, { headers: { authorization: `Bearer ${apiKey}` } })
      if (res.ok) break
      throw new Error(`${name} answered ${res.status} to GET ${check}`)
    } catch (error) {
      if (attempt > 150) throw error
    }
  }
  return {
    name,
    url,
    pid: child.pid,
    async stop () {
      child.kill('SIGTERM')
      await exited
    }
  }
}

/** CPU seconds (user + system) the process has used so far, or NaN where /proc is missing. */
function cpuSeconds (pid) {
  if (!Number.isFinite(clockTicks)) return NaN
  // The command name (field 2) may hold spaces, so fields are counted after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / clockTicks
}

function rssMegabytes (pid) {
  if (process.platform !== 'linux') return NaN
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

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

/**
 * Writes `count` books and the students straight into a new SQLite file through the service's own
 * migrations (so the schema is the service's), one prepared statement in one transaction.
 * Returns a sample of the records spread over the whole collection and a cursor into its middle.
 */
async function seed (dbPath, count) {
  const { openDatabase } = await import(join(root, 'dist/storage/sqlite/database.js'))
  const { CursorCodec } = await import(join(root, 'dist/cursor.js'))
  const db = openDatabase(dbPath)
  const insertBook = db.prepare(`INSERT INTO books (book_id, title, author, isbn, published_year, created_at, updated_at)
    VALUES (@book_id, @title, @author, @isbn, @published_year, @created_at, @updated_at)`)
  const insertStudent = db.prepare(`INSERT INTO students (student_id, name, email, enrollment_year, status, created_at, updated_at)
    VALUES (@student_id, @name, @email, @enrollment_year, @status, @created_at, @updated_at)`)
  const sampleSize = Math.min(count, 10_000)
  const every = Math.floor(count / sampleSize)
  const sample = { books: [], students: [] }
  const chunk = 20_000
  const label = `seeding ${count.toLocaleString('en')} books`
  for (let from = 0; from < count; from += chunk) {
    db.transaction(() => {
      for (let i = from; i < Math.min(count, from + chunk); i++) {
        const now = new Date().toISOString()
        const book = { book_id: uuidv7(), title: `Book number ${i}`, author: `Author ${i % 997}`, isbn: seededIsbn(i), published_year: 1900 + (i % 120), created_at: now, updated_at: now }
        insertBook.run(book)
        if (i % every === 0 && sample.books.length < sampleSize) sample.books.push(book)
      }
    })()
    bar(label, Math.min(count, from + chunk), count)
  }
  db.transaction(() => {
    for (let i = 0; i < settings.students; i++) {
      const now = new Date().toISOString()
      const student = { student_id: uuidv7(), name: `Student ${i}`, email: `student${i}@example.org`, enrollment_year: 2000 + (i % 25), status: 'active', created_at: now, updated_at: now }
      insertStudent.run(student)
      sample.students.push(student)
    }
  })()
  // Big transactions leave a big WAL; the service should start from a checkpointed file.
  db.pragma('wal_checkpoint(TRUNCATE)')
  const secret = db.prepare("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck().get()
  db.close()
  // The service's own codec signs the position, so the deep page is one the service issued itself.
  const deepCursor = new CursorCodec(secret).encode('/books', String(Math.floor(count / 2)))
  return { sample, deepCursor }
}

// --- scenarios ------------------------------------------------------------------------------

const pick = list => list[randomInt(list.length)]
const bookBody = () => JSON.stringify({ title: 'A benchmark book', author: 'Bench Author', isbn: nextPostedIsbn(), published_year: 2001 })
const putBody = book => JSON.stringify({ title: `${book.title} (revised)`, author: book.author, isbn: book.isbn, published_year: book.published_year })

const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' }

// autocannon writes Content-Length into the headers object it is handed and keeps it for the next
// request, so every request gets a fresh copy: a GET after a POST must not announce a body.
const request = (req, method, path, body) => ({ ...req, method, path, body, headers: { ...headers } })

function scenarios (sample, deepCursor) {
  const only = opts.only?.split(',')
  return allScenarios(sample, deepCursor).filter(s => only === undefined || only.includes(s.id))
}

function allScenarios (sample, deepCursor) {
  const getBook = req => request(req, 'GET', `/books/${pick(sample.books).book_id}`)
  const postBook = req => request(req, 'POST', '/books', bookBody())
  const putBook = req => {
    const book = pick(sample.books)
    return request(req, 'PUT', `/books/${book.book_id}`, putBody(book))
  }
  return [
    { name: 'GET one book', id: 'get-book', read: true, setup: getBook },
    { name: 'GET list, first page', id: 'list-first', read: true, setup: req => request(req, 'GET', '/books?limit=20') },
    {
      name: 'GET list, page deep in the collection',
      id: 'list-deep',
      read: true,
      setup: (req, target) => request(req, 'GET', `/books?limit=20&cursor=${target === 'ceiling' ? Math.floor(sample.books.length / 2) : deepCursor}`)
    },
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
  const before = cpuSeconds(server.pid)
  const result = await autocannon({
    url: server.url,
    connections: settings.connections,
    duration,
    requests: [{ setupRequest: req => scenario.setup(req, target) }]
  })
  const cpu = cpuSeconds(server.pid) - before
  const total = result.requests.total
  return {
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
  `${Math.round(result.rps).toLocaleString('en')} req/s, p99 ${result.p99} ms, ${result.cpuUs.toFixed(0)} µs CPU/req, ${result.non2xx} non-2xx`

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
 * The ceiling and the service in turns, run after run: the host's speed drifts by tens of percent
 * within minutes here, and a ratio of two figures taken minutes apart carried that drift. The CPU
 * ratio reported is the median of the ratios of each pair of neighbouring runs.
 */
async function measurePair (ceiling, service, scenario, steps) {
  await probe(ceiling, scenario, 'ceiling')
  await probe(service, scenario, 'service')
  progress(`[${++step}/${steps}] ${scenario.name}: ceiling and service in turns (warm-up ${settings.warmup} s each, ${settings.runs} x ${settings.duration} s each)`)
  await load(ceiling, scenario, 'ceiling', settings.warmup)
  await load(service, scenario, 'service', settings.warmup)
  const ceilingRuns = []
  const serviceRuns = []
  for (let run = 0; run < settings.runs; run++) {
    ceilingRuns.push(await load(ceiling, scenario, 'ceiling', settings.duration))
    serviceRuns.push(await load(service, scenario, 'service', settings.duration))
  }
  const result = {
    ceiling: aggregate(ceilingRuns),
    service: aggregate(serviceRuns),
    cpuRatio: median(ceilingRuns.map((c, i) => c.cpuUs / serviceRuns[i].cpuUs))
  }
  progress(`    ceiling ${summary(result.ceiling)}`)
  progress(`    service ${summary(result.service)}; CPU ratio ${result.cpuRatio.toFixed(2)}`)
  return result
}

// --- report ---------------------------------------------------------------------------------

const int = n => Number.isFinite(n) ? Math.round(n).toLocaleString('en') : 'n/a'
const fixed = (n, digits = 2) => Number.isFinite(n) ? n.toFixed(digits) : 'n/a'
// autocannon records latency in whole milliseconds.
const ms = n => Number.isFinite(n) ? String(Math.round(n * 10) / 10) : 'n/a'

// The targets, as ceiling CPU per request divided by the service's (higher is better).
const cpuTargets = { 'get-book': 0.6, 'list-first': 0.4, 'post-book': 0.5, 'put-book': 0.5 }

function mainTable (rows) {
  const lines = [
    '| scenario | req/s | ceiling req/s | req/s ratio | p50 / p99 ms | ceiling p50 / p99 ms | errors / non-2xx | CPU µs/req | ceiling CPU µs/req | CPU ratio (ceiling ÷ service) | RSS MB | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|'
  ]
  for (const { scenario, service: s, ceiling: c, cpuRatio } of rows) {
    const checks = []
    if (cpuTargets[scenario.id] !== undefined) checks.push(`CPU ratio ≥ ${cpuTargets[scenario.id]}: ${cpuRatio >= cpuTargets[scenario.id] ? 'met' : 'not met'}`)
    if (scenario.read) checks.push(`p99 < 10 ms: ${s.p99 < 10 ? 'met' : 'not met'}`)
    lines.push(`| ${scenario.name} | ${int(s.rps)} | ${int(c.rps)} | ${fixed(s.rps / c.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${ms(c.p50)} / ${ms(c.p99)} | ` +
      `${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} | ${int(c.cpuUs)} | ${fixed(cpuRatio)} | ${int(s.rss)} | ${checks.join('; ') || '–'} |`)
  }
  return lines.join('\n')
}

function scaleTable (bySize, ceiling) {
  const lines = [
    '| books | scenario | req/s | p50 / p99 ms | errors / non-2xx | CPU µs/req | CPU vs 1st size | CPU ratio (ceiling ÷ service) | RSS MB |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|'
  ]
  const first = bySize[0]
  for (const { size, rows } of bySize) {
    for (const [i, { scenario, service: s }] of rows.entries()) {
      const base = first.rows[i].service.cpuUs
      lines.push(`| ${int(size)} | ${scenario.name} | ${int(s.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} | ` +
        `${fixed(s.cpuUs / base)} | ${fixed(ceiling[i].cpuUs / s.cpuUs)} | ${int(s.rss)} |`)
    }
  }
  return lines.join('\n')
}

function report (title, table, peakRss) {
  return [
    `### ${title}`,
    '',
    `- Command: \`${command}\``,
    `- When: ${new Date().toISOString()}`,
    `- Machine: ${machine()}`,
    `- Load: ${settings.connections} connections, ${settings.runs} run(s) of ${settings.duration} s per scenario after ${settings.warmup} s of warm-up, medians reported (errors summed)${opts.scale ? '' : '; ceiling and service runs alternate, and the CPU ratio is the median of the ratios of each pair'}`,
    `- Service: \`node dist/server.js\`, fresh SQLite file (WAL, synchronous=NORMAL), LOG_LEVEL=info, ADMIN_API_KEY set and sent, RECORD_CACHE_SIZE=${opts['cache-size'] ?? '10000 (default)'}; peak RSS ${int(peakRss)} MB`,
    '',
    table,
    ''
  ].join('\n')
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

/** Starts the service on `dbPath`, hands it to `use`, and stops it; returns what `use` returned and the service's peak RSS. */
async function withService (dbPath, use) {
  // Logging stays on at info, as in production; the lines go to a file (by default /dev/null, so a
  // full run does not fill the disk) and the cost of formatting and writing them is still paid.
  const log = openSync(opts.log, 'a')
  const service = await startServer('service', join(root, 'dist/server.js'), {
    DATABASE_PATH: dbPath,
    LOG_LEVEL: 'info',
    ADMIN_API_KEY: apiKey,
    // The limiter counts every request as in production; the quota is set so that it never refuses.
    RATE_LIMIT: '999999999/60',
    ...(opts['cache-size'] !== undefined && { RECORD_CACHE_SIZE: opts['cache-size'] })
  }, '/books?limit=1', log, opts.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', opts.profile])
  closeSync(log)
  try {
    const result = await use(service)
    return { result, peak: process.platform === 'linux' ? peakRss(service.pid) : NaN }
  } finally {
    await service.stop()
  }
}

async function main () {
  if (hasTaskset) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
  if (!opts['no-build']) {
    progress('building the service (npm run build)')
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
    if (build.status !== 0) throw new Error('npm run build failed')
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'books-bench-'))
  const stops = []
  try {
    const sizes = opts.scale ? settings.sizes : [settings.books]
    const first = await seed(join(dir, `books-${sizes[0]}.sqlite`), sizes[0])
    const ceiling = await startServer('ceiling', join(root, 'scripts/bench-ceiling.mjs'), {}, '/books?limit=1')
    stops.push(ceiling.stop)
    const seeded = await fetch(ceiling.url + '/__seed', { method: 'POST', body: JSON.stringify(first.sample) })
    if (!seeded.ok) throw new Error(`the ceiling refused its seed: ${seeded.status}`)

    const list = scenarios(first.sample, first.deepCursor)
    if (list.length === 0) throw new Error(`--only names no scenario (got ${opts.only})`)

    if (!opts.scale) {
      const { result: rows, peak } = await withService(join(dir, `books-${sizes[0]}.sqlite`), async service => {
        const rows = []
        for (const scenario of list) rows.push({ scenario, ...await measurePair(ceiling, service, scenario, list.length) })
        return rows
      })
      const text = report(`${opts.quick ? 'Quick run' : 'Full run'}${cacheNote}: ${int(sizes[0])} books, ${settings.students.toLocaleString('en')} students`, mainTable(rows), peak)
      console.log('\n' + text)
      if (opts.write) writeSection((opts.quick ? 'quick' : 'full') + sectionSuffix, text)
      return
    }
    // At scale, cost is compared with the first size's, and the ceiling (which does not grow) is measured once.
    const steps = list.length * (1 + sizes.length)
    const ceilingRows = []
    for (const scenario of list) ceilingRows.push(await measure(ceiling, scenario, 'ceiling', steps))
    const bySize = []
    let peak = 0
    for (const [i, size] of sizes.entries()) {
      const dbPath = join(dir, `books-${size}.sqlite`)
      const seeded = i === 0 ? first : await seed(dbPath, size)
      const { result: rows, peak: sizePeak } = await withService(dbPath, async service => {
        const rows = []
        for (const scenario of scenarios(seeded.sample, seeded.deepCursor)) rows.push({ scenario, service: await measure(service, scenario, 'service', steps) })
        return rows
      })
      peak = Math.max(peak, sizePeak)
      bySize.push({ size, rows })
      rmSync(dbPath, { force: true })
    }
    const text = report(`Scale run${cacheNote}: ${sizes.map(int).join(' / ')} books`, scaleTable(bySize, ceilingRows), peak)
    console.log('\n' + text)
    if (opts.write) writeSection('scale' + sectionSuffix, text)
  } finally {
    for (const stop of stops) await stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch(error => {
  console.error(`bench: ${error.stack ?? error}`)
  process.exit(1)
})
