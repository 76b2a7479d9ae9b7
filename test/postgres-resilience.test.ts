// PostgreSQL when things go wrong: a write that raises in a batch, a connection cut mid-commit, a lost listener.
import pg from 'pg'
import t, { type Test } from 'tap'
import { DuplicateError, IdempotencyKeyInUseError, PreconditionFailedError } from '../src/errors.js'
import { PostgresApiKeys } from '../src/storage/postgres/api-keys.js'
import { connect, PipelinedClients, type PostgresSettings } from '../src/storage/postgres/connection.js'
import { GroupCommit, type Write } from '../src/storage/postgres/group-commit.js'
import { PostgresIdempotency } from '../src/storage/postgres/idempotency.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { migrate, postgresMigrations } from '../src/storage/postgres/migrations.js'
import { testDatabase, withPostgres } from './postgres.js'

const settingsOf = (url: string): PostgresSettings => ({ url, connections: 1, connectTimeout: 2000, statementTimeout: 5000 })

/** A write that stores `name` in settings, or runs `sql` instead. */
function write (name: string, sql?: string): Write<string> {
  return {
    statements: [sql === undefined ? { text: 'INSERT INTO settings (name, value) VALUES ($1, $2)', values: [name, Buffer.from(name)] } : { text: sql }],
    outcome: () => name,
    failure: error => new Error(`${name} failed: ${error.message}`)
  }
}

async function names (url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const { rows } = await client.query<{ name: string }>("SELECT name FROM settings WHERE name <> 'cursor_secret' ORDER BY name")
  await client.end()
  return rows.map(r => r.name)
}

/** Ends the server side of the service's connections to the database whose last statement matches `query`. */
async function cutConnections (url: string, query = '%'): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'books-students-api' AND query ILIKE $1`, [query])
  await client.end()
}

await withPostgres(t, t => {
  t.test('a write that raises rolls its batch back; the others are run again alone and commit', async t => {
    const url = await testDatabase(t)
    const sizes: number[] = []
    const writes = new GroupCommit(() => connect(settingsOf(url), true), size => sizes.push(size))
    t.teardown(() => writes.close())
    const outcomes = await Promise.allSettled([writes.run(write('a')), writes.run(write('bad', 'SELECT 1/0')), writes.run(write('c'))])
    t.same(outcomes.map(o => o.status === 'fulfilled' ? o.value : (o.reason as Error).message), ['a', 'bad failed: division by zero', 'c'])
    t.same(sizes, [3], 'one batch')
    t.same(await names(url), ['a', 'c'], 'the good writes are stored, once')
  })

  t.test('a connection lost before COMMIT answers fails its writes, which are not run again; the next batch reconnects', async t => {
    const url = await testDatabase(t)
    const writes = new GroupCommit(() => connect(settingsOf(url), true))
    t.teardown(() => writes.close())
    await writes.run(write('before'))
    const cut = await Promise.allSettled([writes.run(write('cut', 'SELECT pg_terminate_backend(pg_backend_pid())')), writes.run(write('beside'))])
    t.ok(cut.every(o => o.status === 'rejected'), 'both writes of the batch fail: their fate is not known to the service')
    t.equal(await writes.run(write('after')), 'after', 'a new connection serves the next batch')
    t.same(await names(url), ['after', 'before'], 'the cut batch did not commit, and was not retried')
  })

  t.test('a connection that cannot be opened fails the batch; a later one succeeds', async t => {
    const url = await testDatabase(t)
    let attempts = 0
    const writes = new GroupCommit(() => ++attempts === 1 ? Promise.reject(new Error('no route')) : connect(settingsOf(url), true))
    t.teardown(() => writes.close())
    await t.rejects(writes.run(write('first')), /no route/)
    t.equal(await writes.run(write('second')), 'second')
  })

  t.test('pipelined reads recover from a cut connection, and refuse once closed', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsOf(url))
    await reads.open()
    t.equal((await reads.query<{ n: number }>({ text: 'SELECT 1 AS n' })).rows[0]?.n, 1)
    await cutConnections(url)
    let answer: number | undefined
    for (let attempt = 0; attempt < 50 && answer === undefined; attempt++) {
      answer = await reads.query<{ n: number }>({ text: 'SELECT 2 AS n' }).then(r => r.rows[0]?.n, () => undefined)
      if (answer === undefined) await new Promise(resolve => setTimeout(resolve, 20))
    }
    t.equal(answer, 2, 'a new connection answers')
    await reads.close()
    await t.rejects(reads.query({ text: 'SELECT 1' }), /closed/)
  })

  t.test('a failed connect is named with the URL masked and the SQLSTATE; the slot is tried again', async t => {
    const url = await testDatabase(t)
    const missing = new URL(url)
    missing.password = 'hunter2'
    missing.pathname = '/bsa_no_such_database'
    const reads = new PipelinedClients({ ...settingsOf(missing.toString()), connections: 1 })
    await t.rejects(reads.open(), { message: /^cannot connect to PostgreSQL at DATABASE_URL=postgres:\/\/postgres:\*\*\*@.*: database "bsa_no_such_database" does not exist \(3D000\)$/ })
    await t.rejects(reads.query({ text: 'SELECT 1' }), /does not exist/, 'tried again, not a cached failure')
    await reads.close()
  })

  t.test('the revocation listener reconnects after losing its connection, and forgets every key meanwhile', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsOf(url))
    const keys = new PostgresApiKeys(reads, settingsOf(url), 60_000)
    const other = new PostgresApiKeys(reads, settingsOf(url), 0)
    t.teardown(async () => { await keys.close(); await reads.close() })
    await keys.listen()
    await other.listen()
    await keys.create({ keyId: 'k_1', name: 'k', scopes: ['books:read'], secretHash: Buffer.alloc(32) })
    const cached = await keys.find('k_1')
    t.equal(await keys.find('k_1'), cached, 'served from the cache')
    await cutConnections(url, 'LISTEN%')
    let fresh = await keys.find('k_1')
    for (let i = 0; i < 100 && fresh === cached; i++) {
      await new Promise(resolve => setTimeout(resolve, 10))
      fresh = await keys.find('k_1')
    }
    t.not(fresh, cached, 'the cache was emptied when the listener was lost')
    // Listening again within about a second: a revocation then reaches the cache at once.
    await new Promise(resolve => setTimeout(resolve, 1500))
    await keys.find('k_1')
    await other.revoke('k_1')
    let seen = await keys.find('k_1')
    for (let i = 0; i < 200 && seen?.revoked_at === null; i++) {
      await new Promise(resolve => setTimeout(resolve, 10))
      seen = await keys.find('k_1')
    }
    t.not(seen?.revoked_at, null)
  })

  t.test('a listener that cannot connect keeps trying until closed', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsOf(url))
    const keys = new PostgresApiKeys(reads, { ...settingsOf('postgres://postgres@127.0.0.1:1/none'), connectTimeout: 200 }, 1000)
    await keys.listen()
    await keys.create({ keyId: 'k_2', name: 'k', scopes: [], secretHash: Buffer.alloc(32) })
    t.equal((await keys.find('k_2'))?.key_id, 'k_2', 'keys are served without notifications, by the TTL alone')
    await keys.close()
    await reads.close()
  })

  t.test('expired idempotency entries are swept in batches', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsOf(url))
    t.teardown(() => reads.close())
    const now = Date.now()
    for (let i = 0; i < 5; i++) {
      await reads.query({ text: "INSERT INTO idempotency_keys VALUES ('s', $1, 'f', 201, '{}', '{}', $2)", values: [`k${i}`, i < 3 ? now - 1 : now + 60_000] })
    }
    const idempotency = new PostgresIdempotency(reads)
    t.equal(await idempotency.sweep(now, 2), 2)
    t.equal(await idempotency.sweep(now), 1)
    t.equal(await idempotency.sweep(now), 0)
    t.not(await idempotency.find('s', 'k4', now), null, 'live entries stay')
  })
})

/** A transaction of another node, held open while the service's write waits on it. */
async function holding (url: string, sql: string, values: unknown[] = []): Promise<{ commit: () => Promise<void>, rollback: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('BEGIN')
  await client.query(sql, values)
  const end = (how: string) => async () => { await client.query(how); await client.end() }
  return { commit: end('COMMIT'), rollback: end('ROLLBACK') }
}

const after = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

await withPostgres(t, t => {
  const open = async (t: Test, url: string, statementTimeout = 5000) => {
    const repositories = await openPostgresRepositories({ ...settingsOf(url), statementTimeout })
    t.teardown(() => repositories.close())
    return repositories
  }
  const book = { title: 'T', author: 'A', isbn: null, published_year: null }

  t.test('a write that waited on another node\'s uncommitted change sees its outcome', async t => {
    const url = await testDatabase(t)
    const { books } = await open(t, url)
    const id = (await books.create(book)).record.book_id
    // Another node changes the book and commits while our conditional write waits on the row.
    const other = await holding(url, 'UPDATE books SET revision = revision + 1 WHERE book_id = $1', [id])
    const stale = t.rejects(books.replace(id, book, [1]), new PreconditionFailedError('book'), 'the tag it checked is no longer current: 412')
    await after(300)
    await other.commit()
    await stale
    // Another node deletes it meanwhile: a replace without a tag finds nothing.
    const deleting = await holding(url, 'DELETE FROM books WHERE book_id = $1', [id])
    const late = books.replace(id, book, null)
    await after(300)
    await deleting.commit()
    t.equal(await late, null)
  })

  t.test('a unique value another node takes while our write waits is a 409; a key whose first request outlasts the wait is a 409 in-use', async t => {
    const url = await testDatabase(t)
    const { books } = await open(t, url, 4000)
    const id = (await books.create(book)).record.book_id
    const other = await holding(url, "INSERT INTO books (book_id, title, author, isbn, created_at, updated_at) VALUES (gen_random_uuid(), 'X', 'Y', '9780441013593', now(), now())")
    const replacing = t.rejects(books.replace(id, { ...book, isbn: '9780441013593' }, null), new DuplicateError('book', 'isbn'))
    // The batch gives up on its lock wait at 2 s (half the statement timeout) and runs alone; the other commits during that run.
    await after(3000)
    await other.commit()
    await replacing

    const first = await holding(url, "INSERT INTO idempotency_keys VALUES ('s', 'k', 'f', 201, '{}', '{}', $1)", [Date.now() + 60_000])
    const retry = books.create(book, created => ({ scope: 's', key: 'k', fingerprint: 'f', expiresAt: Date.now() + 60_000, response: { status: 201, headers: {}, body: JSON.stringify(created.record) } }))
    await t.rejects(retry, new IdempotencyKeyInUseError())
    await first.rollback()
    t.equal((await books.list(10, null)).items.length, 2, 'ours and the other node\'s: the waiting writes stored nothing')
  })

  t.test('migrations: all or nothing, never into a newer schema; the probe and the CLIs check the version', async t => {
    const url = await testDatabase(t)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    const repositories = await open(t, url)
    await client.query('DELETE FROM schema_migrations WHERE version = 3')
    await t.rejects(repositories.probe(), /schema version 2, expected 3/)
    await t.rejects(openPostgresRepositories(settingsOf(url), { migrate: false }), /schema is at version 2, this service needs 3/)
    await client.query("INSERT INTO schema_migrations (version, name) VALUES (3, 'API keys'), (99, 'from the future')")
    await t.rejects(openPostgresRepositories(settingsOf(url)), /database schema version 99 is newer than this service knows \(3\)/)

    await client.query('CREATE SCHEMA fresh; SET search_path TO fresh')
    await t.rejects(migrate(client, { ...postgresMigrations, 3: 'SELECT 1/0' }), /division by zero/)
    t.equal((await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'fresh'")).rows[0].n, 0, 'versions 1 and 2 were rolled back with 3')
  })

  t.test('group commit: writes arriving during a batch form the next one; close waits for both', async t => {
    const url = await testDatabase(t)
    const sizes: number[] = []
    const writes = new GroupCommit(() => connect(settingsOf(url), true), size => sizes.push(size))
    const first = writes.run(write('one'))
    await new Promise(resolve => setImmediate(resolve))
    const second = writes.run(write('two'))
    await writes.close()
    t.same(await Promise.all([first, second]), ['one', 'two'])
    t.same(sizes, [1, 1])
  })

  t.test('a listener closed while it connects lets go of its connection', async t => {
    const url = await testDatabase(t)
    const reads = new PipelinedClients(settingsOf(url))
    const keys = new PostgresApiKeys(reads, settingsOf(url), 1000)
    const listening = keys.listen()
    await keys.close()
    await listening
    await reads.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND state <> 'idle in transaction'")
    await client.end()
    t.equal(rows[0].n, 0, 'no listening connection is left open')
  })
})
