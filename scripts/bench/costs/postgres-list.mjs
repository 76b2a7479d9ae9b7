// What a list page costs PostgreSQL: the feed's head and the page's statement, as the service ran them before and runs them now.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { migrate } from '../../../dist/storage/postgres/migrations.js'
import { head } from '../../../dist/storage/postgres/events.js'
import { createBenchDatabase, defaultPostgresUrl, dropBenchDatabase, onPostgres, peerDatabase, postgresUrl } from '../postgres.mjs'
import { bookRow } from './write-rows.mjs'

const { values: options } = parseArgs({ options: { runs: { type: 'string', default: '3000' }, 'postgres-url': { type: 'string', default: defaultPostgresUrl } } })
const [runs, serverUrl] = [Number(options.runs), options['postgres-url']]

const iso = column => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const columns = 't.book_id, t.title, t.author, t.isbn, t.published_year'
const page = timestamps => `SELECT ${columns}, ${timestamps('t.created_at')}, ${timestamps('t.updated_at')}, t.seq FROM books t ORDER BY t.seq LIMIT $1`
const withHead = text => `SELECT h.xid, h.seq, p.* FROM (${head}) AS h LEFT JOIN LATERAL (${text}) AS p ON true`
// Each: the statements one page ran, and whether they are prepared (named) or planned at every run.
const variants = {
  'before: head, then the page planned at every run with to_char': [[head, true], [page(iso), false]],
  'the head alone': [[head, true]],
  'the page alone, planned at every run, to_char': [[page(iso), false]],
  'the page alone, prepared, to_char': [[page(iso), true]],
  'the page alone, prepared, timestamps as text': [[page(c => c), true]],
  'now: the head in the page, prepared, timestamps as text': [[withHead(page(c => c)), true]],
  'SELECT 1, prepared (a statement’s floor)': [['SELECT 1', true]]
}

// Timestamps stay text, as the service's list rows keep them.
const asText = { getTypeParser: (oid, format) => oid === pg.types.builtins.TIMESTAMPTZ ? value => value : pg.types.getTypeParser(oid, format) }
const database = peerDatabase('costs')
await createBenchDatabase(serverUrl, database)
console.log(`| PostgreSQL list page of 20 (1,000 books; CPU µs per page, ${runs} pages, 8 in flight) | database | client (pg, Node) |\n|---|---:|---:|`)
// Pipelined with the read connections' settings, as src/storage/postgres/connection.ts opens them.
const client = new pg.Client({ connectionString: postgresUrl(serverUrl, database), pipeline: true, options: '-c enable_seqscan=off -c jit=off -c TimeZone=UTC -c DateStyle=ISO' })
try {
  await onPostgres(serverUrl, database, async setup => {
    await migrate(setup)
    for (let i = 0; i < 1000; i++) {
      const { row } = bookRow(i)
      await setup.query(`INSERT INTO books (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row).map((_, n) => `$${n + 1}`).join(', ')})`, Object.values(row))
    }
  })
  await client.connect()
  const { rows: [{ pid }] } = await client.query('SELECT pg_backend_pid() AS pid')
  const backendCpu = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((sum, ticks) => sum + Number(ticks) * 10_000, 0)
  let named = 0
  for (const [name, statements] of Object.entries(variants)) {
    const queries = statements.map(([text, prepared]) => ({ text, values: text.includes('$1') ? [21] : [], rowMode: 'array', types: asText, ...(prepared && { name: `s${named++}` }) }))
    const pages = async count => {
      for (let i = 0; i < count; i += 8) {
        await Promise.all(Array.from({ length: 8 }, async () => {
          for (const query of queries) {
            await client.query(query)
          }
        }))
      }
    }
    await pages(400)
    const before = backendCpu()
    const ownBefore = process.cpuUsage()
    await pages(runs)
    const own = process.cpuUsage(ownBefore)
    console.log(`| ${name} | ${((backendCpu() - before) / runs).toFixed(0)} | ${((own.user + own.system) / runs).toFixed(0)} |`)
  }
} finally {
  await client.end()
  await dropBenchDatabase(serverUrl, database)
}
