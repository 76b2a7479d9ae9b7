// The repository contract on SQLite, on a file so that a second open is a restart.
import Database from 'better-sqlite3'
import t from 'tap'
import { SqliteIdempotency } from '../src/storage/sqlite/idempotency.js'
import { migrate } from '../src/storage/sqlite/migrations.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'
import { storageContract } from './storage-contract.js'

storageContract(t, async t => {
  const path = tempDatabase(t)
  return async () => openSqliteRepositories(path)
})

t.test('SQLite: an idempotency entry that cannot be stored for another reason than its key is that error', async t => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  migrate(db)
  const idempotency = new SqliteIdempotency(db)
  db.exec('CREATE TRIGGER refuse BEFORE INSERT ON idempotency_keys BEGIN SELECT RAISE(ABORT, \'disk says no\'); END')
  const entry = { scope: 's', key: 'k', fingerprint: 'f', expiresAt: Date.now() + 1000, response: { status: 201, headers: {}, body: '{}' } }
  t.throws(() => idempotency.store(entry, Date.now()), /disk says no/)
})
