// `npm run bench:events`: N live event streams open on the built service while POST /books writes at a fixed rate; delivery latency of every event on every stream (see BENCHMARKS.md).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { commandLine, run } from './bench/cli.mjs'
import { nextPostedIsbn } from './bench/isbn.mjs'
import { root } from './bench/paths.mjs'
import { benchDatabase, createBenchDatabase, defaultPostgresUrl, dropBenchDatabase, postgresUrl } from './bench/postgres.mjs'
import { cpuSeconds, pinLoadGenerator } from './bench/processes.mjs'
import { progressTo } from './bench/progress.mjs'
import { apiKey, startService } from './bench/servers.mjs'

const usage = `usage: npm run bench:events -- [options]   (run npm run build first: it starts dist/server.js)
  --engine E           sqlite (default) or postgres
  --streams N          event streams held open at once, all with the admin key (default 100)
  --duration S         seconds of writing (default 10)
  --rate N             POST /books per second, sent at that pace whatever the answers' speed (default 200)
  --postgres-url URL   the PostgreSQL server for --engine postgres (default $BENCH_POSTGRES_URL or
                       postgres://postgres@127.0.0.1:5432/postgres); the run gets a database bsa_bench_<pid>, dropped after`

const { opts, badUsage, positive } = commandLine('npm run bench:events', usage, {
  engine: { type: 'string', default: 'sqlite' },
  streams: { type: 'string', default: '100' },
  duration: { type: 'string', default: '10' },
  rate: { type: 'string', default: '200' },
  'postgres-url': { type: 'string', default: defaultPostgresUrl }
})
const streamCount = Math.round(positive('streams', opts.streams))
const duration = positive('duration', opts.duration)
const rate = positive('rate', opts.rate)
if (!['sqlite', 'postgres'].includes(opts.engine)) badUsage(`--engine must be sqlite or postgres (got ${opts.engine})`)
if (!existsSync(join(root, 'dist/server.js'))) badUsage('dist/server.js is missing: run npm run build first')

const { progress } = progressTo('bench-events')
const now = () => performance.timeOrigin + performance.now()

// --- PostgreSQL -----------------------------------------------------------------------------

// Only a PostgreSQL run reads --postgres-url.
const databaseUrl = opts.engine === 'postgres' ? postgresUrl(opts['postgres-url'], benchDatabase) : undefined

/** Samples, every 100 ms until stopped, the write transactions open in other databases of the cluster. */
function watchOtherTransactions () {
  const client = new pg.Client({ connectionString: databaseUrl })
  const seen = { samples: 0, busy: 0, oldestMs: 0, stopped: false }
  const running = (async () => {
    await client.connect()
    while (!seen.stopped) {
      const { rows: [row] } = await client.query(`SELECT count(*)::int AS open, coalesce(max(extract(epoch FROM clock_timestamp() - xact_start) * 1000), 0)::float8 AS oldest
        FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM $1`, [benchDatabase])
      seen.samples++
      if (row.open > 0) seen.busy++
      seen.oldestMs = Math.max(seen.oldestMs, row.oldest)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    await client.end()
  })()
  return { stop: async () => { seen.stopped = true; await running; return seen } }
}

// --- streams --------------------------------------------------------------------------------

/**
 * Opens one SSE stream and parses its frames; each book.created event's delivery latency (the chunk's
 * arrival here minus the event's `time`) is kept by record id. Resolves once the stream's first frame (retry:) came.
 */
function openStream (port, index) {
  const stream = { index, received: new Map(), duplicates: 0, other: 0, ended: false, request: null }
  return new Promise((resolve, reject) => {
    const request = http.get({
      host: '127.0.0.1',
      port,
      path: '/events/stream?types=book.created',
      agent: false,
      headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' }
    }, res => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream ${index} answered ${res.statusCode}`))
        res.resume()
        return
      }
      res.setEncoding('utf8')
      let buffer = ''
      res.on('data', chunk => {
        const at = now()
        buffer += chunk
        let end
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = frame.split('\n').find(line => line.startsWith('data: '))
          if (data === undefined) continue
          const event = JSON.parse(data.slice(6))
          if (event.type !== 'book.created') {
            stream.other++
            continue
          }
          if (stream.received.has(event.data.id)) stream.duplicates++
          stream.received.set(event.data.id, at - Date.parse(event.time))
        }
        resolve(stream)
      })
      res.on('end', () => { stream.ended = true })
      res.on('error', () => { stream.ended = true })
    })
    request.on('error', error => stream.request === null ? reject(error) : (stream.ended = true))
    stream.request = request
  })
}

// --- writes ---------------------------------------------------------------------------------

// Numbers the written books' titles across the warm-up and the measured window.
let written = 0

/** POST /books at `rate` per second for `seconds`, open-loop (each send on its tick, answered or not); resolves to the created ids. */
async function write (port, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const created = new Set()
  let failed = 0
  const inFlight = new Set()
  const post = n => new Promise(resolve => {
    const body = JSON.stringify({ title: `Streamed book ${n}`, author: 'Bench Author', isbn: nextPostedIsbn(), published_year: 2001 })
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/books',
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) }
    }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { text += chunk })
      res.on('end', () => {
        if (res.statusCode === 201) created.add(JSON.parse(text).book_id)
        else if (failed++ === 0) progress(`a write answered ${res.statusCode}: ${text.slice(0, 200)}`)
        resolve()
      })
    })
    req.on('error', () => { failed++; resolve() })
    req.end(body)
  })
  const started = now()
  const total = Math.round(rate * seconds)
  let sent = 0
  while (sent < total) {
    const due = Math.min(total, Math.floor((now() - started) / 1000 * rate) + 1)
    while (sent < due) {
      sent++
      const p = post(written++)
      inFlight.add(p)
      p.then(() => inFlight.delete(p))
    }
    const next = started + sent / rate * 1000
    await new Promise(resolve => setTimeout(resolve, Math.max(0, next - now())))
  }
  const sending = (now() - started) / 1000
  await Promise.all(inFlight)
  const answered = (now() - started) / 1000
  agent.destroy()
  return { created, failed, sent, sending, answered }
}

// --- main -----------------------------------------------------------------------------------

const percentile = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]
const f1 = n => Number.isFinite(n) ? n.toFixed(1) : 'n/a'

async function main () {
  pinLoadGenerator()
  const dir = mkdtempSync(join(os.tmpdir(), 'books-bench-events-'))
  let service
  try {
    if (opts.engine === 'postgres') await createBenchDatabase(opts['postgres-url'])
    service = await startService({
      name: 'the service',
      engine: opts.engine,
      sqlitePath: join(dir, 'books.sqlite'),
      databaseUrl,
      env: { EVENT_STREAMS_PER_KEY: String(streamCount) }
    })
    progress(`opening ${streamCount} streams (${opts.engine})`)
    const streams = await Promise.all(Array.from({ length: streamCount }, (_, i) => openStream(service.port, i)))
    // A few writes before the window, so that the first measured ones do not pay for cold code paths.
    await write(service.port, 1).then(warm => progress(`warm-up: ${warm.created.size} writes`))
    await new Promise(resolve => setTimeout(resolve, 500))
    for (const stream of streams) stream.received.clear()

    progress(`writing ${rate}/s for ${duration} s`)
    // PostgreSQL: a reader sees only transactions older than the oldest one open in the whole cluster,
    // so another database's open write transactions hold the feed back; sampled to tell them apart.
    const others = opts.engine === 'postgres' ? watchOtherTransactions() : null
    const cpuBefore = cpuSeconds(service.pid)
    const startedAt = now()
    const result = await write(service.port, duration)
    // Every stream must catch up: wait until each holds every created id, or 10 s have passed.
    const deadline = now() + 10_000
    const complete = () => streams.every(s => [...result.created].every(id => s.received.has(id)))
    while (!complete() && now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
    const elapsed = (now() - startedAt) / 1000
    const cpu = cpuSeconds(service.pid) - cpuBefore
    const endedEarly = streams.filter(s => s.ended).length
    for (const stream of streams) stream.request.destroy()
    const otherTransactions = await others?.stop()

    const counts = streams.map(s => [...result.created].filter(id => s.received.has(id)).length)
    const extra = streams.reduce((sum, s) => sum + [...s.received.keys()].filter(id => !result.created.has(id)).length, 0)
    const duplicates = streams.reduce((sum, s) => sum + s.duplicates, 0)
    // Only the measured writes' events: a warm-up event that came late is not one of them.
    const sorted = Float64Array.from(streams.flatMap(s => [...result.created].filter(id => s.received.has(id)).map(id => s.received.get(id)))).sort()
    const complete100 = counts.every(c => c === result.created.size)
    const lines = [
      `engine ${opts.engine}, ${streamCount} streams (types=book.created, admin key), POST /books at ${rate}/s for ${duration} s (open-loop)`,
      `writes: ${result.sent} sent, ${result.created.size} created (201), ${result.failed} failed; ${f1(result.created.size / result.answered)} writes/s achieved ` +
        `(sending took ${f1(result.sending)} s, the last answer came at ${f1(result.answered)} s)`,
      `events per stream: min ${Math.min(...counts)}, max ${Math.max(...counts)} of ${result.created.size} written; every stream got every event: ${complete100 ? 'yes' : 'NO'}; ` +
        `duplicates ${duplicates}, events of other writes ${extra}, streams ended early ${endedEarly}`,
      `delivery latency (receive − event time) over ${sorted.length} deliveries: p50 ${f1(percentile(sorted, 50))} ms, p99 ${f1(percentile(sorted, 99))} ms, max ${f1(sorted.at(-1))} ms`,
      `service CPU: ${cpu.toFixed(2)} s over ${f1(elapsed)} s (${Math.round(100 * cpu / elapsed)} % of a core), ${Math.round(cpu / result.created.size * 1e6)} µs per write with its ${streamCount} deliveries`,
      ...(otherTransactions === undefined
        ? []
        : [`other databases' open write transactions (sampled every 100 ms): in ${otherTransactions.busy} of ${otherTransactions.samples} samples, the oldest open for ${Math.round(otherTransactions.oldestMs)} ms`]),
      `target p99 < 100 ms: ${percentile(sorted, 99) < 100 && complete100 ? 'met' : 'not met'}`
    ]
    console.log(lines.join('\n'))
    if (!complete100) process.exitCode = 1
  } finally {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
    if (opts.engine === 'postgres') await dropBenchDatabase(opts['postgres-url']).catch(error => progress(`could not drop ${benchDatabase}: ${error.message}`))
  }
}

run('bench-events', main)
