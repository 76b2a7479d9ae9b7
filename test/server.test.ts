// The process as an operator runs it: a real socket, a file database that survives restarts, signals, bad config.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import Database from 'better-sqlite3'
import { uuidv7 } from 'uuidv7'
import { progressEvery } from '../src/storage/schema.js'
import { sqliteMigrations } from '../src/storage/sqlite/migrations.js'
import { adminKey, dune } from './helper.js'
import { childEnv, serverEntry, start, stop } from './process.js'

// Nine starts of a TypeScript child process (4 s each alone, transpiled on the fly) took 37 s alone and 67-91 s
// beside CI's other files; 90 s timed out once on a slow machine. The bound is only for a hang.
t.setTimeout(240_000)

t.test('the server answers over a real socket, prints where it is, and keeps data across a restart', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATABASE_PATH: join(dir, 'data.sqlite') }

  const first = await start(env)
  t.match(first.output(), /Swagger UI: http:\/\/127\.0\.0\.1:\d+\/docs/)
  const created = await fetch(`${first.origin}/books`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
    body: JSON.stringify(dune)
  })
  t.equal(created.status, 201)
  const book = await created.json() as { book_id: string }
  t.equal(await stop(first, 'SIGTERM'), 0, 'SIGTERM exits 0')

  const second = await start(env)
  const fetched = await fetch(`${second.origin}/books/${book.book_id}`)
  t.equal(fetched.status, 200)
  t.same(await fetched.json(), book, 'the book survived the restart')
  const docs = await fetch(`${second.origin}/docs/json`)
  t.equal(docs.status, 200)
  t.equal(await stop(second, 'SIGINT'), 0, 'SIGINT exits 0')
})

t.test('a database of an older schema is migrated at start, saying how far the backfill got, and its records are found', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'v3.sqlite')
  // Schema version 3, as the release before search wrote it, with enough books to report progress.
  const db = new Database(path)
  db.exec([1, 2, 3].map(version => sqliteMigrations[version as 1 | 2 | 3]).join('\n'))
  db.pragma('user_version = 3')
  const insert = db.prepare("INSERT INTO books (book_id, title, author, created_at, updated_at) VALUES (?, ?, 'Anon', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')")
  db.transaction(() => {
    for (let i = 0; i < progressEvery; i++) insert.run(uuidv7(), i === 4321 ? 'Ørsted über Straßen' : `Book ${i}`)
  })()
  db.close()

  const running = await start({ DATABASE_PATH: path })
  t.teardown(() => stop(running, 'SIGTERM'))
  t.match(running.output(), `migrating books: folded keys for ${progressEvery} of ${progressEvery} rows`)
  const found = await (await fetch(`${running.origin}/books?q=orsted%20strassen`)).json() as { items: { title: string }[] }
  t.same(found.items.map(book => book.title), ['Ørsted über Straßen'], 'a record written before the migration is found by search')
  const first = await (await fetch(`${running.origin}/books?sort=title&limit=1`)).json() as { items: { title: string }[] }
  t.same(first.items.map(book => book.title), ['Book 0'], 'and sorted by its folded title')
})

t.test('a bad setting stops the start with one line naming it', async t => {
  const child = spawn(process.execPath, [serverEntry], {
    env: childEnv({ PORT: 'eighty' }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.equal(stderr, 'books-students-api: PORT must be an integer from 0 to 65535 (got "eighty")\n')
})

t.test('a port already in use stops the start with one line', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const first = await start({ DATABASE_PATH: join(dir, 'a.sqlite') })
  t.teardown(() => stop(first, 'SIGTERM'))
  const port = new URL(first.origin).port
  const err = await start({ DATABASE_PATH: join(dir, 'b.sqlite'), PORT: port }).catch((error: Error) => error)
  t.match(err, { message: new RegExp(`exited with 1: books-students-api: cannot listen on 127.0.0.1:${port}: .*EADDRINUSE`) })

  const opsPort = new URL(first.opsOrigin!).port
  const taken = await start({ DATABASE_PATH: join(dir, 'c.sqlite'), OPS_PORT: opsPort }).catch((error: Error) => error)
  t.match(taken, { message: new RegExp(`exited with 1: .*books-students-api: cannot listen on OPS_HOST:OPS_PORT 127.0.0.1:${opsPort}: .*EADDRINUSE.*; each node on one machine needs its own OPS_PORT \\(OPS_PORT=0 picks a free one and prints it\\)\\n$`, 's') }, 'so does an ops port in use, saying that each node needs its own OPS_PORT')
  // 192.0.2.1 (TEST-NET-1) is no address of this machine: another failure, with no word on OPS_PORT.
  const elsewhere = await start({ DATABASE_PATH: join(dir, 'd.sqlite'), OPS_HOST: '192.0.2.1' }).catch((error: Error) => error)
  t.match(elsewhere, { message: /exited with 1: .*books-students-api: cannot listen on OPS_HOST:OPS_PORT 192\.0\.2\.1:0: .*EADDRNOTAVAIL[^;]*$/s })
})

t.test('OPS_PORT=public announces the operators\' endpoints on the API\'s port; off has none', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const shared = await start({ DATABASE_PATH: join(dir, 'a.sqlite'), OPS_PORT: 'public', METRICS_TOKEN: 'metrics-token-0123456789' })
  t.match(shared.output(), `Operations (health, readiness, metrics) on ${shared.origin}: /metrics needs METRICS_TOKEN`)
  t.equal((await fetch(`${shared.origin}/health/ready`)).status, 200)
  t.equal(await stop(shared, 'SIGTERM'), 0)
  const none = await start({ DATABASE_PATH: join(dir, 'a.sqlite'), OPS_PORT: 'off', METRICS: 'false' })
  t.notMatch(none.output(), /Operations/)
  t.equal(await stop(none, 'SIGTERM'), 0)
})

t.test('a settings file named by ENV_FILE applies beneath the environment, and the banner names the database and what the file set', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'service.env')
  writeFileSync(file, `DATABASE_PATH=${join(dir, 'from-file.sqlite')}\nRATE_LIMIT_ANONYMOUS=50/60\nLOG_LEVEL=trace\n`)
  const running = await start({ ENV_FILE: file })
  t.match(running.output(), `Database: SQLite ${join(dir, 'from-file.sqlite')}\nSettings from ${file}: DATABASE_PATH, RATE_LIMIT_ANONYMOUS (variables set in the environment win over the file)\n`, 'LOG_LEVEL was set by the environment, which wins')
  t.match((await fetch(`${running.origin}/books`)).headers.get('ratelimit-policy'), /;q=50;w=60$/)
  t.equal(await stop(running, 'SIGTERM'), 0)
})

t.test('an IPv6 host is printed in brackets and served', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const running = await start({ DATABASE_PATH: join(dir, 'v6.sqlite'), HOST: '::1' })
  t.match(running.origin, /^http:\/\/\[::1\]:\d+$/)
  t.equal((await fetch(`${running.origin}/books`)).status, 200)
  t.equal(await stop(running, 'SIGTERM'), 0)
})
