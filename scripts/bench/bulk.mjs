// `npm run bench -- --bulk`: a catalogue imported from CSV through HTTP, exported back as CSV, and the same books sent the way a user does without imports (one POST each), on each engine.
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import autocannon from 'autocannon'
import { fixed, int } from './format.mjs'
import { benchDatabaseUrl, command, engines, postgresServer, settings } from './options.mjs'
import { createBenchDatabase, dropBenchDatabase } from './postgres.mjs'
import { cpuSeconds, rssMegabytes } from './processes.mjs'
import { progress } from './progress.mjs'
import { apiKey, startService } from './servers.mjs'
import { nextPostedIsbn, seededIsbn } from './isbn.mjs'

const auth = { authorization: `Bearer ${apiKey}` }
const timeoutMs = 600_000

/** A CSV file of `books` books with distinct ISBNs, titles of a few words, authors among 5,000. */
async function writeCatalogue (path, books) {
  const out = createWriteStream(path)
  out.write('title,author,isbn,published_year\r\n')
  for (let i = 0; i < books; i++) {
    if (!out.write(`The book of things number ${i},Author ${i % 5000},${seededIsbn(i)},${1800 + i % 220}\r\n`)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}

/** Samples the server's RSS every 100 ms while `work` runs; its result, the time it took and the RSS growth over the start. */
async function measured (server, work) {
  const before = rssMegabytes(server.pid)
  let peak = before
  const sampler = setInterval(() => { peak = Math.max(peak, rssMegabytes(server.pid)) }, 100)
  const cpuBefore = cpuSeconds(server.pid)
  const started = performance.now()
  try {
    const result = await work()
    return { result, seconds: (performance.now() - started) / 1000, rssGrowth: peak - before, cpu: cpuSeconds(server.pid) - cpuBefore }
  } finally {
    clearInterval(sampler)
  }
}

async function importFile (server, file) {
  const handle = await open(file)
  const res = await fetch(`${server.url}/imports?collection=books`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'text/csv' },
    body: handle.readableWebStream({ type: 'bytes' }),
    duplex: 'half'
  })
  await handle.close()
  if (res.status !== 202) throw new Error(`POST /imports answered ${res.status}: ${await res.text()}`)
  const location = res.headers.get('location')
  for (;;) {
    const job = await (await fetch(server.url + location, { headers: auth })).json()
    if (job.state !== 'running') {
      if (job.state !== 'succeeded' || job.rows.refused > 0) throw new Error(`the import ended ${job.state}: ${JSON.stringify(job).slice(0, 400)}`)
      return { job }
    }
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

/** Single POSTs on 4 connections while `work` runs (the import must yield to them): their p99. */
async function besideWrites (server, work) {
  const controller = { stop: false }
  const latencies = []
  const writer = async () => {
    while (!controller.stop) {
      const started = performance.now()
      const res = await fetch(`${server.url}/books`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Written beside the import', author: 'Someone', isbn: nextPostedIsbn() })
      })
      await res.arrayBuffer()
      if (res.status === 201) latencies.push(performance.now() - started)
    }
  }
  const writers = Array.from({ length: 4 }, writer)
  try {
    return { result: await work(), latencies }
  } finally {
    controller.stop = true
    await Promise.all(writers)
  }
}

const percentile = (values, p) => values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]

async function exportAll (server) {
  const res = await fetch(`${server.url}/books`, { headers: { ...auth, accept: 'text/csv' } })
  let bytes = 0
  let lines = 0
  for await (const chunk of res.body) {
    bytes += chunk.length
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
  }
  return { bytes, rows: lines - 1 }
}

/** The same books, one POST each, on the run's connections. */
async function postAll (server, books) {
  let i = 0
  const result = await autocannon({
    url: server.url,
    connections: settings.connections,
    amount: books,
    requests: [{
      setupRequest: req => ({
        ...req,
        method: 'POST',
        path: '/books',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `The book of things number ${i}`, author: `Author ${i % 5000}`, isbn: seededIsbn(i++), published_year: 1800 + i % 220 })
      })
    }]
  })
  return { ok: result['2xx'], errors: result.errors + result.non2xx }
}

async function serviceOn (engine, dir, name) {
  if (engine === 'postgres') await createBenchDatabase(postgresServer)
  // An upload is one request: a file that takes longer to send and check than REQUEST_TIMEOUT (30 s by
  // default) is cut with a 408, and a million books on PostgreSQL here take longer.
  return startService({ name, engine, sqlitePath: join(dir, `${name}.sqlite`), databaseUrl: benchDatabaseUrl, logTo: 'ignore', env: { REQUEST_TIMEOUT: String(timeoutMs) } })
}

export async function bulkRun () {
  const books = settings.books
  const dir = mkdtempSync(join(os.tmpdir(), 'books-bulk-'))
  const rows = []
  try {
    const file = join(dir, 'books.csv')
    progress(`writing a CSV of ${int(books)} books`)
    await writeCatalogue(file, books)
    const size = statSync(file).size
    for (const engine of engines) {
      const server = await serviceOn(engine, dir, `${engine}-import`)
      try {
        progress(`${engine}: importing ${int(books)} books (${int(size)} bytes) with 4 connections of single POSTs beside`)
        const imported = await measured(server, () => besideWrites(server, () => importFile(server, file)))
        const { job } = imported.result.result
        progress(`${engine}: exporting them as CSV`)
        const exported = await measured(server, () => exportAll(server))
        if (exported.result.rows < books) throw new Error(`the export gave ${exported.result.rows} rows, not ${books}`)
        rows.push({
          engine,
          importRate: books / imported.seconds,
          importSeconds: imported.seconds,
          importRss: imported.rssGrowth,
          importCpuUs: imported.cpu / books * 1e6,
          besideP99: percentile(imported.result.latencies, 0.99),
          besideCount: imported.result.latencies.length,
          exportRate: exported.result.rows / exported.seconds,
          exportRss: exported.rssGrowth,
          exportCpuUs: exported.cpu / exported.result.rows * 1e6,
          job
        })
      } finally {
        await server.stop()
        if (engine === 'postgres') await dropBenchDatabase(postgresServer)
      }
      const posting = await serviceOn(engine, dir, `${engine}-posts`)
      try {
        progress(`${engine}: the same ${int(books)} books, one POST each on ${settings.connections} connections`)
        const posted = await measured(posting, () => postAll(posting, books))
        Object.assign(rows.at(-1), { postRate: posted.result.ok / posted.seconds, postErrors: posted.result.errors, postCpuUs: posted.cpu / posted.result.ok * 1e6 })
        progress(`${engine}: ${JSON.stringify(rows.at(-1), (key, value) => key === 'job' ? undefined : typeof value === 'number' ? Math.round(value * 10) / 10 : value)}`)
      } finally {
        await posting.stop()
        if (engine === 'postgres') await dropBenchDatabase(postgresServer)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const lines = [
    `Bulk import and export, ${int(books)} books (\`${command}\`, ${os.cpus().length} cores, service on core 0, REQUEST_TIMEOUT=${timeoutMs}):`,
    '',
    '| engine | import rows/s | import CPU µs/row | RSS growth MB | POST p99 beside (4 conn.) | export rows/s | export CPU µs/row | export RSS growth MB | one POST per book, rows/s |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(r => `| ${r.engine} | ${int(r.importRate)} | ${fixed(r.importCpuUs, 1)} | ${int(r.importRss)} | ${fixed(r.besideP99, 1)} ms (${int(r.besideCount)} writes) | ${int(r.exportRate)} | ${fixed(r.exportCpuUs, 1)} | ${int(r.exportRss)} | ${int(r.postRate)}${r.postErrors > 0 ? ` (${r.postErrors} errors)` : ''} |`)
  ]
  return { text: lines.join('\n'), section: null }
}
