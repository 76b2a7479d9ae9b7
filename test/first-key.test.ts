// The first admin key: exactly one per database, made and printed by a start that serves, never lost unsaid.
import { once } from 'node:events'
import { createServer } from 'node:net'
import t, { type Test } from 'tap'
import { allScopes, firstAdminKey, firstKeyName, newKey, unshownFirstKeyName, unshownFirstKeys } from '../src/access/api-keys.js'
import type { Config } from '../src/config/index.js'
import type { ApiKeyRepository } from '../src/storage/types.js'
import { eventually, openTestRepositories, tempDatabase, testEngine } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'
import { type Running, start, stop } from './process.js'

// Each case starts service processes (up to four, on two engines): 85 s in CI's Node 20 pass beside two
// other files, and past tap's 120 s once on a machine running CI as well. Process tests get more, never less.
t.setTimeout(240_000)

type Engine = 'sqlite' | 'postgres'

/** A database on `engine`, as the service's environment and as a Config for opening it here. */
async function database (t: Test, engine: Engine = testEngine): Promise<{ env: Record<string, string>, config: Partial<Config> }> {
  if (engine === 'postgres') {
    const url = await testDatabase(t)
    return { env: { DATABASE_URL: url }, config: { postgresUrl: url, recordCacheSize: 0 } }
  }
  const path = tempDatabase(t)
  return { env: { DATABASE_PATH: path }, config: { databasePath: path } }
}

/** A start as on a fresh install: no ADMIN_API_KEY, so the service must make the way in itself. */
async function serve (t: Test, env: Record<string, string>): Promise<Running> {
  const running = await start({ ADMIN_API_KEY: '', ...env })
  t.teardown(async () => { if (running.child.exitCode === null) await stop(running, 'SIGTERM') })
  return running
}

/** Runs `test` on each engine, whatever TEST_ENGINE says: each has its own way of making one key. */
function onEachEngine (name: string, test: (t: Test, engine: Engine) => Promise<void>): void {
  t.test(`${name} (SQLite)`, async t => test(t, 'sqlite'))
  t.test(`${name} (PostgreSQL)`, async t => withPostgres(t, async t => test(t, 'postgres')))
}

const printedKeys = (output: string): string[] => output.match(/^bsk_\S+$/gm) ?? []

/** Waits until the service has printed `text`, which may come a chunk after the listening lines. */
async function printed (running: Running, text: string): Promise<void> {
  while (!running.output().includes(text)) await Promise.race([once(running.child.stdout!, 'data'), once(running.child.stderr!, 'data')])
}

/** Stops the service and answers all it printed: what a start prints comes before it handles a signal. */
async function everything (running: Running): Promise<string> {
  const closed = once(running.child, 'close')
  const code = await stop(running, 'SIGTERM')
  await closed
  if (code !== 0) throw new Error(`exited with ${code}: ${running.output()}`)
  return running.output()
}

const storeKey = (apiKeys: ApiKeyRepository, name: string) => {
  const { keyId, secretHash } = newKey()
  return apiKeys.createFirst({ keyId, name, scopes: [...allScopes], secretHash })
}

onEachEngine('the first key is made once in a database\'s life, unless ADMIN_API_KEY is the way in or a key exists', async (t, engine) => {
  const { config } = await database(t, engine)
  const { apiKeys } = await openTestRepositories(t, config)
  t.equal(await firstAdminKey('x'.repeat(32), apiKeys), null, 'ADMIN_API_KEY is the way in')
  t.same(await apiKeys.list(), [], 'and nothing was stored')
  const first = await firstAdminKey(null, apiKeys)
  t.match(first?.key, /^bsk_/)
  t.match(await apiKeys.list(), [{ name: unshownFirstKeyName, scopes: [...allScopes] }], 'stored as not shown until it was printed')
  t.equal((await unshownFirstKeys(apiKeys)).length, 1)
  await first!.shown()
  t.match(await apiKeys.list(), [{ name: firstKeyName }])
  t.same(await unshownFirstKeys(apiKeys), [])
  t.equal(await firstAdminKey(null, apiKeys), null, 'only once')
  await apiKeys.revoke((await apiKeys.list())[0]!.key_id)
  t.equal(await firstAdminKey(null, apiKeys), null, 'not even once every key is revoked: the operator makes keys with the CLI')
  t.equal((await apiKeys.list()).length, 1)

  const other = await openTestRepositories(t, (await database(t, engine)).config)
  const { keyId, secretHash } = newKey()
  await other.apiKeys.create({ keyId, name: 'made with the CLI', scopes: ['books:read'], secretHash })
  t.equal(await firstAdminKey(null, other.apiKeys), null, 'a database with a key needs no first one')
})

onEachEngine('of first keys tried at once on one database, one is stored', async (t, engine) => {
  const { config } = await database(t, engine)
  const nodes = await Promise.all(Array.from({ length: 4 }, () => openTestRepositories(t, config)))
  const made = await Promise.all(nodes.map(node => storeKey(node.apiKeys, unshownFirstKeyName)))
  t.equal(made.filter(key => key !== null).length, 1, 'one of four stored its key')
  t.equal((await nodes[0]!.apiKeys.list()).length, 1, 'and the database holds that one alone')
})

t.test('a start that cannot listen makes no key; the next start that serves makes it and prints it', async t => {
  const { env, config } = await database(t)
  const taken = createServer()
  taken.listen(0, '127.0.0.1')
  await once(taken, 'listening')
  t.teardown(() => taken.close())
  const port = String((taken.address() as { port: number }).port)
  const failed = await start({ ADMIN_API_KEY: '', ...env, PORT: port }).catch((error: Error) => error)
  t.match(failed, { message: /cannot listen on .*EADDRINUSE/ }, 'the busy port stops the start')
  t.same(printedKeys(String((failed as Error).message)), [], 'which printed no key')
  const { apiKeys } = await openTestRepositories(t, config)
  t.same(await apiKeys.list(), [], 'and stored none, so none is lost')

  const served = await serve(t, env)
  await printed(served, 'Manage keys with')
  t.match(served.output(), /First start: created an admin API key/)
  t.equal(printedKeys(served.output()).length, 1, 'the start that serves prints the key')
  const key = printedKeys(served.output())[0]!
  t.equal((await fetch(`${served.origin}/webhook-endpoints`, { headers: { authorization: `Bearer ${key}` } })).status, 200, 'and it works')
  await eventually(() => apiKeys.list(), keys => keys[0]?.name === firstKeyName, 'the key marked shown')
  await everything(served)
  const again = await everything(await serve(t, env))
  t.same(printedKeys(again), [], 'a later start prints none')
  t.notMatch(again, /npm run keys -- create/, 'and has nothing to report')
})

t.test('a start that finds a first key never shown says how to make one', async t => {
  const { env, config } = await database(t)
  const { apiKeys } = await openTestRepositories(t, config)
  // As a start that stopped between storing its key and printing it leaves the database.
  const lost = await storeKey(apiKeys, unshownFirstKeyName)
  const served = await everything(await serve(t, env))
  t.same(printedKeys(served), [], 'no new key: the database already had its first')
  t.match(served, `the first admin key ${lost!.key_id} was stored but never shown`)
  t.match(served, `npm run keys -- create --scopes ${allScopes.join(',')} --name admin`)
  t.match(served, `npm run keys -- revoke ${lost!.key_id}`)
  await apiKeys.revoke(lost!.key_id)
  const next = await everything(await serve(t, env))
  t.notMatch(next, /never shown/, 'once revoked, it is not mentioned again')
})

t.test('two starts at once on one SQLite file: one serves and prints the first key, the other is refused before it touches the database', async t => {
  const { env, config } = await database(t, 'sqlite')
  const [first, second] = await Promise.allSettled([serve(t, env), serve(t, env)])
  const served = [first, second].filter(start => start.status === 'fulfilled').map(start => start.value)
  const refused = [first, second].filter(start => start.status === 'rejected').map(start => String(start.reason))
  t.equal(served.length, 1, 'one serves')
  t.match(refused, [new RegExp(`exited with 1: books-students-api: cannot start: another process serves ${config.databasePath}: SQLite is served by one process at a time`)])
  t.equal(printedKeys(await everything(served[0]!)).length, 1, 'one key printed')
  const { apiKeys } = await openTestRepositories(t, config)
  t.equal((await apiKeys.list()).length, 1, 'one key stored')
})

t.test('two nodes started at once on one PostgreSQL database make one first key, and one of them prints it', async t => withPostgres(t, async t => {
  const { env, config } = await database(t, 'postgres')
  const nodes = await Promise.all([serve(t, env), serve(t, env)])
  const { apiKeys } = await openTestRepositories(t, config)
  // Stopped once the key is marked shown, so that a stop does not cut the marking short.
  const stored = await eventually(() => apiKeys.list(), keys => keys.length > 0 && keys.every(key => key.name === firstKeyName), 'the key marked shown')
  const printedKeysOfAll = (await Promise.all(nodes.map(everything))).flatMap(printedKeys)
  t.equal(printedKeysOfAll.length, 1, 'one key printed')
  t.equal(stored.length, 1, 'one key stored')
  t.equal(printedKeysOfAll[0]!.split('_')[1], stored[0]!.key_id, 'the printed one')
}))
