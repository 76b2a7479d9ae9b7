// The repository contract on PostgreSQL, each test on a database of its own.
import pg from 'pg'
import t from 'tap'
import { creationOrder, defaultListLimits } from '../src/storage/list-sql.js'
import type { Book } from '../src/contract/api-types.js'
import { bookTable } from '../src/storage/tables.js'
import type { BookValues } from '../src/storage/types.js'
import { connect, PipelinedClients } from '../src/storage/postgres/connection.js'
import { GroupCommit } from '../src/storage/postgres/group-commit.js'
import { bookTypes } from '../src/storage/postgres/index.js'
import { PostgresTable } from '../src/storage/postgres/table.js'
import { PostgresEventFeed } from '../src/storage/postgres/events.js'
import { eventually } from './helper.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { testDatabase, withPostgres } from './postgres.js'
import { exportedRows, storageContract } from './storage-contract.js'

await withPostgres(t, t => {
  storageContract(t, async t => {
    const url = await testDatabase(t)
    return async () => openPostgresRepositories({ url, connections: 2, connectTimeout: 2000, statementTimeout: 5000 }, { apiKeyCacheTtl: 2000 })
  })
})

await withPostgres(t, t => {
  t.test('PostgreSQL only: an export holds a connection of its own while it is read, and gives it back when left or ended', async t => {
    const url = await testDatabase(t)
    const repositories = await openPostgresRepositories({ url, connections: 1, connectTimeout: 2000, statementTimeout: 5000 })
    t.teardown(() => repositories.close())
    const observer = new pg.Client({ connectionString: url })
    await observer.connect()
    t.teardown(() => observer.end())
    const open = async () => Number((await observer.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'books-students-api' AND backend_type = 'client backend'`)).rows[0]!.n)
    await repositories.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
    const before = await open()
    const left = await repositories.books.export(creationOrder, { format: 'ndjson' })
    t.equal(await open(), before + 1, 'one more while the export is open')
    await left.chunks.return!()
    await eventually(open, n => n === before, 'the connection given back once the export is left')
    const read = await repositories.books.export(creationOrder, { format: 'ndjson' })
    t.equal((await exportedRows(read)).length, 1)
    await eventually(open, n => n === before, 'and once it is read to its end')
  })

  t.test('PostgreSQL only: an export whose snapshot cannot be opened fails, closing its connection; a record of a createMany the database refuses fails the batch', async t => {
    const url = await testDatabase(t)
    const settings = { url, connections: 1, connectTimeout: 2000, statementTimeout: 5000 }
    const reads = new PipelinedClients(settings)
    const writes = new GroupCommit(() => connect(settings, true))
    t.teardown(async () => { await writes.close(); await reads.close() })
    let ended = 0
    const refusing = async () => {
      const client = await connect(settings, false, true)
      const end = client.end.bind(client)
      return Object.assign(client, {
        query: async () => { throw new Error('the server is in recovery') },
        end: async () => { ended++; await end() }
      }) as pg.Client
    }
    const books = new PostgresTable<Book, BookValues>(bookTable, bookTypes, reads, writes, new PostgresEventFeed(reads, writes, 'testfeed'), { limits: defaultListLimits, budgetMs: Infinity, connect: refusing })
    await t.rejects(books.export(creationOrder, { format: 'csv', feedPosition: true }), { message: 'the server is in recovery' })
    t.equal(ended, 1, 'its connection closed')
    const values = { title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null }
    // PostgreSQL cannot store NUL in text: not a refusal of one record, a fault.
    await t.rejects(books.createMany([{ values: { ...values, title: 'a\u0000b' }, given: { id: '01a21d0c-0000-7000-8000-000000000001' } }]), { code: '22021' })
  })
})
