// What each part of a PostgreSQL create costs the database: the service's insert statement, one part switched off at a time.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { migrate } from '../../../dist/storage/postgres/migrations.js'
import { createBenchDatabase, defaultPostgresUrl, dropBenchDatabase, onPostgres, peerDatabase, postgresUrl } from '../postgres.mjs'
import { bookRow } from './write-rows.mjs'

const { values: options } = parseArgs({ options: { batch: { type: 'string', default: '16' }, rows: { type: 'string', default: '4000' }, 'postgres-url': { type: 'string', default: defaultPostgresUrl } } })
const [batch, rows, serverUrl] = [Number(options.batch), Number(options.rows), options['postgres-url']]

const columns = 'book_id, title, author, isbn, published_year, created_at, updated_at, title_key, author_key'
const record = `INSERT INTO books (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING 1`
// As src/storage/postgres/table.ts wrote a book and its event before the fifth round: one statement per write.
const withEvent = `WITH record AS (${record}),
  event AS (INSERT INTO events (type, envelope, time) SELECT $10::text, $11::text, $12::timestamptz FROM record)
  SELECT 1 FROM record`
// As it writes them now: one statement per batch, each column an array, the events in the rows' order.
const types = ['uuid', 'text', 'text', 'text', 'int', 'timestamptz', 'timestamptz', 'text', 'text', 'text', 'text', 'timestamptz']
const sharedEvent = `, event AS (
    INSERT INTO events (type, envelope, time) SELECT type, envelope, time FROM input WHERE book_id IN (SELECT book_id FROM record) ORDER BY n
  )`
const shared = withEvents => `WITH input AS (
    SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) WITH ORDINALITY
      AS i(${columns}, type, envelope, time, n)
  ), record AS (
    INSERT INTO books (${columns}) SELECT ${columns} FROM input ORDER BY n ON CONFLICT DO NOTHING RETURNING book_id
  )${withEvents ? sharedEvent : ''}
  SELECT n FROM input WHERE book_id IN (SELECT book_id FROM record)`
const searchWordsInSql = `CREATE OR REPLACE FUNCTION search_words(words text, weight "char") RETURNS tsvector
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN setweight(coalesce((
    SELECT string_agg('''' || replace(replace(w, '\\', '\\\\'), '''', '\\''') || ''':' || n::text, ' ')::tsvector
    FROM unnest(string_to_array(words, ' ')) WITH ORDINALITY AS u(w, n)), ''::tsvector), weight)`

const noSecondary = ['ALTER TABLE books DROP COLUMN tsv', 'DROP INDEX books_title', 'DROP INDEX books_author_title', 'DROP INDEX books_published_year', 'DROP INDEX books_updated']
// Each: what is changed in the schema first, and how a batch is written: a statement per write, or one shared.
const variants = {
  'before: search_words in SQL (migration 5), a statement per write': [[searchWordsInSql], 'per write'],
  'before: search_words in PL/pgSQL (migration 8), a statement per write': [[], 'per write'],
  'the same, with generic plans forced': [['SET plan_cache_mode = force_generic_plan'], 'per write'],
  '**now**: one shared statement per batch': [[], 'shared'],
  'now, without the GIN search index': [['DROP INDEX books_search'], 'shared'],
  'now, without the search vector (nor its index)': [['ALTER TABLE books DROP COLUMN tsv'], 'shared'],
  'now, without books_title': [['DROP INDEX books_title'], 'shared'],
  'now, without books_author_title': [['DROP INDEX books_author_title'], 'shared'],
  'now, without books_published_year': [['DROP INDEX books_published_year'], 'shared'],
  'now, without books_updated': [['DROP INDEX books_updated'], 'shared'],
  'now, without the event row': [[], 'shared, no event'],
  'now, with no secondary index, search vector or event': [noSecondary, 'shared, no event']
}

const template = peerDatabase('coststemplate')
const scratch = peerDatabase('costs')
await createBenchDatabase(serverUrl, template)
await onPostgres(serverUrl, template, client => migrate(client))
console.log(`| PostgreSQL create, batches of ${batch} in one pipelined transaction (CPU µs per create) | database | client (Node, pg) |\n|---|---:|---:|`)
try {
  for (const [name, [sql, shape]] of Object.entries(variants)) {
    await onPostgres(serverUrl, 'postgres', async client => {
      await client.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`)
      await client.query(`CREATE DATABASE ${scratch} TEMPLATE ${template}`)
    })
    // Pipelined, as the service's connections are: the statements of a batch go out without waiting.
    const client = new pg.Client({ connectionString: postgresUrl(serverUrl, scratch), pipeline: true })
    await client.connect()
    try {
      for (const statement of sql) await client.query(statement)
      const { rows: [{ pid }] } = await client.query('SELECT pg_backend_pid() AS pid')
      // The backend's user + system time, from /proc (the server is on this machine), in µs at 100 ticks a second.
      const backendCpu = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((sum, ticks) => sum + Number(ticks) * 10_000, 0)
      const batches = async (from, count) => {
        for (let i = from; i < from + count; i += batch) {
          const books = Array.from({ length: batch }, (_, j) => bookRow(i + j))
          const writes = shape === 'per write'
            ? books.map(({ row, event }) => client.query({ name: 'write', text: withEvent, values: [...Object.values(row), ...event] }))
            : [client.query({ name: 'write', text: shared(shape === 'shared'), values: types.map((_, c) => books.map(({ row, event }) => [...Object.values(row), ...event][c])) })]
          await Promise.all([client.query('BEGIN'), ...writes, client.query('COMMIT')])
        }
      }
      await batches(0, 800)
      const before = backendCpu()
      const ownBefore = process.cpuUsage()
      await batches(1000, rows)
      const own = process.cpuUsage(ownBefore)
      const { rows: [written] } = await client.query('SELECT (SELECT count(*) FROM books)::int AS books, (SELECT count(*) FROM events)::int AS events')
      if (written.books !== 800 + rows || (shape !== 'shared, no event' && written.events !== written.books)) throw new Error(`${name}: wrote ${JSON.stringify(written)}`)
      console.log(`| ${name} | ${((backendCpu() - before) / rows).toFixed(0)} | ${((own.user + own.system) / rows).toFixed(0)} |`)
    } finally {
      await client.end()
    }
  }
} finally {
  await dropBenchDatabase(serverUrl, scratch)
  await dropBenchDatabase(serverUrl, template)
}
