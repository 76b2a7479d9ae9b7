// Operating on PostgreSQL: a start that cannot connect, the keys and backup CLIs, a revocation seen by another node.
import pg from 'pg'
import t from 'tap'
import { runBackup } from '../src/cli/backup-command.js'
import { createKey } from '../src/access/api-keys.js'
import { runKeys } from '../src/cli/key-commands.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { databaseUrl, testDatabase, withPostgres } from './postgres.js'
import { start } from './process.js'

async function cli (run: typeof runKeys, args: string[], env: Record<string, string>) {
  let out = ''
  let err = ''
  const code = await run(args, env, { out: line => { out += line + '\n' }, err: line => { err += line + '\n' } })
  return { code, out, err }
}

t.test('a PostgreSQL that cannot be reached stops the start with one line naming DATABASE_URL, password masked', async t => {
  const error = await start({ DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/books', PG_CONNECT_TIMEOUT_MS: '500' }).then(() => null, (e: Error) => e)
  const output = error?.message.replace(/^server exited with 1: /, '') ?? 'it started'
  t.match(output, /^books-students-api: cannot start: cannot connect to PostgreSQL at DATABASE_URL=postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/books: .*ECONNREFUSED/)
  t.equal(output.trim().split('\n').length, 1, 'one line')
  t.notMatch(output, /hunter2|\n\s+at /, 'no password, no stack')
})

t.test('npm run backup on PostgreSQL says to use pg_dump', async t => {
  const { code, err } = await cli(runBackup, ['copy.dump'], { DATABASE_URL: 'postgres://app:hunter2@db/books' })
  t.equal(code, 1)
  t.match(err, /^backup: DATABASE_URL is a PostgreSQL database \(postgres:\/\/app:\*\*\*@db\/books\); this command copies SQLite files only\. Use pg_dump/)
  t.notMatch(err, 'hunter2')
})

await withPostgres(t, t => {
  t.test('the keys CLI creates, lists and revokes keys on PostgreSQL, and refuses a database the service never set up', async t => {
    const url = await testDatabase(t)
    const created = await cli(runKeys, ['create', '--name', 'ci', '--scopes', 'books:read'], { DATABASE_URL: url })
    t.equal(created.code, 0, created.err)
    const keyId = /Created key (\S+)/.exec(created.out)?.[1]
    t.match((await cli(runKeys, ['list'], { DATABASE_URL: url })).out, new RegExp(`${keyId}\\tactive\\tbooks:read\\t`))
    t.equal((await cli(runKeys, ['revoke', keyId!], { DATABASE_URL: url })).code, 0)
    t.match((await cli(runKeys, ['list'], { DATABASE_URL: url })).out, new RegExp(`${keyId}\\trevoked `))

    // An empty database: the CLI neither migrates it nor writes to it.
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    const empty = `${/\/([^/]+)$/.exec(url)![1]}_empty`
    await admin.query(`CREATE DATABASE ${empty}`)
    t.teardown(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${empty} WITH (FORCE)`)
      await admin.end()
    })
    const refused = await cli(runKeys, ['list'], { DATABASE_URL: databaseUrl(empty) })
    t.equal(refused.code, 1)
    t.match(refused.err, /^keys: the database at DATABASE_URL holds no data of this service \(DATABASE_URL\): start the service once/)
    const tables = await new pg.Client({ connectionString: databaseUrl(empty) })
    await tables.connect()
    t.equal((await tables.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).rows[0].n, 0, 'nothing was created')
    await tables.end()
  })

  t.test('a key revoked through one node is refused by another within the cache TTL, at once when notified', async t => {
    const url = await testDatabase(t)
    const settings = { url, connections: 1, connectTimeout: 2000, statementTimeout: 5000 }
    const nodeA = await openPostgresRepositories(settings, { apiKeyCacheTtl: 60_000 })
    const nodeB = await openPostgresRepositories(settings, { apiKeyCacheTtl: 60_000 })
    t.teardown(async () => { await nodeA.close(); await nodeB.close() })
    const { key_id: keyId } = await createKey(nodeA.apiKeys, 'k', ['books:read'])
    t.equal((await nodeB.apiKeys.find(keyId))?.revoked_at, null, 'B read and cached the key')
    await nodeA.apiKeys.revoke(keyId)
    // The TTL here is a minute: only the NOTIFY can make B forget the key this soon.
    let seen = await nodeB.apiKeys.find(keyId)
    for (let i = 0; i < 200 && seen?.revoked_at === null; i++) {
      await new Promise(resolve => setTimeout(resolve, 10))
      seen = await nodeB.apiKeys.find(keyId)
    }
    t.not(seen?.revoked_at, null, 'B sees the revocation')
  })
})

t.test('the keys CLI names an unreachable PostgreSQL by DATABASE_URL, password masked', async t => {
  const { code, err } = await cli(runKeys, ['list'], { DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/books', PG_CONNECT_TIMEOUT_MS: '500' })
  t.equal(code, 1)
  t.match(err, /^keys: cannot connect to PostgreSQL at DATABASE_URL=postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/books: /)
  t.notMatch(err, 'hunter2')
})
