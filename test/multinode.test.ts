// Many nodes on one PostgreSQL: built `node dist/server.js` processes share a database, lose nodes under load, and keep every guarantee.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { promisify } from 'node:util'
import pg from 'pg'
import t, { type Test } from 'tap'
import { schemaHistory } from '../src/storage/schema.js'
import { emptyDatabase, withPostgres } from './postgres.js'
import { built } from './process.js'
import { needService, pingRedis, testRedisUrl } from './services.js'

// The build is what runs in production, and starts on a third of the CPU a TypeScript child takes.
const serverJs = built('server.js')
const keysJs = built('cli/keys.js')
const adminKey = 'multinode-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'
const apiKeyCacheTtl = 500
const run = promisify(execFile)

t.setTimeout(120_000)

interface Node {
  name: string
  child: ChildProcess
  origin: string
  exited: Promise<number | null>
  /** False once the node is known gone: the client sends it nothing more. */
  live: boolean
}

/** What a request came back with: an answer, or the network error that took its place. */
type Result = { status: number, headers: Headers, body: string } | { error: string }

/** The environment of every child, given whole: the tests' own (DATABASE_PATH, REDIS_URL…) must not leak into it. */
function childEnv (databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_URL: databaseUrl, ...extra }
}

function startNode (name: string, databaseUrl: string, extra: Record<string, string> = {}): Promise<Node> {
  const child = spawn(process.execPath, [serverJs], {
    env: childEnv(databaseUrl, {
      PORT: '0',
      // Three nodes on one host: each ops listener on a free port; SIGTERM stops without a drain period.
      OPS_PORT: '0',
      SHUTDOWN_DRAIN_MS: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: adminKey,
      // Far above what the test sends: only the rate-limit test means to be throttled.
      RATE_LIMIT: '1000000/60',
      API_KEY_CACHE_TTL_MS: String(apiKeyCacheTtl),
      ...extra
    }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stderr!.on('data', chunk => { output += chunk })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', chunk => {
      output += chunk
      const origin = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (origin !== undefined) resolve({ name, child, origin, exited, live: true })
    })
    exited.then(code => reject(new Error(`node ${name} exited with ${code} before listening: ${output}`)), () => {})
  })
}

/** Stops every node still running; a node that does not drain in 10 s is killed, so a failed test never hangs. */
async function stopAll (nodes: Node[]): Promise<void> {
  await Promise.all(nodes.filter(n => n.child.exitCode === null && n.child.signalCode === null).map(async node => {
    node.child.kill('SIGTERM')
    const timer = setTimeout(() => node.child.kill('SIGKILL'), 10_000)
    await node.exited
    clearTimeout(timer)
  }))
}

async function send (node: Node, method: string, path: string, { body, headers = {}, key = adminKey }: { body?: unknown, headers?: Record<string, string>, key?: string } = {}): Promise<Result> {
  try {
    const res = await fetch(node.origin + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      // Only so that a lost answer cannot hang the test; it then counts as unanswered and is retried.
      signal: AbortSignal.timeout(20_000)
    })
    return { status: res.status, headers: res.headers, body: await res.text() }
  } catch (error) {
    return { error: String((error as Error & { cause?: Error }).cause ?? error) }
  }
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Runs work(0 … count-1) with at most `limit` at once. */
async function inParallel<T> (count: number, limit: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) {
      const i = next++
      results[i] = await work(i)
    }
  }))
  return results
}

const problemType = (result: Result) => 'status' in result && result.body.startsWith('{') ? (JSON.parse(result.body) as { type?: string }).type : undefined

/** One attempt of a create: where it went and what came back. */
interface Attempt { node: string, result: Result }

/** A create as the client lived it: the key, the body, every attempt, and the 201 it finally got. */
interface Create { key: string, body: { title: string, author: string }, attempts: Attempt[], answer: Extract<Result, { status: number }> }

/**
 * Sends a create with an Idempotency-Key until it is acknowledged, each retry with the same key and body
 * to the next live node. Retried: a network failure or 503 (the node died or is closing) and 409
 * idempotency-key-in-use (another attempt with the key still holds it). Any other answer is a finding.
 */
async function createOnce (nodes: Node[], first: number, key: string, onAttempt: (node: Node, settled: boolean) => void = () => {}): Promise<Create> {
  const body = { title: `book ${key}`, author: 'Multi Node' }
  const attempts: Attempt[] = []
  for (let attempt = 0; attempt < 40; attempt++) {
    const live = nodes.filter(n => n.live)
    const node = live[(first + attempt) % live.length]!
    onAttempt(node, false)
    const result = await send(node, 'POST', '/books', { body, headers: { 'idempotency-key': `"${key}"` } })
    onAttempt(node, true)
    attempts.push({ node: node.name, result })
    if ('status' in result && result.status === 201) return { key, body, attempts, answer: result }
    const retry = 'error' in result || result.status === 503 || (result.status === 409 && problemType(result) === '/problems/idempotency-key-in-use')
    if (!retry) throw new Error(`create ${key} on ${node.name} answered ${result.status}: ${result.body}`)
    await sleep(10 * attempt)
  }
  throw new Error(`create ${key} was never acknowledged: ${JSON.stringify(attempts.map(a => [a.node, 'error' in a.result ? a.result.error : a.result.status]))}`)
}

interface Listed { book_id: string, title: string }

/** Every book, page after page, each page asked of the next live node with the cursor another node issued. */
async function listAll (nodes: Node[]): Promise<{ books: Listed[], crossNode: number }> {
  const live = nodes.filter(n => n.live)
  const books: Listed[] = []
  let cursor: string | null = null
  let crossNode = 0
  for (let page = 0; ; page++) {
    const node = live[page % live.length]!
    const result = await send(node, 'GET', `/books?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
    if (!('status' in result) || result.status !== 200) throw new Error(`page ${page} on ${node.name}: ${JSON.stringify(result)}`)
    const { items, next_cursor: next } = JSON.parse(result.body) as { items: Listed[], next_cursor: string | null }
    books.push(...items)
    if (cursor !== null && live.length > 1) crossNode++
    if (next === null) return { books, crossNode }
    cursor = next
  }
}

/** Books per title in the database itself, beside what the API lists. */
async function titleCounts (databaseUrl: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ title: string, n: string }>('SELECT title, count(*) AS n FROM books GROUP BY title')
    return new Map(rows.map(r => [r.title, Number(r.n)]))
  } finally {
    await client.end()
  }
}

/** Runs the keys CLI on the database, as an operator would on any machine that reaches it. */
async function keysCli (databaseUrl: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [keysJs, ...args], { env: childEnv(databaseUrl) })
  return stdout
}

/** Checks that every create got exactly one record, holding what its acknowledgment said. */
function checkStored (t: Test, creates: Create[], listed: Listed[], counts: Map<string, number>): void {
  const byId = new Map(listed.map(b => [b.book_id, b]))
  t.equal(byId.size, listed.length, 'the list names no book twice')
  const missing = creates.filter(c => byId.get((JSON.parse(c.answer.body) as Listed).book_id)?.title !== c.body.title)
  t.same(missing.map(c => c.key), [], `every one of the ${creates.length} acknowledged creates is listed, as acknowledged`)
  const notOnce = creates.filter(c => counts.get(c.body.title) !== 1)
  t.same(notOnce.map(c => [c.key, counts.get(c.body.title)]), [], 'each Idempotency-Key made exactly one record')
}

t.test('three nodes on one PostgreSQL', t => withPostgres(t, async t => {
  t.ok(existsSync(serverJs) && existsSync(keysJs), 'dist/ is built (npm run build; npm test does it before its tests)')
  const databaseUrl = await emptyDatabase(t)
  const nodes: Node[] = []
  t.teardown(() => stopAll(nodes))

  // All at once on an empty database: the advisory lock must let one migrate and the others find it done.
  nodes.push(...await Promise.all(['a', 'b', 'c'].map(name => startNode(name, databaseUrl))))
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  t.teardown(() => client.end())
  const migrations = await client.query<{ version: number, n: string }>('SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY version')
  t.same(migrations.rows.map(r => [r.version, Number(r.n)]), schemaHistory.map(m => [m.version, 1]), 'three nodes started at once on an empty database: one migration row per version')

  t.test('kill -9 of a node a third of the way through 600 creates: retried elsewhere with the same key, nothing lost or doubled', async t => {
    const total = 600
    const killed = nodes[1]!
    // One request the node has surely received and not answered when it dies: its headers were read (it
    // answered 100 Continue) and its body is held back until after the kill. Requests of the load in
    // flight at that moment may already have their answer on the way, so they cannot show this.
    const heldKey = 'load-held'
    const heldBody = JSON.stringify({ title: `book ${heldKey}`, author: 'Multi Node' })
    const { hostname, port } = new URL(killed.origin)
    const held = httpRequest({
      host: hostname,
      port,
      method: 'POST',
      path: '/books',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(heldBody),
        expect: '100-continue',
        authorization: `Bearer ${adminKey}`,
        'idempotency-key': `"${heldKey}"`
      }
    })
    const heldOutcome = new Promise<string>(resolve => {
      held.on('response', res => resolve(`answered ${res.statusCode}`))
      held.on('error', error => resolve(`failed: ${error.message}`))
    })
    held.flushHeaders()
    await once(held, 'continue')
    let done = 0
    let inFlightOnKilled = 0
    let inFlightAtKill = -1
    const creates = await inParallel(total, 32, async i => {
      const create = await createOnce(nodes, i, `load-${i}`, (node, settled) => {
        if (node === killed) inFlightOnKilled += settled ? -1 : 1
      })
      if (++done === Math.floor(total / 3)) {
        inFlightAtKill = inFlightOnKilled
        killed.live = false
        killed.child.kill('SIGKILL')
      }
      return create
    })
    t.equal(await killed.exited, null, 'the node was killed')
    t.ok(inFlightAtKill > 0, `the kill caught ${inFlightAtKill} requests of the load in flight on it`)
    held.end(heldBody)
    t.match(await heldOutcome, /^failed/, 'the request it had read but not answered failed')
    creates.push(await createOnce(nodes, 0, heldKey))
    const survivorAnswers = creates.flatMap(c => c.attempts.filter(a => a.node !== killed.name && 'status' in a.result && a.result.status !== 201))
    t.same(survivorAnswers.map(a => [a.node, 'status' in a.result && a.result.status, 'status' in a.result && a.result.body]), [], 'the survivors answered every attempt 201')

    const { books, crossNode } = await listAll(nodes)
    t.ok(crossNode > 0, `paged through ${books.length} books, ${crossNode} pages with a cursor issued by another node`)
    t.equal(books.length, total + 1, 'the list holds exactly the books created')
    checkStored(t, creates, books, await titleCounts(databaseUrl))

    // Each key again, to a node other than the one that acknowledged it: the stored first answer, byte for byte.
    const replays = await inParallel(creates.length, 32, async i => {
      const create = creates[i]!
      const ackedBy = create.attempts.at(-1)!.node
      const others = nodes.filter(n => n.live && n.name !== ackedBy)
      const other = others[i % others.length]!
      return { create, other, result: await send(other, 'POST', '/books', { body: create.body, headers: { 'idempotency-key': `"${create.key}"` } }) }
    })
    const bad = replays.filter(({ create, result }) => !('status' in result) || result.status !== 201 || result.headers.get('idempotent-replayed') !== 'true' ||
      result.body !== create.answer.body || result.headers.get('location') !== create.answer.headers.get('location') ||
      result.headers.get('etag') !== create.answer.headers.get('etag'))
    t.same(bad.map(({ create, other, result }) => [create.key, other.name, result]), [], 'every retry on another node replays the acknowledged 201: same body, Location and ETag, Idempotent-Replayed: true')
  })

  t.test('a node joining the migrated database serves at once', async t => {
    const joined = await startNode('d', databaseUrl)
    nodes.push(joined)
    const res = await send(joined, 'GET', '/books?limit=1')
    t.equal('status' in res && res.status, 200, 'it lists books')
    const again = await client.query<{ n: string }>('SELECT count(*) AS n FROM schema_migrations')
    t.equal(Number(again.rows[0]!.n), schemaHistory.length, 'and migrated nothing twice')
  })

  t.test('an import over two nodes: the node that received it writes it; killed (kill -9), the other takes it up once its lease runs out, every row once', async t => {
    const extra = { IMPORT_LEASE_MS: '3000' }
    const [first, second] = await Promise.all([startNode('e', databaseUrl, extra), startNode('f', databaseUrl, extra)])
    nodes.push(first, second)
    const rows = 6000
    const headers = { authorization: `Bearer ${adminKey}` }
    const file = Array.from({ length: rows }, (_, i) => JSON.stringify({ title: `Imported row ${i}`, author: 'Importer' })).join('\n')
    const started = await fetch(`${first.origin}/imports?collection=books`, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-ndjson' }, body: file })
    t.equal(started.status, 202)
    const location = started.headers.get('location')!
    const state = async () => await (await fetch(second.origin + location, { headers })).json() as { state: string, rows: { written: number } }
    for (let job = await state(); job.rows.written < 500 && job.state === 'running'; job = await state()) await new Promise(resolve => setTimeout(resolve, 20))
    first.child.kill('SIGKILL')
    await first.exited
    first.live = false
    let job = await state()
    for (; job.state === 'running'; job = await state()) await new Promise(resolve => setTimeout(resolve, 100))
    t.match(job, { state: 'succeeded', rows: { written: rows } }, 'finished by the node left')
    const exported = await (await fetch(`${second.origin}/books/export.ndjson?author=Importer`, { headers })).text()
    const titles = exported.split('\n').slice(0, -1).map(line => (JSON.parse(line) as { title: string }).title)
    t.same([titles.length, new Set(titles).size], [rows, rows], 'every row once')
    const { rows: [events] } = await client.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE type = 'book.created' AND envelope LIKE '%Imported row %'")
    t.equal(Number(events!.n), rows, 'one event per record')
  })

  t.test('30 PUTs with the same If-Match over three nodes: exactly one wins, 29 get 412 (three rounds)', async t => {
    const live = nodes.filter(n => n.live)
    for (let round = 1; round <= 3; round++) {
      const { answer } = await createOnce(nodes, round, `if-match-${round}`)
      const book = JSON.parse(answer.body) as Listed
      const etag = answer.headers.get('etag')!
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        send(live[i % live.length]!, 'PUT', `/books/${book.book_id}`, { body: { title: `round ${round} writer ${i}`, author: 'Racer' }, headers: { 'if-match': etag } })))
      const statuses = results.map(r => 'status' in r ? r.status : r.error)
      t.same([statuses.filter(s => s === 200).length, statuses.filter(s => s === 412).length], [1, 29], `round ${round}: one 200 and 29 412 (${JSON.stringify(statuses)})`)
      const winner = results.findIndex(r => 'status' in r && r.status === 200)
      const winnerEtag = (results[winner] as Extract<Result, { status: number }> | undefined)?.headers.get('etag')
      for (const node of live) {
        const read = await send(node, 'GET', `/books/${book.book_id}`)
        const stored = 'status' in read ? (JSON.parse(read.body) as Listed).title : read.error
        t.same([stored, 'status' in read && read.headers.get('etag')], [`round ${round} writer ${winner}`, winnerEtag], `round ${round}: node ${node.name} reads the winner's record and tag`)
      }
    }
  })

  t.test('one Idempotency-Key sent to three nodes at once: one record, one 201, the others replay it (ten rounds)', async t => {
    const live = nodes.filter(n => n.live)
    const rounds = await Promise.all(Array.from({ length: 10 }, async (_, round) => {
      const key = `same-key-${round}`
      const creates = await Promise.all(live.map((_, i) => createOnce(live, i, key)))
      return { key, creates }
    }))
    const counts = await titleCounts(databaseUrl)
    for (const { key, creates } of rounds) {
      const fresh = creates.filter(c => c.answer.headers.get('idempotent-replayed') === null)
      const firstAnswers = creates.map(c => c.attempts[0]!.result).map(r => 'status' in r ? `${r.status}${r.headers.get('idempotent-replayed') === 'true' ? ' replayed' : ''}${r.status === 409 ? ` ${problemType(r)}` : ''}` : r.error)
      t.equal(fresh.length, 1, `${key}: exactly one request created the record (first answers: ${firstAnswers.join(', ')})`)
      t.same(new Set(creates.map(c => c.answer.body)).size, 1, `${key}: every answer carries the same record`)
      t.equal(counts.get(`book ${key}`), 1, `${key}: one record stored`)
    }
  })

  t.test('an API key revoked with the keys CLI is refused by every node within API_KEY_CACHE_TTL_MS', async t => {
    const live = nodes.filter(n => n.live)
    const created = await keysCli(databaseUrl, 'create', '--scopes', 'books:read,students:read', '--name', 'multinode revocation')
    const keyId = /^Created key (\S+)/m.exec(created)?.[1]
    const key = created.trim().split('\n').at(-1)!
    t.ok(keyId, 'the CLI created a key')
    for (const node of live) {
      const res = await send(node, 'GET', '/api/students?limit=1', { key })
      t.equal('status' in res && res.status, 200, `node ${node.name} honours the key (and now holds it in its cache)`)
    }
    await keysCli(databaseUrl, 'revoke', keyId!)
    // The bound the service promises, plus slack for a loaded 2-core machine; what is asserted is "refused within it".
    const deadline = Date.now() + apiKeyCacheTtl + 2_000
    for (const node of live) {
      let status: number | string = 0
      while (status !== 401 && Date.now() < deadline) {
        const res = await send(node, 'GET', '/api/students?limit=1', { key })
        status = 'status' in res ? res.status : res.error
        if (status !== 401) await sleep(25)
      }
      t.equal(status, 401, `node ${node.name} refuses the revoked key within the TTL`)
    }
  })

  const redis = await needService(t, { name: `Redis at ${testRedisUrl}`, check: () => pingRedis(testRedisUrl), howToRun: 'start redis-server on port 6379 or set TEST_REDIS_URL' })
  t.test('a rate limit is shared exactly across nodes (REDIS_URL)', redis, async t => {
    const limit = 30
    // A fresh key is a fresh partition, and a window of an hour is not crossed during the test.
    const created = await keysCli(databaseUrl, 'create', '--scopes', 'books:read', '--name', 'multinode rate limit')
    const key = created.trim().split('\n').at(-1)!
    const limited = await Promise.all(['r1', 'r2', 'r3'].map(name => startNode(name, databaseUrl, {
      REDIS_URL: testRedisUrl,
      // A prefix of this run's own, so that no other test's counters meet these.
      REDIS_KEY_PREFIX: `bsa-test:${process.pid}:`,
      RATE_LIMIT: `${limit}/3600`
    })))
    t.teardown(() => stopAll(limited))
    const results = await inParallel(2 * limit, 8, i => send(limited[i % limited.length]!, 'GET', '/books?limit=1', { key }))
    const statuses = results.map(r => 'status' in r ? r.status : r.error)
    t.same([statuses.filter(s => s === 200).length, statuses.filter(s => s === 429).length], [limit, limit],
      `${2 * limit} requests over three nodes with one key: exactly ${limit} allowed`)
  })

  t.test('SIGTERM of a node under load: every request it took was answered or cleanly refused, and succeeded on a retry', async t => {
    const live = nodes.filter(n => n.live)
    const stopping = live[0]!
    const total = 300
    let done = 0
    const stopped: { exit?: Promise<number | null> } = {}
    const creates = await inParallel(total, 16, async i => {
      const create = await createOnce(nodes, i, `sigterm-${i}`)
      // The load balancer's view: the node stays in rotation until it refuses connections.
      const refused = create.attempts.some(a => a.node === stopping.name && 'error' in a.result && /ECONNREFUSED/.test(a.result.error))
      if (refused) stopping.live = false
      if (++done === total / 3) {
        stopping.child.kill('SIGTERM')
        stopped.exit = stopping.exited
      }
      return create
    })
    t.ok(stopped.exit, 'SIGTERM was sent mid-load')
    t.equal(await stopped.exit, 0, 'the node drained and exited 0')
    stopping.live = false
    const answered = creates.flatMap(c => c.attempts.filter(a => a.node === stopping.name && 'status' in a.result).map(a => (a.result as { status: number }).status))
    const unanswered = creates.flatMap(c => c.attempts.filter(a => a.node === stopping.name && 'error' in a.result)).length
    t.same([...new Set(answered)].filter(s => s !== 201 && s !== 503), [],
      `the stopping node answered 201 (or 503 while closing) to each of its ${answered.length} answered requests (${answered.filter(s => s === 503).length} 503s; ${unanswered} refused or closed, then retried)`)
    t.ok(answered.filter(s => s === 201).length > 0, 'it acknowledged writes during the load')
    const { books } = await listAll(nodes)
    checkStored(t, creates, books, await titleCounts(databaseUrl))
  })
}))
