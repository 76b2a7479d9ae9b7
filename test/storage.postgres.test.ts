// The repository contract on PostgreSQL, each test on a database of its own.
import pg from 'pg'
import t from 'tap'
import { creationOrder } from '../src/storage/list-sql.js'
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
    const left = await repositories.books.export(creationOrder)
    t.equal(await open(), before + 1, 'one more while the export is open')
    await left.batches[Symbol.asyncIterator]().return!()
    await eventually(open, n => n === before, 'the connection given back once the export is left')
    const read = await repositories.books.export(creationOrder)
    t.equal((await exportedRows(read.batches)).length, 1)
    await eventually(open, n => n === before, 'and once it is read to its end')
  })
})
