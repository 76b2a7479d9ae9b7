// DATABASE_URL and the SQLite readiness probe: the storage split's settings, held to the suite's 100 % coverage.
import Database from 'better-sqlite3'
import t from 'tap'
import { loadConfig } from '../src/config.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'

t.test('DATABASE_URL: a path or file: URL keeps SQLite, postgres:// selects PostgreSQL, anything else is refused with the password masked', async t => {
  t.match(loadConfig({ DATABASE_URL: '/srv/books.sqlite' }), { databasePath: '/srv/books.sqlite', postgresUrl: null })
  t.match(loadConfig({ DATABASE_URL: 'file:/srv/books.sqlite' }), { databasePath: '/srv/books.sqlite', postgresUrl: null })
  t.match(loadConfig({ DATABASE_URL: 'postgres://app:pw@db.example/books', DATABASE_PATH: '/x.sqlite' }), { databasePath: '/x.sqlite', postgresUrl: 'postgres://app:pw@db.example/books', recordCacheSize: 0 })
  t.throws(() => loadConfig({ DATABASE_URL: 'postgresql://app:pw@[db' }), { name: 'ConfigError', message: 'DATABASE_URL is not a valid URL (got "postgresql://app:***@[db")' })
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://app:pw@db.example/books' }), { name: 'ConfigError', message: 'DATABASE_URL must be a postgres:// URL or a SQLite file path (got "mysql://app:***@db.example/books")' })
})

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
