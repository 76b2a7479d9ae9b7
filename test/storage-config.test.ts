// The SQLite readiness probe: the database answers and its schema is the one this code expects.
import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'

t.test('the SQLite probe passes on a migrated database and fails when the schema is not the expected one', async t => {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path)
  t.teardown(() => repositories.close())
  await t.resolves(repositories.probe())
  const other = new Database(path)
  other.pragma('user_version = 999')
  other.close()
  await t.rejects(repositories.probe(), /^schema version 999, expected \d+$/)
})
