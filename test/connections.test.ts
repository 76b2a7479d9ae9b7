// Connections on both ports, over real sockets: each request head has a deadline, answers in progress are spared, and one address gets only its share.
import { once } from 'node:events'
import type { Server } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { type Config, defaults } from '../src/config/index.js'
import { addressOf } from '../src/http/connections.js'
import { buildOpsApp } from '../src/ops/routes.js'
import type { AppDependencies } from '../src/app.js'
import type { RecordExport, Repositories } from '../src/storage/types.js'
import { openStream } from './sse.js'
import { adminKey, build, dune, eventually, openTestRepositories } from './helper.js'

interface Port { name: string, port: number, path: string }

/** The API's listener and the ops listener, both on 127.0.0.1, with short deadlines unless told otherwise. */
async function listeners (t: Test, overrides: Partial<Config> = {}, dependencies: Partial<AppDependencies> = {}): Promise<{ api: Port, ops: Port, origin: string, servers: { api: Server, ops: Server } }> {
  const settings = { headersTimeout: 300, requestTimeout: 600, keepAliveTimeout: 300, ...overrides }
  const { app } = await build(t, settings, dependencies)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const ops = await buildOpsApp(app.operations, app.log, { ...defaults, ...settings })
  t.teardown(() => ops.close())
  await ops.listen({ port: 0, host: '127.0.0.1' })
  const portOf = (server: { server: { address (): unknown } }) => (server.server.address() as AddressInfo).port
  return {
    api: { name: 'the API port', port: portOf(app), path: '/books' },
    ops: { name: 'the ops port', port: portOf(ops), path: '/health/live' },
    origin: `http://127.0.0.1:${portOf(app)}`,
    servers: { api: app.server, ops: ops.server }
  }
}

interface Client { socket: Socket, ready: Promise<void>, closed: Promise<string>, received: () => string }

/** A socket from `from` (any 127.0.0.0/8 address reaches a listener on 127.0.0.1) that collects what it is sent until it closes. */
function open (port: number, from = '127.0.0.1'): Client {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from })
  let received = ''
  socket.on('data', chunk => { received += chunk.toString('latin1') })
  socket.on('error', () => {}) // a reset is one of the answers a dropped client may get
  return {
    socket,
    ready: new Promise(resolve => socket.once('connect', () => resolve())),
    closed: new Promise(resolve => socket.once('close', () => resolve(received))),
    received: () => received
  }
}

const get = (path: string, ...headers: string[]) => [`GET ${path} HTTP/1.1`, 'Host: localhost', ...headers, '', ''].join('\r\n')

/** Sends a request on an open connection and resolves once a whole answer (with a Content-Length body) is in. */
async function served (client: Client, path: string): Promise<string> {
  const before = client.received().length
  client.socket.write(get(path))
  for (;;) {
    const answer = client.received().slice(before)
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(answer)?.[1]
    const bodyAt = answer.indexOf('\r\n\r\n')
    if (length !== undefined && bodyAt >= 0 && answer.length >= bodyAt + 4 + Number(length)) return answer
    await once(client.socket, 'data')
  }
}

const timedOut = /^HTTP\/1\.1 408 Request Timeout\r\n[^]*content-type: application\/problem\+json[^]*"status":408/i

t.test('a connection that sends no whole request head is answered 408 and closed after HEADERS_TIMEOUT, on both ports', async t => {
  const { api, ops } = await listeners(t)
  for (const { name, port, path } of [api, ops]) {
    const silent = open(port)
    const oneByte = open(port)
    const partial = open(port)
    await Promise.all([silent.ready, oneByte.ready, partial.ready])
    oneByte.socket.write('G')
    partial.socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n`)
    t.match(await silent.closed, timedOut, `${name}: no byte`)
    t.match(await oneByte.closed, timedOut, `${name}: one byte`)
    t.match(await partial.closed, timedOut, `${name}: a head without its end`)
  }
})

t.test('after a keep-alive response, the next head has KEEP_ALIVE_TIMEOUT plus HEADERS_TIMEOUT, whatever bytes come meanwhile, on both ports', { timeout: 60_000 }, async t => {
  const { api, ops } = await listeners(t)
  for (const { name, port, path } of [api, ops]) {
    const idle = open(port)
    const oneByte = open(port)
    const blankLines = open(port)
    await Promise.all([idle.ready, oneByte.ready, blankLines.ready])
    for (const client of [idle, oneByte, blankLines]) t.match(await served(client, path), /^HTTP\/1\.1 200 /, `${name}: served first`)
    oneByte.socket.write('G')
    // The CR LF a client may send between requests starts no head; each one reset Node's idle timer,
    // so that a line every 50 ms held the connection for ever.
    const drip = setInterval(() => { if (!blankLines.socket.destroyed) blankLines.socket.write('\r\n') }, 50)
    t.teardown(() => clearInterval(drip))
    const answers = await Promise.all([idle.closed, oneByte.closed, blankLines.closed])
    clearInterval(drip)
    const [afterByte, afterBlankLines] = answers.slice(1).map(answer => answer.slice(answer.indexOf('HTTP/1.1', 1)))
    t.match(answers[0], /^HTTP\/1\.1 200 (?:(?!HTTP\/1\.1)[^])*$/, `${name}: an idle connection is closed without a word, as idle connections are`)
    t.match(afterByte, timedOut, `${name}: a head begun and never ended is answered 408`)
    t.match(afterBlankLines, timedOut, `${name}: blank lines are no head: 408`)
  }
})

/** The repositories, with book exports that send their first chunk, then wait for `release`. */
async function slowExports (t: Test): Promise<{ repositories: Repositories, release: () => void }> {
  const repositories = await openTestRepositories(t)
  let release = (): void => {}
  const released = new Promise<void>(resolve => { release = resolve })
  const books = repositories.books
  const slowBooks = new Proxy(books, {
    get (target, name, receiver) {
      if (name !== 'export') {
        const value: unknown = Reflect.get(target, name, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      }
      return async (...args: Parameters<typeof books.export>): Promise<RecordExport> => {
        const exported = await target.export(...args)
        async function * chunks () {
          for await (const chunk of exported.chunks) {
            yield chunk
            await released
          }
        }
        return { ...exported, chunks: chunks() }
      }
    }
  })
  return { repositories: { ...repositories, books: slowBooks } as Repositories, release }
}

t.test('answers in progress are never cut off: an event stream, an export read slowly, an upload being received', async t => {
  const { repositories, release } = await slowExports(t)
  // The stream sends nothing of itself for minutes; an upload may take a minute.
  const { api, origin } = await listeners(t, { requestTimeout: 60_000, eventStreamHeartbeat: 600_000 }, { repositories })
  const write = (book: object) => fetch(`${origin}/books`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(book) })
  t.equal((await write(dune)).status, 201)

  const stream = await openStream(`${origin}/events/stream`, { authorization: `Bearer ${adminKey}` })
  t.equal(stream.status, 200)
  let streamEnded = false
  stream.ended.then(() => { streamEnded = true }, () => {})

  const exporting = open(api.port)
  await exporting.ready
  exporting.socket.write(get('/books/export.csv', 'Connection: close'))
  await once(exporting.socket, 'data')

  const csv = 'title,author\r\nThe Left Hand of Darkness,Ursula K. Le Guin\r\n'
  const uploading = open(api.port)
  await uploading.ready
  uploading.socket.write(['POST /imports?collection=books HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${adminKey}`, 'Content-Type: text/csv', `Content-Length: ${csv.length}`, 'Connection: close', '', ''].join('\r\n') + csv.slice(0, 20))

  // A connection opened after all three, which waits for a head of its own: once it is closed, every
  // deadline the three could have had has passed.
  const witness = open(api.port)
  await witness.ready
  await served(witness, '/books')
  await witness.closed

  t.notOk(streamEnded, 'the event stream is open')
  t.equal((await write({ ...dune, isbn: null, title: 'Children of Dune' })).status, 201)
  await stream.waitFor(frames => frames.some(frame => frame.data?.includes('Children of Dune') === true))
  t.pass('and delivers what happens')
  stream.close()

  release()
  const exported = await exporting.closed
  t.match(exported, /^HTTP\/1\.1 200 [^]*title[^]*Dune[^]*\r\n0\r\n\r\n$/, 'the export ran to its end')

  uploading.socket.write(csv.slice(20))
  t.match(await uploading.closed, /^HTTP\/1\.1 202 /, 'the upload was received whole and accepted')
})

/** Resolves once `server` holds `count` connections (a closed one is let go a moment after its client sees it close). */
const holding = async (server: Server, count: number): Promise<number> =>
  eventually(() => new Promise<number>((resolve, reject) => server.getConnections((error, n) => error ? reject(error) : resolve(n))), n => n === count, `${count} connections`)

t.test('one address holds at most its share of connections on each port; others still connect, and a freed one is taken again', async t => {
  const lines: string[] = []
  const { api, ops, servers } = await listeners(t, { maxConnectionsPerAddress: 2, opsMaxConnectionsPerAddress: 2, headersTimeout: 5000, requestTimeout: 5000, keepAliveTimeout: 5000, logLevel: 'warn' },
    { logStream: { write: line => { lines.push(line) } } })
  for (const [{ name, port, path }, server] of [[api, servers.api], [ops, servers.ops]] as const) {
    const first = open(port)
    const second = open(port)
    // Each served once, so that the server has counted both before the next knocks.
    for (const client of [first, second]) t.match(await served(client, path), /^HTTP\/1\.1 200 /)
    for (const attempt of [1, 2]) {
      const extra = open(port)
      extra.socket.write(get(path))
      t.equal(await extra.closed, '', `${name}: the address's connection ${2 + attempt} is closed at once, unanswered`)
    }
    const elsewhere = open(port, '127.0.0.2')
    t.match(await served(elsewhere, path), /^HTTP\/1\.1 200 /, `${name}: another address connects meanwhile`)

    first.socket.write(get(path, 'Connection: close'))
    await first.closed
    await holding(server, 2)
    const again = open(port)
    t.match(await served(again, path), /^HTTP\/1\.1 200 /, `${name}: a freed connection is the address's again`)
    for (const client of [second, elsewhere, again]) client.socket.destroy()
  }
  const warnings = lines.map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line['level'] === 40)
  t.match(warnings, [
    { remoteAddress: '127.0.0.1', refused: 1, limit: 2, msg: /MAX_CONNECTIONS_PER_ADDRESS/ },
    { remoteAddress: '127.0.0.1', refused: 1, limit: 2, msg: /MAX_CONNECTIONS_PER_ADDRESS/ }
  ], 'each port says so once, not once per refusal')
  t.equal(warnings.length, 2)
})

t.test('what a connection counts against: an IPv4 address, a global IPv6 address\'s /64, any other address as it is', async t => {
  t.equal(addressOf('203.0.113.7'), '203.0.113.7')
  t.equal(addressOf('::ffff:203.0.113.7'), '203.0.113.7', 'an IPv4-mapped address is its IPv4 address')
  t.equal(addressOf('2001:db8:1:2::a'), '2001:db8:1:2::/64')
  t.equal(addressOf('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'every address of a /64 counts as one')
  t.not(addressOf('2001:db8:1:3::a'), addressOf('2001:db8:1:2::a'), 'the next /64 is another')
  t.equal(addressOf('::1'), '::1', 'loopback is itself')
  t.equal(addressOf('fd00::1'), 'fd00::1', 'an address of a private network (a pod\'s) is itself')
  t.equal(addressOf('fe80::1%eth0'), 'fe80::1%eth0', 'a link-local one too')
  t.equal(addressOf(undefined), 'unknown', 'sockets already gone count against one address until they close')
})
