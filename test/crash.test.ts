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
