// The change feed on PostgreSQL: the contract, then what only several transactions and nodes on one database can show.
import pg from 'pg'
import t from 'tap'
import type { Test } from 'tap'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { pruneBatch, readScan } from '../src/storage/postgres/events.js'
import type { BookValues, Repositories } from '../src/storage/types.js'
import { feedContract, readAll, settled } from './feed-contract.js'
import { testDatabase, withPostgres } from './postgres.js'

const settingsFor = (url: string) => ({ url, connections: 2, connectTimeout: 2000, statementTimeout: 5000 })
const book = (title: string): BookValues => ({ title, author: 'A', isbn: null, published_year: null })

async function repositories (t: Test, url: string): Promise<Repositories> {
  const opened = await openPostgresRepositories(settingsFor(url))
  t.teardown(() => opened.close())
  return opened
}

async function session (t: Test, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(() => client.end())
  return client
}

const parts = (position: string) => position.split('-')

await withPostgres(t, t => {
  feedContract(t, async t => {
    const url = await testDatabase(t)
    return async () => openPostgresRepositories(settingsFor(url))
  })

  t.test('a transaction that commits late is read after it commits, never skipped', async t => {
    const url = await testDatabase(t)
    const { books, events } = await repositories(t, url)
    const start = await events.head()
    const early = await session(t, url)
    await early.query('BEGIN')
    await early.query("INSERT INTO events (type, envelope, time) VALUES ('book.created', '{\"early\":true}', now())")
    const later = await books.create(book('later'))
    const waiting = await events.read(start, ['book.created'], 10)
    t.same(waiting, { events: [], next: start, more: false }, 'the later commit waits behind the open transaction')
    t.equal(await events.head(), start, 'and the head does not pass it')
    await early.query('COMMIT')
    await settled(events, start, 2)
    const { events: read } = await readAll(events, start)
    t.same(read.map(e => e.envelope.includes('"early":true') ? 'early' : JSON.parse(e.envelope).data.object.book_id), ['early', later.record.book_id],
      'both arrive, the earlier transaction first')
  })

  // A loaded machine (CI runs three files at a time) makes this one slow rather than wrong.
  t.test('two nodes writing while a reader pages through both feeds in turn: every position once, in order', { timeout: 120_000 }, async t => {
    const url = await testDatabase(t)
    const nodes = [await repositories(t, url), await repositories(t, url)]
    const start = await nodes[0]!.events.head()
    const types = ['book.created', 'book.replaced', 'book.deleted']
    let done = false
    const writers = Promise.all(nodes.map(async ({ books }, n) => {
      for (let round = 0; round < 15; round++) {
        // Several writes a tick, so that group commit batches them and the nodes' transactions overlap.
        const batch = await Promise.all([1, 2, 3].map(i => books.create(book(`${n}-${round}-${i}`))))
        const first = batch[0]!.record.book_id
        if (round % 2 === 0) await books.replace(first, book('again'), null)
        else await books.delete(first, null)
      }
    })).finally(() => { done = true })
    const positions: string[] = []
    for (let i = 0, from = start; ; i++) {
      // Caught up only when a read that began after the last write finds nothing new.
      const finished = done
      const page = await nodes[i % 2]!.events.read(from, types, 7)
      positions.push(...page.events.map(e => e.position))
      // Other tests' transactions on the server can hold the last commits back a while: wait for all of them.
      if (finished && page.events.length === 0 && page.next === from && positions.length >= 2 * 15 * 4) break
      from = page.next
    }
    await writers
    const client = await session(t, url)
    const { rows } = await client.query<{ x: string, s: string }>('SELECT xid::text AS x, seq::text AS s FROM events ORDER BY xid, seq')
    const feedId = parts(start)[0]
    t.same(positions, rows.map(r => `${feedId}-${BigInt(r.x).toString(36)}-${BigInt(r.s).toString(36)}`), 'every event in the table, in (xid, seq) order')
    t.equal(new Set(positions).size, positions.length, 'none twice')
    t.equal(positions.length, 2 * 15 * 4, 'as many as were written')
  })

  t.test('an event that cannot be written fails its write: neither record nor event', async t => {
    const url = await testDatabase(t)
    const { books, events } = await repositories(t, url)
    const client = await session(t, url)
    await client.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.envelope LIKE '%"title":"Refused"%' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`)
    await client.query('CREATE TRIGGER refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse()')
    const start = await events.head()
    const [good, bad] = await Promise.allSettled([books.create(book('Fine')), books.create(book('Refused'))])
    t.equal(good.status, 'fulfilled', 'its neighbour in the batch commits')
    t.match(bad, { status: 'rejected', reason: { message: 'refused by the test' } })
    const { rows } = await client.query("SELECT count(*)::int AS n FROM books WHERE title = 'Refused'")
    t.equal(rows[0].n, 0, 'no record')
    await settled(events, start, 1)
    const { events: read } = await readAll(events, start)
    t.same(read.map(e => JSON.parse(e.envelope).data.object.title), ['Fine'], 'and only the neighbour\'s event')
  })

  t.test('positions: their form, a position beyond the head (a restore) and the pruning watermark', async t => {
    const url = await testDatabase(t)
    const { books, events } = await repositories(t, url)
    const empty = await events.head()
    t.match(empty, /^[0-9a-z]{8}-0-0$/, 'the empty feed\'s head')
    await books.create(book('one'))
    await settled(events, empty, 1)
    const head = await events.head()
    const [feedId, xid, seq] = parts(head) as [string, string, string]
    t.match(head, /^[0-9a-z]{8}-[1-9a-z][0-9a-z]*-[1-9a-z][0-9a-z]*$/)
    const next = (digits: string) => (BigInt(parseInt(digits, 36)) + 1n).toString(36)
    t.equal(await events.check(`${feedId}-${xid}-${next(seq)}`), 'gone', 'a later event than any issued')
    t.equal(await events.check(`${feedId}-${next(xid)}-0`), 'gone', 'a later transaction than any read')
    t.equal(await events.check(`${feedId}-${xid}-0${seq}`), 'invalid', 'leading zeros: one text per position')
    t.equal(await events.check(`${feedId}-3w5e11264sgsf-1`), 'gone', 'the greatest xid8 parses')
    t.equal(await events.check(`${feedId}-3w5e11264sgsg-1`), 'invalid', 'beyond 64 bits')
    t.equal(await events.check(`${feedId}-${xid}-1y2p0ij32e8e8`), 'invalid', 'a seq beyond bigint')
    t.equal(await events.check(`${feedId}-${xid}-1y2p0ij32e8e7`), 'gone', 'the greatest bigint parses')

    await books.create(book('two'))
    await settled(events, empty, 2)
    const { events: both } = await readAll(events, empty)
    t.equal(await events.prune(Date.now() + 1000), 2)
    t.equal(await events.check(both[1]!.position), 'current', 'the last pruned position: nothing after it is missing')
    t.equal(await events.check(both[0]!.position), 'gone')
    t.equal(await events.head(), both[1]!.position, 'an emptied feed\'s head is its watermark')
  })

  t.test('reads and prunes are bounded', async t => {
    const url = await testDatabase(t)
    const { events } = await repositories(t, url)
    const client = await session(t, url)
    const start = await events.head()
    await client.query(`INSERT INTO events (type, envelope, time) SELECT 'student.created', '{}', now() - interval '1 day'
      FROM generate_series(1, $1::int)`, [pruneBatch + 5])
    // The one transaction's rows become readable together, once older transactions on the server have ended.
    while (await events.head() === start) await new Promise(resolve => setTimeout(resolve, 20))
    const page = await events.read(start, ['book.created'], 10)
    t.same(page.events, [], 'no book among them')
    const { rows } = await client.query<{ x: string, s: string }>('SELECT xid::text AS x, seq::text AS s FROM events ORDER BY xid, seq OFFSET $1 LIMIT 1', [readScan - 1])
    t.equal(page.next, `${parts(start)[0]}-${BigInt(rows[0]!.x).toString(36)}-${BigInt(rows[0]!.s).toString(36)}`, 'the read stopped after its scan')
    t.equal(page.more, true, 'and says it stopped short of the head')
    t.equal((await events.read(page.next, ['book.created'], 10)).more, true, 'as does the next, with as many rows again behind it')
    t.equal(await events.prune(Date.now()), pruneBatch, 'a batch at a time')
    t.equal(await events.prune(Date.now()), 5)
  })
})
