// A GET of one book's page beside exports that walk a whole index (issue 38, M2): the victim's latency alone and during the attack.
// Usage: npm run -s build && [BOOKS=200000] [SECONDS=15] [ATTACKERS=1] node scripts/bench/export-beside.mjs
// (settings in the environment: the bench's modules read the command line as theirs)
// Seeds a SQLite file (the service's own migrations), starts dist/server.js on it, then measures a keyed
// `GET /books?limit=1`, one request after another, alone and while anonymous clients each send
// `GET /books?updated_since=2099-01-01T00:00:00Z&sort=title` with `Accept: text/csv` back to back (an
// export that selects nothing, after walking the title index), each refusal followed by the wait its
// Retry-After asks for.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { bookGenerator, idSeed, prng, seededFrom, uuidAt } from './data.mjs'
import { seededIsbn } from './isbn.mjs'
import { fromDist } from './paths.mjs'
import { sqliteSeeder } from './seeders.mjs'
import { apiKey, startService } from './servers.mjs'

const books = Number(process.env.BOOKS ?? 200_000)
const seconds = Number(process.env.SECONDS ?? 15)
const attackers = Number(process.env.ATTACKERS ?? 1)

async function seed (path) {
  const { fold } = await fromDist('domain/search/fold.js')
  const seeder = await sqliteSeeder(path)
  const next = bookGenerator(books)
  const ids = prng(idSeed)
  for (let from = 0; from < books; from += 50_000) {
    const rows = []
    for (let i = from; i < Math.min(books, from + 50_000); i++) {
      const { title, author, published_year: year } = next()
      const at = new Date(seededFrom + i * 10).toISOString()
      rows.push({ book_id: uuidAt(seededFrom + i * 10, ids), title, author, isbn: seededIsbn(i), published_year: year, created_at: at, updated_at: at, title_key: fold(title), author_key: fold(author) })
    }
    await seeder.books(rows)
  }
  await seeder.students([])
  await seeder.finish()
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

/** Keyed GETs one after another until `until`; their latencies in ms. */
async function victim (url, until) {
  const latencies = []
  while (performance.now() < until) {
    const started = performance.now()
    const res = await fetch(`${url}/books?limit=1`, { headers: { authorization: `Bearer ${apiKey}` } })
    await res.arrayBuffer()
    latencies.push(performance.now() - started)
  }
  return latencies
}

/** Anonymous M2 exports one after another until `until`, each refusal followed by its Retry-After; counts each status. */
async function attacker (url, until, statuses) {
  while (performance.now() < until) {
    const res = await fetch(`${url}/books?updated_since=2099-01-01T00:00:00Z&sort=title`, { headers: { accept: 'text/csv' } })
    await res.arrayBuffer()
    statuses[res.status] = (statuses[res.status] ?? 0) + 1
    const retryAfter = Number(res.headers.get('retry-after') ?? 0)
    if (retryAfter > 0) await new Promise(resolve => setTimeout(resolve, Math.min(retryAfter * 1000, until - performance.now())))
  }
}

function summary (name, latencies) {
  const sorted = [...latencies].sort((a, b) => a - b)
  const f = ms => ms.toFixed(1)
  return `${name.padEnd(22)} ${String(sorted.length).padStart(6)} GETs  ${(sorted.length / seconds).toFixed(0).padStart(5)}/s  p50 ${f(percentile(sorted, 0.5))} ms  p90 ${f(percentile(sorted, 0.9))} ms  p99 ${f(percentile(sorted, 0.99))} ms  max ${f(sorted.at(-1))} ms`
}

const dir = mkdtempSync(join(os.tmpdir(), 'export-beside-'))
let service
try {
  const path = join(dir, 'books.sqlite')
  await seed(path)
  // The anonymous quota as the service ships it would refuse most of the attack: it is lifted, so that
  // the figures show what each export costs the others.
  service = await startService({ name: 'service', engine: 'sqlite', sqlitePath: path, env: { RATE_LIMIT_ANONYMOUS: '999999999/60' } })
  // One whole export, alone: what moving it off the event loop costs an honest client.
  const exportStarted = performance.now()
  const whole = await fetch(`${service.url}/books`, { headers: { accept: 'text/csv', authorization: `Bearer ${apiKey}` } })
  const bytes = (await whole.arrayBuffer()).byteLength
  const exportSeconds = (performance.now() - exportStarted) / 1000
  const alone = await victim(service.url, performance.now() + seconds * 1000)
  const statuses = {}
  const until = performance.now() + seconds * 1000
  const [beside] = await Promise.all([victim(service.url, until), ...Array.from({ length: attackers }, () => attacker(service.url, until, statuses))])
  console.log(`${books.toLocaleString('en')} books, ${seconds} s each, ${attackers} attacker(s); exports answered: ${JSON.stringify(statuses)}`)
  console.log(`whole export: ${(bytes / 1e6).toFixed(1)} MB in ${exportSeconds.toFixed(2)} s (${Math.round(books / exportSeconds).toLocaleString('en')} rows/s)`)
  console.log(summary('alone', alone))
  console.log(summary('beside M2 exports', beside))
} finally {
  await service?.stop()
  rmSync(dir, { recursive: true, force: true })
}
