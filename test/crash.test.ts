// Durability through the real process: kill -9 at any moment of a write load loses no acknowledged write.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { adminKey } from './helper.js'
import { allBooks, post, start, stop, until } from './process.js'

// Four starts of a TypeScript child process on a busy CI machine can outlast tap's default 30 s.
t.setTimeout(120_000)

/** What a client was told about one record, and the write it sent without hearing back. */
interface Expected { acked: string, pending: string | null }

/**
 * Each worker creates a book, replaces it a few times (If-Match), then starts another; a write
 * counts only once its 2xx arrived. Stops at the first network error (the server is gone).
 */
async function worker (origin: string, name: string, records: Map<string, Expected>, acked: { count: number }): Promise<void> {
  try {
    for (let n = 0; ; n++) {
      const created = await post(origin, `${name}-${n}-v0`)
      if (created.status !== 201) throw new Error(`create answered ${created.status}`)
      const record: Expected = { acked: created.book!.title, pending: null }
      records.set(created.book!.book_id, record)
      acked.count++
      let etag = created.etag!
      for (let v = 1; v <= 3; v++) {
        const title = `${name}-${n}-v${v}`
        record.pending = title
        const res = await fetch(`${origin}/books/${created.book!.book_id}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'if-match': etag, authorization: `Bearer ${adminKey}` },
          body: JSON.stringify({ title, author: 'A' })
        })
        if (res.status !== 200) throw new Error(`update answered ${res.status}`)
        etag = res.headers.get('etag')!
        record.acked = title
        record.pending = null
        acked.count++
      }
    }
  } catch (error) {
    if (!(error instanceof TypeError)) throw error // fetch's network failure; anything else is a finding
  }
}

t.test('kill -9 mid-load, restart on the same file: every acknowledged write is there, several rounds', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-crash-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATABASE_PATH: join(dir, 'data.sqlite') }
  const records = new Map<string, Expected>()
  // Each restart after a kill both checks the previous round and carries the next round's load.
  let running = await start(env)
  for (let round = 1; round <= 3; round++) {
    const acked = { count: 0 }
    const workers = Array.from({ length: 8 }, (_, w) => worker(running.origin, `r${round}w${w}`, records, acked))
    await until(() => acked.count >= 150)
    t.equal(await stop(running, 'SIGKILL'), null, `round ${round}: killed mid-load after ${acked.count} acknowledged writes`)
    await Promise.all(workers)

    running = await start(env)
    const stored = new Map((await allBooks(running.origin)).map(b => [b.book_id, b.title]))
    const lost = [...records].filter(([id, e]) => stored.get(id) !== e.acked && stored.get(id) !== e.pending)
    t.same(lost, [], `round ${round}: all ${records.size} acknowledged records present with their acknowledged (or a later sent) content`)
    for (const id of records.keys()) records.set(id, { acked: stored.get(id)!, pending: null })
  }
  t.equal(await stop(running, 'SIGTERM'), 0)
})

/** An import as its resource shows it. */
async function importOf (origin: string, location: string): Promise<{ state: string, rows: { read: number, written: number, refused: number }, detail: string | null }> {
  return await (await fetch(origin + location, { headers: { authorization: `Bearer ${adminKey}` } })).json() as never
}

/** Polls the import until `done` holds of it. */
async function importUntil (origin: string, location: string, done: (job: Awaited<ReturnType<typeof importOf>>) => boolean) {
  for (;;) {
    const job = await importOf(origin, location)
    if (done(job)) return job
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

t.test('kill -9 while an import writes, restart: it is taken up where its last batch ended, every row written once, with one event each', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-crash-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATABASE_PATH: join(dir, 'data.sqlite'), IMPORT_LEASE_MS: '1000' }
  const rows = 6000
  let running = await start(env)
  const file = Array.from({ length: rows }, (_, i) => JSON.stringify({ title: `Row ${i}`, author: 'A' })).join('\n')
  const started = await fetch(`${running.origin}/imports?collection=books`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${adminKey}` }, body: file })
  t.equal(started.status, 202)
  const location = started.headers.get('location')!
  const before = await importUntil(running.origin, location, job => job.rows.written >= 1000 || job.state !== 'running')
  t.equal(before.state, 'running', `killed with ${before.rows.written} rows written`)
  t.equal(await stop(running, 'SIGKILL'), null)

  running = await start(env)
  const ended = await importUntil(running.origin, location, job => job.state !== 'running')
  t.match(ended, { state: 'succeeded', rows: { read: rows, written: rows, refused: 0 } }, 'taken up once its lease ran out, and finished')
  const exported = await (await fetch(`${running.origin}/books/export.ndjson`)).text()
  const titles = exported.split('\n').slice(0, -1).map(line => (JSON.parse(line) as { title: string }).title)
  t.equal(titles.length, rows, 'every row once')
  t.equal(new Set(titles).size, rows)
  let events = 0
  for (let after = '', more = true; more;) {
    const page = await (await fetch(`${running.origin}/events?types=book.created&limit=500${after === '' ? '' : `&after=${after}`}`, { headers: { authorization: `Bearer ${adminKey}` } })).json() as { items: unknown[], next_cursor: string }
    events += page.items.length
    more = page.items.length > 0
    after = page.next_cursor
  }
  t.equal(events, rows, 'one book.created per record, none twice')
  t.equal(await stop(running, 'SIGTERM'), 0)
})

t.test('kill -9 while a file is being received, restart: the import ends failed, saying so, and nothing was written', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-crash-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATABASE_PATH: join(dir, 'data.sqlite'), IMPORT_LEASE_MS: '1000' }
  let running = await start(env)
  // An upload that never ends: the first rows arrive, then the node dies.
  const upload = new TransformStream<Uint8Array, Uint8Array>()
  const writer = upload.writable.getWriter()
  const sent = fetch(`${running.origin}/imports?collection=books`, { method: 'POST', headers: { 'content-type': 'text/csv', authorization: `Bearer ${adminKey}` }, body: upload.readable, duplex: 'half' } as RequestInit).catch(() => null)
  await writer.write(new TextEncoder().encode('title,author\r\n' + 'Dune,Frank Herbert\r\n'.repeat(1200)))
  const listed = async () => (await (await fetch(`${running.origin}/imports`, { headers: { authorization: `Bearer ${adminKey}` } })).json() as { items: { import_id: string, rows: { read: number } }[] }).items
  for (let items = await listed(); items[0] === undefined || items[0].rows.read < 1000; items = await listed()) await new Promise(resolve => setTimeout(resolve, 20))
  const id = (await listed())[0]!.import_id
  t.equal(await stop(running, 'SIGKILL'), null)
  await sent
  writer.abort().catch(() => {})

  running = await start(env)
  const ended = await importUntil(running.origin, `/imports/${id}`, job => job.state !== 'receiving')
  t.match(ended, { state: 'failed', detail: /cut off after 1,000 rows.*nothing was written/ })
  t.same(await allBooks(running.origin), [])
  t.equal(await stop(running, 'SIGTERM'), 0)
})
