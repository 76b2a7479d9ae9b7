// PostgreSQL exports: each read within the list's budget (a 503 list-busy for the first), and a connection the server ends never takes the node down.
import pg from 'pg'
import t, { type Test } from 'tap'
import { creationOrder } from '../src/storage/list-sql.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { build, eventually } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'

await withPostgres(t, t => {
  t.test('an export whose first rows wait on a lock past the budget is a 503 list-busy with Retry-After, and no file', async t => {
    const url = await testDatabase(t)
    const api = await build(t, { postgresUrl: url, recordCacheSize: 0, pgStatementTimeout: 400 })
    await api.request({ method: 'POST', url: '/books', payload: { title: 'Dune', author: 'Frank Herbert' } })
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    t.teardown(() => locker.end())
    await locker.query('BEGIN; LOCK TABLE books IN ACCESS EXCLUSIVE MODE')
    const res = await api.request({ url: '/books/export.csv', key: null })
    t.equal(res.statusCode, 503)
    t.match(res.json(), { type: '/problems/list-busy', detail: /^The export's first rows were not read within 400 ms/ })
    t.equal(res.headers['retry-after'], '1')
    t.equal(res.headers['content-disposition'], undefined)
    await locker.query('ROLLBACK')
    // The address's export is given back once its connection has ended.
    const read = await eventually(() => api.request({ url: '/books/export.csv', key: null }), res => res.statusCode !== 429, 'the export given back')
    t.equal(read.statusCode, 200, 'the lock gone, the export reads')
    t.match(read.payload, /\r\n[0-9a-f-]{36},Dune,Frank Herbert,/)
  })

  /** Repositories on a new database holding one book, whose connections' own idle bound (twice the statement timeout) is far off. */
  const opened = async (t: Test) => {
    const url = await testDatabase(t)
    const repositories = await openPostgresRepositories({ url, connections: 1, connectTimeout: 2000, statementTimeout: 60_000 })
    t.teardown(() => repositories.close())
    await repositories.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
    const observer = new pg.Client({ connectionString: url })
    await observer.connect()
    t.teardown(() => observer.end())
    // The backends of exports waiting on their readers.
    const waiting = async () => (await observer.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'books-students-api' AND state = 'idle in transaction'`)).rows.map(row => row.pid)
    return { repositories, observer, waiting }
  }

  t.test('an export whose connection the server ends while it waits on its reader fails; the node goes on', async t => {
    const { repositories, observer, waiting } = await opened(t)
    const left = await repositories.books.export(creationOrder, { format: 'csv' })
    const [pid] = await waiting()
    await observer.query('SELECT pg_terminate_backend($1)', [pid])
    // An 'error' event nobody listens to would end this process as the client hears of it.
    await within(eventually(waiting, pids => pids.length === 0, 'the backend gone'), 20_000, 'the backend gone')
    await t.rejects(left.chunks.next(), 'the export fails')
    await left.chunks.return!()
    t.equal((await repositories.books.list(creationOrder, 10, null)).items.length, 1, 'the node goes on')
    const read = await repositories.books.export(creationOrder, { format: 'ndjson' })
    t.match((await read.chunks.next()).value, /"title":"Dune"/, 'and exports again')
    await read.chunks.return!()
  })

  t.test('the server ends an export left unread past twice its idle bound (the caller\'s stall deadline), not only the connections\' own', async t => {
    const { repositories, waiting } = await opened(t)
    const left = await repositories.books.export(creationOrder, { format: 'csv', idleMs: 500 })
    t.equal((await waiting()).length, 1, 'its transaction waits on its reader')
    await within(eventually(waiting, pids => pids.length === 0, 'the server ends it'), 20_000, 'the idle bound')
    await t.rejects(left.chunks.next(), 'the export fails')
    await left.chunks.return!()
  })
})

/** `promise`, or a failure naming `what` once `ms` have passed: a test that fails does so in seconds. */
async function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms) })])
  } finally {
    clearTimeout(timer)
  }
}
