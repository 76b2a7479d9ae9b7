// Raw sockets against a listening server: slow clients are cut off, garbage and huge headers do no harm.
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { setImmediate } from 'node:timers/promises'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { Config } from '../src/config/index.js'
import { lingerPiecesMax } from '../src/http/connections.js'
import { clientErrorHandler } from '../src/http/problems.js'
import { adminKey, build, dune } from './helper.js'

async function listening (t: Test, overrides: Partial<Config> = {}): Promise<{ port: number, origin: string }> {
  const { app } = await build(t, { headersTimeout: 300, requestTimeout: 600, keepAliveTimeout: 300, ...overrides })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return { port, origin: `http://127.0.0.1:${port}` }
}

/** The problem in a raw HTTP answer, checked to be one: status line, media type and body agree. */
function problemIn (t: Test, answer: string, status: number): void {
  const [head, body] = answer.split('\r\n\r\n')
  t.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), `status ${status}`)
  t.match(head, /\r\ncontent-type: application\/problem\+json(?:;[^\r]*)?\r\n/i, 'a problem body')
  t.match(JSON.parse(body!), { type: status === 401 ? String : 'about:blank', status, detail: String })
}

/** Opens a socket and collects what the server sends until it closes the connection. */
function open (port: number): { socket: Socket, ready: Promise<void>, closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', chunk => { received += chunk.toString('latin1') })
  socket.on('error', () => {}) // a reset is one of the answers a dropped client may get
  return {
    socket,
    ready: new Promise(resolve => socket.once('connect', () => resolve())),
    closed: new Promise(resolve => socket.once('close', () => resolve(received)))
  }
}

t.test('a slowloris client that never finishes its headers is cut off while others are served', async t => {
  const { port, origin } = await listening(t)
  const slow = open(port)
  await slow.ready
  slow.socket.write('GET /books HTTP/1.1\r\nHost: localhost\r\n')
  // One more header line every 50 ms: the connection never idles, the headers never end.
  const drip = setInterval(() => { if (!slow.socket.destroyed) slow.socket.write(`X-Drip-${Date.now()}: 1\r\n`) }, 50)
  t.teardown(() => clearInterval(drip))
  const served = await fetch(`${origin}/books`)
  t.equal(served.status, 200, 'another client is served meanwhile')
  const answer = await slow.closed
  clearInterval(drip)
  problemIn(t, answer, 408)
  t.equal((await fetch(`${origin}/books`)).status, 200, 'the service goes on')
})

t.test('a client that sends its body too slowly is cut off by the request timeout', async t => {
  const { port, origin } = await listening(t)
  const slow = open(port)
  await slow.ready
  slow.socket.write(`POST /books HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${adminKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`)
  const drip = setInterval(() => { if (!slow.socket.destroyed) slow.socket.write(' ') }, 50)
  t.teardown(() => clearInterval(drip))
  const answer = await slow.closed
  clearInterval(drip)
  problemIn(t, answer, 408)
  t.equal((await fetch(`${origin}/books`)).status, 200)
})

t.test('garbage bytes get 400 and a closed connection; the process keeps serving', async t => {
  const { port, origin } = await listening(t)
  for (const garbage of ['\u0000\u00ff\u00fe GARBAGE \r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /books HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 'GET /books HTTP/1.1\r\nBad Header\r\n\r\n']) {
    const client = open(port)
    await client.ready
    client.socket.end(Buffer.from(garbage, 'latin1'))
    problemIn(t, await client.closed, 400)
  }
  t.equal((await fetch(`${origin}/books`)).status, 200)
})

t.test('headers over 16 KiB get 431; the process keeps serving', async t => {
  const { port, origin } = await listening(t)
  const client = open(port)
  await client.ready
  client.socket.write(`GET /books HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  problemIn(t, await client.closed, 431)
  t.equal((await fetch(`${origin}/books`)).status, 200)
})

t.test('an expectation other than 100-continue is ignored, not answered with an undeclared 417', async t => {
  const { port } = await listening(t)
  const client = open(port)
  await client.ready
  client.socket.write('GET /books HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\nConnection: close\r\n\r\n')
  const [head, body] = (await client.closed).split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 200 /)
  t.same(JSON.parse(body!), { items: [], next_cursor: null })
})

t.test('connections beyond MAX_CONNECTIONS are dropped; those already open are unaffected', async t => {
  const { port } = await listening(t, { maxConnections: 2, keepAliveTimeout: 5000, headersTimeout: 5000, requestTimeout: 5000 })
  const first = open(port)
  const second = open(port)
  await Promise.all([first.ready, second.ready])
  // Make sure the server has accepted both before the third knocks.
  first.socket.write('GET /books HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await new Promise(resolve => first.socket.once('data', resolve))
  second.socket.write('GET /books HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await new Promise(resolve => second.socket.once('data', resolve))
  const third = open(port)
  third.socket.write('GET /books HTTP/1.1\r\nHost: localhost\r\n\r\n')
  t.equal(await third.closed, '', 'the third connection is closed without an answer')
  first.socket.write('GET /books HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  t.match(await first.closed, /HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 200 /, 'an open connection is still served')
  second.socket.destroy()
  await second.closed
})

t.test('a refusal before routing is written only to a socket that can still take it', async t => {
  const written: string[] = []
  const socket = (state: { destroyed?: boolean, writable?: boolean }) => {
    let destroyed = 0
    const fake = { ...state, write: (text: string) => written.push(text), destroy: () => { destroyed++ } }
    return { fake: fake as unknown as Socket, destroyed: () => destroyed }
  }
  const reset = socket({ writable: true })
  clientErrorHandler(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), reset.fake)
  const gone = socket({ destroyed: true, writable: true })
  clientErrorHandler(new Error('late'), gone.fake)
  t.same(written, [], 'nothing is written to a reset or destroyed connection')
  t.equal(reset.destroyed() + gone.destroyed(), 0, 'and nothing more is done with it')
  const halfClosed = socket({ writable: false })
  clientErrorHandler(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), halfClosed.fake)
  t.same(written, [], 'a socket that cannot be written is not written')
  t.equal(halfClosed.destroyed(), 1, 'but it is closed')
  const open = socket({ writable: true })
  clientErrorHandler(new Error('a parser error without a code'), open.fake)
  t.match(written, [/^HTTP\/1\.1 400 Bad Request\r\n[^]*"detail":"The request is not valid HTTP\/1\.1"/], 'an unnamed error is a plain 400 problem')
})

/**
 * A client that writes its whole request before it reads anything, as simple clients do: the head, then
 * `size` bytes of body in 64 KiB pieces, each write awaited (a reset fails it with EPIPE or ECONNRESET).
 * Resolves with all the server sent, once it closed the connection.
 */
async function uploadThenRead (port: number, head: string, size: number, { chunked = false } = {}): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const write = (chunk: string | Buffer) => new Promise<void>((resolve, reject) => socket.write(chunk, error => error ? reject(error) : resolve()))
  try {
    await write(head)
    const piece = Buffer.alloc(64 * 1024, 0x20)
    for (let sent = 0; sent < size; sent += piece.length) {
      const part = piece.subarray(0, Math.min(piece.length, size - sent))
      await write(chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part)
    }
    if (chunked) await write('0\r\n\r\n')
    let received = ''
    socket.on('data', chunk => { received += chunk.toString('latin1') })
    await once(socket, 'end')
    return received
  } finally {
    socket.destroy()
  }
}

const tenMegabytes = 10 * 1024 * 1024
const postHead = (headers: string[]) => ['POST /books HTTP/1.1', 'Host: localhost', ...headers, '', ''].join('\r\n')

t.test('a body refused before it is all read (too large, no key) still gets its answer, read after the client wrote it all', async t => {
  const { port, origin } = await listening(t, { headersTimeout: 5000, requestTimeout: 30_000 })
  const tooLarge = await uploadThenRead(port, postHead([`Authorization: Bearer ${adminKey}`, 'Content-Type: application/json', `Content-Length: ${tenMegabytes}`]), tenMegabytes)
  problemIn(t, tooLarge, 413)
  t.match(tooLarge, /\r\nconnection: close\r\n/i, 'the answer says the connection closes')
  const chunked = await uploadThenRead(port, postHead([`Authorization: Bearer ${adminKey}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked']), tenMegabytes, { chunked: true })
  problemIn(t, chunked, 413)
  t.match(chunked, /\r\nconnection: close\r\n/i, 'a body of no declared length is refused once over the limit, and dropped')
  const anonymous = await uploadThenRead(port, postHead(['Content-Type: application/json', `Content-Length: ${tenMegabytes}`]), tenMegabytes)
  problemIn(t, anonymous, 401)
  t.match(anonymous, /\r\nconnection: close\r\n/i, 'a large body refused unread is not read on to keep the connection')
  t.equal((await fetch(`${origin}/books`)).status, 200, 'the service goes on')
})

t.test('a refused body whose client stops sending is drained for REQUEST_TIMEOUT at most', async t => {
  const { port } = await listening(t, { headersTimeout: 300, requestTimeout: 600 })
  const client = open(port)
  await client.ready
  client.socket.write(postHead(['Content-Type: application/json', `Content-Length: ${tenMegabytes}`]) + '{')
  // The 401 comes at once; the connection then waits for the rest of the body, which never comes.
  problemIn(t, await client.closed, 401)
})

t.test('a refused body sent in many small pieces is dropped for lingerPiecesMax of them at most, then the connection closes', async t => {
  const { port } = await listening(t, { headersTimeout: 5000, requestTimeout: 120_000 })
  // A client that keeps sending once the server has half-closed (Node's own would end its side too).
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  socket.on('error', () => {})
  let received = ''
  socket.on('data', chunk => { received += chunk.toString('latin1') })
  const state = { gone: false }
  const closed = new Promise(resolve => socket.once('close', () => { state.gone = true; resolve(undefined) }))
  await once(socket, 'connect')
  const write = (chunk: string) => new Promise<boolean>(resolve => socket.write(chunk, error => resolve(error === undefined || error === null)))
  await write(postHead(['Content-Type: application/json', 'Transfer-Encoding: chunked']))
  // 20-byte chunks, a hundred a write, up to a thousand times the bound: a body that no bound stopped ends.
  const batch = `14\r\n${'x'.repeat(20)}\r\n`.repeat(100)
  for (let sent = 0; sent < lingerPiecesMax * 1000 && !state.gone; sent += 100) {
    if (!await write(batch)) break
    await setImmediate()
  }
  const ended = !state.gone && await write('0\r\n\r\n')
  // Half-open, the client's side closes only when it says so: once it has sent all, or been cut off.
  socket.end()
  await closed
  problemIn(t, received, 401)
  t.notOk(ended, 'closed before the client could end its body')
})

/** Sends a request head with `Expect: 100-continue` and resolves with the first answer the server writes. */
async function expectContinue (port: number, head: string): Promise<{ socket: Socket, first: string, closed: Promise<string> }> {
  const client = open(port)
  await client.ready
  client.socket.write(head)
  const [chunk] = await once(client.socket, 'data') as [Buffer]
  return { socket: client.socket, first: chunk.toString('latin1'), closed: client.closed }
}

t.test('Expect: 100-continue: a request the headers already refuse gets its final answer and no invitation to send', async t => {
  const { port, origin } = await listening(t, { headersTimeout: 5000, requestTimeout: 30_000 })
  const refusals = [
    { status: 401, headers: ['Content-Type: application/json'] },
    { status: 413, headers: [`Authorization: Bearer ${adminKey}`, 'Content-Type: application/json'] },
    { status: 415, headers: [`Authorization: Bearer ${adminKey}`, 'Content-Type: text/plain'] }
  ]
  for (const { status, headers } of refusals) {
    const { first, closed } = await expectContinue(port, postHead([...headers, `Content-Length: ${tenMegabytes}`, 'Expect: 100-continue']))
    t.notMatch(first, /^HTTP\/1\.1 100 /, `no 100 Continue before the ${status}`)
    const answer = await closed
    problemIn(t, answer, status)
    t.match(answer, /\r\nconnection: close\r\n/i, 'and the connection closes, the body unsent')
  }

  const body = JSON.stringify(dune)
  const accepted = await expectContinue(port, postHead([`Authorization: Bearer ${adminKey}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Expect: 100-continue', 'Connection: close']))
  t.equal(accepted.first, 'HTTP/1.1 100 Continue\r\n\r\n', 'an acceptable request is invited to send its body')
  accepted.socket.write(body)
  t.match(await accepted.closed, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /, 'and is served')
  t.equal((await fetch(`${origin}/books`)).status, 200)
})
