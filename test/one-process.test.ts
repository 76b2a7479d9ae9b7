// One service process per SQLite file: a second is refused before it touches the database, the commands run beside it, and a stopped one leaves the file free.
import { writeFileSync } from 'node:fs'
import t from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { DatabaseServedError, lockForOneProcess } from '../src/storage/sqlite/process-lock.js'
import { tempDatabase } from './helper.js'

t.test('a second service on the file is refused with what to do; the keys and backup commands open it beside the service; closing frees it', async t => {
  const path = tempDatabase(t)
  const serving = openSqliteRepositories(path, { serving: true, readers: 0 })
  t.throws(() => openSqliteRepositories(path, { serving: true, readers: 0 }), new DatabaseServedError(`another process serves ${path}: SQLite is served by one process at a time, which runs its webhooks, imports and rate limits. Stop the other first, give this one another DATABASE_PATH, or run several nodes on PostgreSQL (docs/postgresql.md)`))
  const beside = openSqliteRepositories(path, { create: false, readers: 0 })
  await serving.apiKeys.create({ keyId: 'k1', name: 'made by the service', scopes: ['books:read'], secretHash: Buffer.alloc(32) })
  t.match(await beside.apiKeys.list(), [{ name: 'made by the service' }], 'a command reads the same database beside it')
  await beside.close()
  await serving.close()
  const next = openSqliteRepositories(path, { serving: true, readers: 0 })
  await next.close()
  t.pass('once closed, the next service takes it')
  const inMemory = [openSqliteRepositories(':memory:', { serving: true, readers: 0 }), openSqliteRepositories(':memory:', { serving: true, readers: 0 })]
  await Promise.all(inMemory.map(async repositories => repositories.close()))
  t.pass('a database in memory is its connection\'s own: no lock')
})

t.test('a database that cannot be opened leaves the lock free; a lock file that is not one is an error of its own, not "another process"', async t => {
  const path = tempDatabase(t)
  writeFileSync(path, 'not a database, though it has the name of one')
  t.throws(() => openSqliteRepositories(path, { serving: true, readers: 0 }), { code: 'SQLITE_NOTADB' })
  lockForOneProcess(path).release()
  t.pass('the lock was released')
  const other = tempDatabase(t)
  writeFileSync(`${other}.lock`, 'not a database either, and longer than a header of one would be: '.repeat(10))
  t.throws(() => lockForOneProcess(other), { code: 'SQLITE_NOTADB' })
})
