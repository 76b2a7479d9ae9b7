// PostgreSQL group commit across nodes: two nodes' batches touching the same records never deadlock each other.
import { defaultListLimits } from '../src/storage/list-sql.js'
import type pg from 'pg'
import t from 'tap'
import type { Book } from '../src/contract/api-types.js'
import { bookTable } from '../src/storage/tables.js'
import type { BookValues } from '../src/storage/types.js'
import { connect, PipelinedClients, type PostgresSettings } from '../src/storage/postgres/connection.js'
import { GroupCommit } from '../src/storage/postgres/group-commit.js'
import { bookTypes } from '../src/storage/postgres/index.js'
import { PostgresTable } from '../src/storage/postgres/table.js'
import { PostgresEventFeed } from '../src/storage/postgres/events.js'
import { testDatabase, withPostgres } from './postgres.js'

await withPostgres(t, t => {
  t.test('batches locking the same records in opposite orders: both commit, no deadlock', async t => {
    const settings: PostgresSettings = { url: await testDatabase(t), connections: 1, connectTimeout: 2000, statementTimeout: 10_000 }
    const reads = new PipelinedClients(settings)
    t.teardown(() => reads.close())
    // Every error a group-commit connection hears: a deadlock (40P01) would show here, whoever recovers from it.
    const codes: string[] = []
    const pids: number[] = []
    const spied = async (): Promise<pg.Client> => {
      const client = await connect(settings, true)
      pids.push((client as pg.Client & { processID: number }).processID)
      const query = client.query.bind(client) as (config: string | pg.QueryConfig) => Promise<pg.QueryResult>
      Object.assign(client, {
        query: (config: string | pg.QueryConfig) => {
          const sent = query(config)
          sent.catch((error: { code?: string }) => { codes.push(error.code ?? 'none') })
          return sent
        }
      })
      return client
    }
    // Two nodes: each its own group-commit connection, as two processes have.
    const [a, b] = [new GroupCommit(spied), new GroupCommit(spied)]
    t.teardown(async () => { await a.close(); await b.close() })
    const booksOn = (writes: GroupCommit) => new PostgresTable<Book, BookValues>(bookTable, bookTypes, reads, writes, new PostgresEventFeed(reads, writes, 'testfeed'), { limits: defaultListLimits, budgetMs: Infinity, connect: () => connect(settings, false, true) })
    const [onA, onB] = [booksOn(a), booksOn(b)]
    const values = (title: string): BookValues => ({ title, author: 'A', isbn: null, published_year: null })
    // One batch, two writes that lock no existing row: they keep their order.
    const [x, y] = await Promise.all([onA.create(values('x')), onA.create(values('y'))])
    const [xId, yId] = [x.record.book_id, y.record.book_id]

    // Two other sessions hold x and y, and let go one after the other, so that the batches meet at the
    // worst moment: A holding x and waiting for y while B (without ordering) holds y and asks for x.
    const hold = async (id: string) => {
      const blocker = await connect(settings, false)
      t.teardown(() => blocker.end())
      await blocker.query('BEGIN')
      await blocker.query('SELECT 1 FROM books WHERE book_id = $1 FOR UPDATE', [id])
      return blocker
    }
    const [holdsX, holdsY] = [await hold(xId), await hold(yId)]
    const blockedBy = async (pid: number | undefined): Promise<number[]> => pid === undefined
      ? []
      : (await holdsY.query<{ pids: number[] }>('SELECT pg_blocking_pids($1) AS pids', [pid])).rows[0]!.pids
    // Queued in one tick each: node A's batch replaces x then y, node B's y then x.
    const written = Promise.all([
      onA.replace(xId, values('x by A'), null), onA.replace(yId, values('y by A'), null),
      onB.replace(yId, values('y by B'), null), onB.replace(xId, values('x by B'), null)
    ])
    while ((await blockedBy(pids[0])).length === 0 || (await blockedBy(pids[1])).length === 0);
    await holdsX.query('COMMIT')
    // A takes x and moves on to y, where it waits again (on the holder of y, or on B queued there first).
    while ((await blockedBy(pids[0])).length === 0);
    await holdsY.query('COMMIT')
    const results = await written
    t.ok(results.every(r => r !== null), 'every replace committed')
    t.same([(await onA.get(xId))?.revision, (await onA.get(yId))?.revision], [3, 3], 'each record was replaced twice')
    t.same(codes, [], 'no statement failed: no deadlock, no batch rolled back')
  })
})
