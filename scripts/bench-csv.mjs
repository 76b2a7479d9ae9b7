// `node scripts/bench-csv.mjs [dist…]` (after npm run build): how fast an import's file is read, in records a second of CPU, CSV and NDJSON (see BENCHMARKS.md).
// Other builds (copies of dist/ from other commits) may be named: their rounds alternate with this one's, so that both see the same machine.
import { join, resolve } from 'node:path'
import { Readable } from 'node:stream'
import { root } from './bench/paths.mjs'

const builds = [join(root, 'dist'), ...process.argv.slice(2).map(dir => resolve(dir))]
const modules = await Promise.all(builds.map(async dist => ({
  dist,
  csv: await import(join(dist, 'formats/csv.js')),
  rows: await import(join(dist, 'imports/rows.js')),
  // Builds since issue 38's H2 fix take the body as it arrives (src/http/body.ts); earlier ones, the stream.
  body: await import(join(dist, 'http/body.js')).catch(() => null)
})))
/** The bytes as the build's fileRows takes a request's body. */
const bodyOf = (build, bytes) => build.body === null ? Readable.from(bytes) : build.body.arriving(Readable.from(bytes))

// 100,000 books as an export writes them: one in ten titles quoted (a comma), one in fifty spanning two lines.
const books = 100_000
const header = ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at']
const { csvRow } = modules[0].csv
let csv = csvRow(header)
let ndjson = ''
for (let i = 0; i < books; i++) {
  const title = i % 50 === 0 ? `Volume ${i}\nA second line` : i % 10 === 0 ? `Dune, part ${i}` : `The book number ${i}`
  const book = {
    book_id: `0190a5d2-7c1e-7b4a-9f3e-${String(i).padStart(12, '0')}`,
    title,
    author: i % 7 === 0 ? 'Le Guin, Ursula K.' : 'Frank Herbert',
    isbn: i % 3 === 0 ? null : '978-0-441-01359-3',
    published_year: 1900 + (i % 120),
    created_at: '2026-11-28T10:00:00.000Z',
    updated_at: '2026-11-28T10:00:00.000Z'
  }
  csv += csvRow(header.map(field => book[field]))
  ndjson += JSON.stringify(book) + '\n'
}

/** The text (or bytes) cut into chunks of `size`, as a stream hands them on. */
const chunksOf = (text, size) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))
/** The text in chunks of `size` bytes, decoded as the service decodes an upload (strings of their own, not slices of one string). */
const decodedChunksOf = (text, size) => {
  const decoder = new TextDecoder()
  return chunksOf(Buffer.from(text), size).map(bytes => decoder.decode(bytes, { stream: true }))
}
const shape = { fields: header, integers: ['published_year'] }
const limits = { maxBytes: 1 << 30, maxRows: 1 << 30 }

/** Records read, each counted. */
async function count (records) {
  let n = 0
  for await (const record of records) if (record !== undefined) n++
  return n
}

// Inputs made once, outside the timed rounds.
const [csvBytes, ndjsonBytes] = [chunksOf(Buffer.from(csv), 65_536), chunksOf(Buffer.from(ndjson), 65_536)]
const [csvText, csvSmallText] = [decodedChunksOf(csv, 65_536), decodedChunksOf(csv, 1024)]
const cases = [
  ['csvRecords, 64 KiB chunks', ({ csv: { csvRecords } }) => count(csvRecords(Readable.from(csvText)))],
  ['csvRecords, 1 KiB chunks', ({ csv: { csvRecords } }) => count(csvRecords(Readable.from(csvSmallText)))],
  ['fileRows CSV, 64 KiB chunks', build => count(build.rows.fileRows(bodyOf(build, csvBytes), 'csv', shape, limits, () => {}))],
  ['fileRows NDJSON, 64 KiB chunks', build => count(build.rows.fileRows(bodyOf(build, ndjsonBytes), 'ndjson', shape, limits, () => {}))]
]

const rounds = 15
for (const [name, run] of cases) {
  const rates = modules.map(() => [])
  for (const build of modules) await run(build)
  for (let round = 0; round < rounds; round++) {
    for (const [i, build] of modules.entries()) {
      // CPU time rather than wall time: the machine is shared, and another process's turn is not the reader's cost.
      const cpu = process.cpuUsage()
      const records = await run(build)
      const { user, system } = process.cpuUsage(cpu)
      rates[i].push(records / ((user + system) / 1e6))
    }
  }
  for (const [i, { dist }] of modules.entries()) {
    const sorted = rates[i].sort((a, b) => a - b)
    const [median, best] = [sorted[Math.floor(rounds / 2)], sorted[rounds - 1]]
    const figure = rate => `${Math.round(rate).toLocaleString('en')} records/s (${(1e6 / rate).toFixed(2)} µs a record)`
    console.log(`${name}${modules.length > 1 ? ` [${dist}]` : ''}: median ${figure(median)}, best ${figure(best)}, of ${rounds} rounds`)
  }
}
