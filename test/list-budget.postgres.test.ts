// PostgreSQL: a list statement cut short (cancelled at the statement timeout, or given up waiting for a lock) answers 503 list-busy, as a SQLite reader's page does.
import pg from 'pg'
import t from 'tap'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { adminKey, build } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'

await withPostgres(t, async t => {
  t.test('GET /books answers 503 list-busy with Retry-After when its statement is cancelled or cannot take its lock in time; another failure stays a 500', async t => {
    const url = await testDatabase(t)
    // Lock waits give up at half of it: 1 s.
    const repositories = await openPostgresRepositories({ url, connections: 1, connectTimeout: 2000, statementTimeout: 2000 })
    const { app } = await build(t, {}, { repositories })
    const list = async () => app.inject({ method: 'GET', url: '/books?q=dune', headers: { authorization: `Bearer ${adminKey}` } })
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    t.teardown(() => locker.end())
    await locker.query('BEGIN')
    await locker.query('LOCK TABLE books IN ACCESS EXCLUSIVE MODE')

    /** The backend of the service's list statement, once it waits for the lock. */
    const waiting = async (): Promise<number> => {
      for (;;) {
        const { rows } = await locker.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`)
        if (rows.length > 0) return rows[0]!.pid
        await new Promise(resolve => setImmediate(resolve))
      }
    }
    const busy = (res: Awaited<ReturnType<typeof list>>, what: string) => {
      t.equal(res.statusCode, 503, what)
      t.equal(res.headers['retry-after'], '1')
      t.match(res.json(), { type: '/problems/list-busy', status: 503, detail: /within 2000 ms/ })
    }

    const cancelled = list()
    await locker.query('SELECT pg_cancel_backend($1)', [await waiting()])
    busy(await cancelled, 'a cancelled statement')
    busy(await list(), 'a statement that gave up waiting for its lock')

    const broken = list()
    await locker.query('SELECT pg_terminate_backend($1)', [await waiting()])
    const res = await broken
    t.equal(res.statusCode, 500, 'a lost connection is not a busy service')
    t.notMatch(res.body, /terminat|SQL|postgres/i, 'and says nothing of the database')
    await locker.query('ROLLBACK')
  })
})
