// The PostgreSQL engine's own failure paths: unreachable servers, schemas too old or too new, batches that fail, lost listeners.
import { defaultListLimits } from '../src/storage/list-sql.js'
import { createServer, type AddressInfo, Socket } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import type { Book } from '../src/contract/api-types.js'
import { IdempotencyKeyBusyError, RevisionNotCurrentError, ValueTakenError } from '../src/domain/outcomes.js'
import { latestVersion } from '../src/storage/schema.js'
import { bookTable } from '../src/storage/tables.js'
import type { BookValues } from '../src/storage/types.js'
import { PostgresApiKeys } from '../src/storage/postgres/api-keys.js'
import { connect, PipelinedClients, type PostgresSettings } from '../src/storage/postgres/connection.js'
import { GroupCommit, type Write } from '../src/storage/postgres/group-commit.js'
import { PostgresIdempotency } from '../src/storage/postgres/idempotency.js'
import { bookTypes, openPostgresRepositories } from '../src/storage/postgres/index.js'
import { migrate } from '../src/storage/postgres/migrations.js'
import { PostgresTable } from '../src/storage/postgres/table.js'
import { PostgresEventFeed } from '../src/storage/postgres/events.js'
import { emptyDatabase, testDatabase, withPostgres } from './postgres.js'

const settingsFor = (url: string, statementTimeout = 5000): PostgresSettings => ({ url, connections: 1, connectTimeout: 2000, statementTimeout })
const values = (title: string, isbn: string | null = null): BookValues => ({ title, author: 'A', isbn, published_year: null })
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** A session of its own on `url`, ended with the test. */
async function session (t: Test, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(() => client.end())
  return client
}

/** Waits until `pid`'s current statement waits on a lock another session holds. */
async function waitsOnLock (probe: pg.Client, pid: () => number | undefined): Promise<void> {
  for (;;) {
    const current = pid()
    if (current !== undefined) {
      const { rows } = await probe.query<{ n: number }>('SELECT cardinality(pg_blocking_pids($1)) AS n', [current])
      if (rows[0]!.n > 0) return
    }
    await sleep(5)
  }
}

await withPostgres(t, t => {
  t.test('an unreachable server: one line naming DATABASE_URL, password masked, with the error code', async t => {
    const url = 'postgres://someone:secret@127.0.0.1:1/nothing'
    await t.rejects(openPostgresRepositories(settingsFor(url)), { message: /^cannot connect to PostgreSQL at DATABASE_URL=postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nothing: .*ECONNREFUSED/ })
    // The listener retries on its own; closing stops it.
    const keys = new PostgresApiKeys(new PipelinedClients(settingsFor(url)), settingsFor(url), 1000)
    await keys.listen()
    await keys.close()
  })

  t.test('connection failures: a refused login names its code; a server that never answers times out; closed clients refuse queries', async t => {
    const url = await testDatabase(t)
    const missing = new URL(url)
    missing.pathname = '/bsa_no_such_database'
    // The server's message does not name its SQLSTATE, so the line adds it.
    await t.rejects(connect(settingsFor(missing.toString()), false), { message: /database "bsa_no_such_database" does not exist \(3D000\)$/ })
    const silent = createServer(() => {})
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise(resolve => silent.close(resolve)))
    const { port } = silent.address() as AddressInfo
    const sockets: Socket[] = []
    silent.on('connection', socket => sockets.push(socket))
    t.teardown(() => { for (const socket of sockets) socket.destroy() })
    await t.rejects(connect({ ...settingsFor(`postgres://postgres@127.0.0.1:${port}/x`), connectTimeout: 100 }, false), { message: /timeout/ })

    // A pool closed while a connection is still being made, then asked again.
    const pending = new PipelinedClients({ ...settingsFor(`postgres://postgres@127.0.0.1:${port}/x`), connectTimeout: 100 })
    const first = pending.query({ text: 'SELECT 1' })
    await pending.close()
    await t.rejects(first, { message: /timeout/ })
    await t.rejects(pending.query({ text: 'SELECT 1' }), { message: 'the database connections are closed' })

    // A pipelined connection killed under the pool: the next query reconnects.
    const reads = new PipelinedClients(settingsFor(url))
    t.teardown(() => reads.close())
    const { pid } = (await reads.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' })).rows[0]!
    const probe = await session(t, url)
    await probe.query('SELECT pg_terminate_backend($1)', [pid])
    let again: number | undefined
    while (again === undefined) {
      again = await reads.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' }).then(r => r.rows[0]!.pid, () => undefined)
      if (again === undefined) await sleep(10)
    }
    t.not(again, pid, 'it was replaced')
  })

  t.test('API keys without a cache TTL are read every time; a listener that connects after close is ended', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsFor(url))
    t.teardown(() => reads.close())
    const uncached = new PostgresApiKeys(reads, settingsFor(url), 0)
    await uncached.create({ keyId: 'k1', name: 'n', scopes: ['books:read'], secretHash: Buffer.alloc(32) })
    t.equal((await uncached.find('k1'))?.key_id, 'k1')
    t.equal(await uncached.find('nope'), null)
    const brief = new PostgresApiKeys(reads, settingsFor(url), 1)
    t.equal((await brief.find('k1'))?.key_id, 'k1')
    await sleep(5)
    t.equal((await brief.find('k1'))?.key_id, 'k1', 'read again once its cache entry expired')
    await brief.close()
    const kept = new PostgresApiKeys(reads, settingsFor(url), 60_000)
    t.equal(await kept.find('k1'), await kept.find('k1'), 'within the TTL the same key object answers')
    const late = new PostgresApiKeys(reads, settingsFor(url), 1000)
    const listening = late.listen()
    await late.close()
    await listening
    const probe = await session(t, url)
    let listeners = 1
    while (listeners > 0) {
      listeners = Number((await probe.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND state <> 'terminated'")).rows[0]!.n)
      if (listeners > 0) await sleep(10)
    }
    t.pass('no session listens after close')
  })

  t.test('schemas: an empty database is migrated once; one the service never set up, or at another version, is refused', async t => {
    const url = await emptyDatabase(t)
    await t.rejects(openPostgresRepositories(settingsFor(url), { migrate: false }), { name: 'NoDatabaseError' }, 'the CLIs refuse an empty database')
    const client = await session(t, url)
    await migrate(client)
    await migrate(client)
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM schema_migrations')
    t.equal(Number(rows[0]!.n), latestVersion, 'one row per version after two migrations')
    // Without a key cache TTL the engine opens no listener, and without migrate it leaves the schema alone.
    const repositories = await openPostgresRepositories(settingsFor(url), { migrate: false })
    await repositories.close()

    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [latestVersion + 1, 'from the future'])
    await t.rejects(migrate(client), { message: /newer than this service knows/ }, 'a newer schema stops the start, and its transaction is rolled back')
    await client.query('DELETE FROM schema_migrations WHERE version > $1', [latestVersion])
    const open = await openPostgresRepositories(settingsFor(url), { migrate: false })
    await open.probe()
    await client.query('DELETE FROM schema_migrations WHERE version >= $1', [latestVersion])
    await t.rejects(open.probe(), { name: 'SchemaVersionError', message: `the database schema is at version ${latestVersion - 1}, this service needs ${latestVersion}` }, 'the probe notices a schema changed under it')
    await open.close()
    await t.rejects(openPostgresRepositories(settingsFor(url), { migrate: false }), { message: `the database's schema is at version ${latestVersion - 1}, this service needs ${latestVersion}; start the service to migrate it` })
  })

  t.test('expired idempotency keys are swept in batches', async t => {
    const url = await testDatabase(t)
    const client = await session(t, url)
    await client.query(`INSERT INTO idempotency_keys (scope, key, fingerprint, status, headers, body, expires_at)
      SELECT 's', 'k' || i, 'f', 201, '{}', '{}', CASE WHEN i <= 3 THEN 1 ELSE 9e15 END FROM generate_series(1, 5) AS i`)
    const reads = new PipelinedClients(settingsFor(url))
    t.teardown(() => reads.close())
    const store = new PostgresIdempotency(reads)
    t.equal(await store.sweep(Date.now(), 2), 2, 'a batch at most')
    t.equal(await store.sweep(Date.now()), 1, 'then the rest of the expired')
    t.equal(await store.sweep(Date.now()), 0, 'and the live ones stay')
  })

  t.test('group commit: a failed connection fails its batch; a failed statement fails its write alone; a lost COMMIT fails the batch', async t => {
    const url = await testDatabase(t)
    const down = new GroupCommit(() => Promise.reject(new Error('no connection')))
    const write = (text: string): Write<number> => ({ statements: [{ text }], outcome: ([r]) => r!.rowCount ?? 0, failure: error => error })
    await t.rejects(down.run(write('SELECT 1')), { message: 'no connection' })
    // flush() settles that batch within the tick, before the run's own scheduled flush finds nothing to do.
    const flushed = t.rejects(down.run(write('SELECT 1')), { message: 'no connection' })
    await down.flush()
    await flushed
    await new Promise(resolve => setImmediate(resolve))

    const writes = new GroupCommit(() => connect(settingsFor(url), true))
    t.teardown(() => writes.close())
    const [good, bad] = await Promise.allSettled([writes.run(write('SELECT 1')), writes.run(write('SELECT 1/0'))])
    t.same(good, { status: 'fulfilled', value: 1 }, 'the good write commits when run again alone')
    t.match(bad, { status: 'rejected', reason: { code: '22012' } }, 'the bad one fails with its own error')

    // The connection dies mid-batch: whether the COMMIT happened is unknown, so every write of the batch fails.
    const lost = await Promise.allSettled([writes.run(write('SELECT 1')), writes.run(write('SELECT pg_terminate_backend(pg_backend_pid())'))])
    t.same(lost.map(r => r.status), ['rejected', 'rejected'], 'both writes of the batch fail')
    t.equal(await writes.run(write('SELECT 1')), 1, 'and the next batch gets a new connection')

    // Writes arriving while a batch is on the wire form the next batch; close() waits for both.
    const inFlight = writes.run(write('SELECT pg_sleep(0.05)'))
    await new Promise(resolve => setImmediate(resolve))
    const next = writes.run(write('SELECT 1'))
    await writes.flush()
    t.same(await Promise.all([inFlight, next]), [1, 1], 'both batches committed')
    const queued = writes.run(write('SELECT 2'))
    await writes.close()
    t.equal(await queued, 1, 'a write queued at close commits')
  })

  t.test('replace: a record changed or deleted while the write waited for it; unique values and lock waits raised in a batch', async t => {
    const url = await testDatabase(t)
    const pids: number[] = []
    const writes = new GroupCommit(async () => {
      const client = await connect(settingsFor(url, 1000), true)
      pids.push((client as pg.Client & { processID: number }).processID)
      return client
    })
    const reads = new PipelinedClients(settingsFor(url))
    t.teardown(async () => { await writes.close(); await reads.close() })
    const books = new PostgresTable<Book, BookValues>(bookTable, bookTypes, reads, writes, new PostgresEventFeed(reads, writes, 'testfeed'), { limits: defaultListLimits, budgetMs: Infinity, connect: () => connect(settingsFor(url), false, true) })
    const blocker = await session(t, url)
    const probe = await session(t, url)
    const writer = () => pids.at(-1)

    const changed = await books.create(values('changed'))
    await blocker.query('BEGIN')
    await blocker.query('UPDATE books SET revision = revision + 1 WHERE book_id = $1', [changed.record.book_id])
    // Each outcome is awaited by t.rejects at once, so a rejection never waits without a handler.
    const stale = t.rejects(books.replace(changed.record.book_id, values('too late'), [1]), new RevisionNotCurrentError('book', true), 'the revision the write expected was replaced while it waited: 412')
    await waitsOnLock(probe, writer)
    await blocker.query('COMMIT')
    await stale

    const deleted = await books.create(values('deleted'))
    await blocker.query('BEGIN')
    await blocker.query('DELETE FROM books WHERE book_id = $1', [deleted.record.book_id])
    const gone = books.replace(deleted.record.book_id, values('too late'), null)
    await waitsOnLock(probe, writer)
    await blocker.query('COMMIT')
    t.equal(await gone, null, 'a record deleted while the write waited: not found')

    // A failing neighbour rolls the batch back before the replace runs; run alone, the replace then meets
    // an isbn another session takes at that moment, raised as a unique violation: still a 409 naming isbn.
    const other = await books.create(values('other'))
    await blocker.query('BEGIN')
    await blocker.query("UPDATE books SET isbn = '9780441013593' WHERE book_id = $1", [other.record.book_id])
    const neighbour = t.rejects(writes.run({ statements: [{ text: 'SELECT 1/0' }], outcome: () => 0, failure: error => error }), { code: '22012' })
    const taken = t.rejects(books.replace(changed.record.book_id, values('taken', '9780441013593'), null), new ValueTakenError('book', 'isbn'), 'the raised violation names the field')
    await waitsOnLock(probe, writer)
    await blocker.query('COMMIT')
    await neighbour
    await taken

    // A unique index the service does not know (an operator's): its violation stays the server's error, never a 409 naming a wrong field.
    await probe.query('CREATE UNIQUE INDEX books_title_operator ON books (title)')
    await blocker.query('BEGIN')
    await blocker.query("UPDATE books SET title = 'same title' WHERE book_id = $1", [other.record.book_id])
    const neighbour2 = t.rejects(writes.run({ statements: [{ text: 'SELECT 1/0' }], outcome: () => 0, failure: error => error }), { code: '22012' })
    const unknown = t.rejects(books.replace(changed.record.book_id, values('same title'), null), { code: '23505', constraint: 'books_title_operator' })
    await waitsOnLock(probe, writer)
    await blocker.query('COMMIT')
    await neighbour2
    await unknown
    await probe.query('DROP INDEX books_title_operator')

    // A spec that names no unique column still reports a conflict as a 409.
    const loose = new PostgresTable<Book, BookValues>({ ...bookTable, unique: [] }, bookTypes, reads, writes, new PostgresEventFeed(reads, writes, 'testfeed'), { limits: defaultListLimits, budgetMs: Infinity, connect: () => connect(settingsFor(url), false, true) })
    await t.rejects(loose.create(values('again', '9780441013593')), new ValueTakenError('book', 'book_id'))

    // A row held longer than the lock timeout: the write fails with the server's error (a 500), not a 409.
    await blocker.query('BEGIN')
    await blocker.query('SELECT 1 FROM books WHERE book_id = $1 FOR UPDATE', [other.record.book_id])
    await t.rejects(books.replace(other.record.book_id, values('held'), null), { code: '55P03' })
    await t.rejects(books.delete(other.record.book_id, null), { code: '55P03' })
    await blocker.query('ROLLBACK')
    // An isbn another session is inserting, uncommitted, for longer than the lock timeout.
    await blocker.query('BEGIN')
    await blocker.query("INSERT INTO books (book_id, title, author, isbn, created_at, updated_at) VALUES (gen_random_uuid(), 'b', 'b', '9780000000002', now(), now())")
    await t.rejects(books.create(values('waits', '9780000000002')), { code: '55P03' })
    // With an Idempotency-Key, any lock wait that runs out is a 409 "retry later".
    const entry = { scope: 's', key: 'k', fingerprint: 'f', expiresAt: Date.now() + 60_000, response: { status: 201, headers: {}, body: '{}' } }
    await t.rejects(books.create(values('waits', '9780000000002'), () => entry), new IdempotencyKeyBusyError())
    await blocker.query('ROLLBACK')
    // Any other failure of a keyed create is the server's error (the contract's bounds keep years far inside int4).
    await t.rejects(books.create({ ...values('huge'), published_year: 2 ** 40 }, () => entry), { code: '22003' })
  })

  t.test('a lost listener is replaced, and the key cache emptied meanwhile', async t => {
    const url = await testDatabase(t)
    const repositories = await openPostgresRepositories(settingsFor(url), { apiKeyCacheTtl: 60_000 })
    t.teardown(() => repositories.close())
    const probe = await session(t, url)
    const listeners = async () => (await probe.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")).rows.map(r => r.pid)
    let first: number[] = []
    while (first.length === 0) first = await listeners()
    await probe.query('SELECT pg_terminate_backend($1)', [first[0]])
    let next: number[] = []
    // The engine waits a second before listening again.
    while (next.length === 0 || next[0] === first[0]) {
      await sleep(50)
      next = await listeners()
    }
    t.not(next[0], first[0], 'a new session listens')
  })

  t.test('the statements sent on a connection in one turn of the event loop leave in one write, each with its own answer', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsFor(url))
    t.teardown(() => reads.close())
    // The connection's own socket, known by its port on this side as the server sees it.
    const { port } = (await reads.query<{ port: number }>({ text: 'SELECT inet_client_port() AS port' })).rows[0]!
    // Every write to that socket, as a system call sees it (one per _write or _writev).
    const { _write: write, _writev: writev } = Socket.prototype
    let calls = 0
    Socket.prototype._write = function (...args) { if (this.localPort === port) calls++; return write.apply(this, args) }
    Socket.prototype._writev = function (...args) { if (this.localPort === port) calls++; return writev!.apply(this, args) }
    t.teardown(() => Object.assign(Socket.prototype, { _write: write, _writev: writev }))
    const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => reads.query<{ n: number }>({ text: 'SELECT $1::int AS n', values: [n] })))
    t.same(answers.map(answer => answer.rows[0]!.n), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    t.equal(calls, 1, 'one write for the ten statements')
    // One sent from the check phase, after the turn's write went, leaves in the next turn's.
    const late = await new Promise<number>((resolve, reject) => setImmediate(() => {
      reads.query<{ n: number }>({ text: 'SELECT 10 AS n' }).then(answer => resolve(answer.rows[0]!.n), reject)
    }))
    t.equal(late, 10)
  })
})
