// The repository contract on SQLite, on a file so that a second open is a restart.
import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'
import { exportedRows, storageContract } from './storage-contract.js'
import { creationOrder } from '../src/storage/list-sql.js'

storageContract(t, async t => {
  const path = tempDatabase(t)
  return async () => openSqliteRepositories(path)
})

t.test('SQLite only: an idempotency entry the database refuses for another reason than a taken key fails the create, which writes nothing', async t => {
  const repositories = openSqliteRepositories(tempDatabase(t))
  t.teardown(() => repositories.close())
  const entry = { scope: 's', key: 'k', fingerprint: 'f', expiresAt: Date.now() + 60_000, response: { status: 201, headers: {}, body: '{}' } }
  // STRICT tables refuse a value of the wrong type: not a taken key, so not IdempotencyKeyTakenError.
  await t.rejects(repositories.books.create({ title: 'T', author: 'A', isbn: null, published_year: null }, () => ({ ...entry, expiresAt: 'soon' as unknown as number })),
    { code: 'SQLITE_CONSTRAINT_DATATYPE' })
  t.same((await repositories.books.list(creationOrder, 10, null)).items, [], 'and the record was taken back')
})

t.test('SQLite only: the probe fails once the file is at another schema version', async t => {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path)
  t.teardown(() => repositories.close())
  await repositories.probe()
  const other = new Database(path)
  other.pragma('user_version = 99')
  other.close()
  await t.rejects(repositories.probe(), { name: 'SchemaVersionError', message: /^the database schema is at version 99, this service needs / })
})

t.test('SQLite only: an export reads in a transaction of its own, which holds the WAL until the export is read or left', async t => {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path)
  t.teardown(() => repositories.close())
  const checkpoint = new Database(path)
  t.teardown(() => checkpoint.close())
  // A truncating checkpoint cannot finish (busy = 1) while a reader holds a snapshot of the WAL.
  const blocked = () => (checkpoint.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0]!.busy === 1
  t.notOk(blocked(), 'nothing holds it before')
  // In the WAL, so that a snapshot reads from it.
  await repositories.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
  const left = await repositories.books.export(creationOrder, { format: 'csv', feedPosition: true })
  t.ok(blocked(), 'the export\'s snapshot holds it')
  await left.chunks.return!()
  t.notOk(blocked(), 'released once left')
  await repositories.books.create({ title: 'Emma', author: 'Jane Austen', isbn: null, published_year: null })
  const read = await repositories.books.export(creationOrder, { format: 'ndjson' })
  t.equal((await exportedRows(read)).length, 2)
  t.notOk(blocked(), 'released once read to its end')
})

t.test('SQLite only: a record of a createMany that fails for another reason than a taken value fails the batch, which writes nothing', async t => {
  const repositories = openSqliteRepositories(tempDatabase(t))
  t.teardown(() => repositories.close())
  const values = { title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null }
  // STRICT tables refuse a value of the wrong type: not a refusal of one record, a fault of the batch.
  await t.rejects(repositories.books.createMany([{ values, given: { id: '01a21d0c-0000-7000-8000-000000000001' } }, { values: { ...values, published_year: 'soon' as unknown as number }, given: { id: '01a21d0c-0000-7000-8000-000000000002' } }]),
    { code: 'SQLITE_CONSTRAINT_DATATYPE' })
  t.same((await repositories.books.list(creationOrder, 10, null)).items, [])
})
