// A request's body as it arrives (src/http/body.ts): joined per turn of the event loop, its pieces counted, its failures told.
import { createServer, type IncomingMessage } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { arriving } from '../src/http/body.js'

/** A server whose every request is read by `read`; resolves with its port. */
async function server (t: Test, read: (request: IncomingMessage) => Promise<string>): Promise<number> {
  const listening = createServer((request, response) => {
    read(request).then(text => response.end(text), (error: Error) => response.end(`failed: ${error.message}`))
  })
  await new Promise<void>(resolve => listening.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { listening.closeAllConnections(); listening.close(resolve) }))
  return (listening.address() as AddressInfo).port
}

/** Sends `chunks` as one chunked request, written at once, and resolves with the answer's body. */
function send (port: number, chunks: string[]): Promise<string> {
  const body = chunks.map(chunk => `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`).join('') + '0\r\n\r\n'
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body}`))
    let answer = ''
    socket.on('data', data => { answer += data.toString() })
    socket.on('error', reject)
    socket.on('close', () => resolve(answer.slice(answer.indexOf('\r\n\r\n') + 4)))
  })
}

/** What arriving() gave: the text, how many chunks, and the pieces they said they came in. */
async function readAll (request: IncomingMessage): Promise<string> {
  let text = ''
  let chunks = 0
  let pieces = 0
  let largest = 0
  for await (const arrived of arriving(request)) {
    text += arrived.chunk.toString()
    chunks++
    pieces += arrived.pieces
    largest = Math.max(largest, arrived.chunk.length)
  }
  return JSON.stringify({ text, chunks, pieces, largest })
}

t.test('a body sent in 20-byte chunks is handed on in a few joined chunks, each with the pieces it came in', async t => {
  const port = await server(t, readAll)
  const chunks = Array.from({ length: 15_000 }, (_, i) => String(i % 10).repeat(20))
  const got = JSON.parse(await send(port, chunks)) as { text: string, chunks: number, pieces: number, largest: number }
  t.equal(got.text, chunks.join(''), 'every byte, in order')
  t.ok(got.pieces >= 15_000 && got.pieces <= 15_000 + 100, `${got.pieces} pieces: every HTTP chunk, and those two reads of the socket cut in two`)
  t.ok(got.chunks <= 100, `${got.chunks} chunks handed on for 15,000 pieces`)
  t.ok(got.largest <= 65_536, `at most 64 KiB at a time (${got.largest})`)
})

t.test('whatever the chunks, the bytes arrive whole and every piece is counted once', async t => {
  const port = await server(t, readAll)
  await fc.assert(fc.asyncProperty(fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 300 }), async chunks => {
    const got = JSON.parse(await send(port, chunks)) as { text: string, pieces: number }
    if (got.text !== chunks.join('') || got.pieces < chunks.length || got.pieces > chunks.length + 8) throw new Error(`${JSON.stringify(got)} for ${chunks.length} chunks`)
  }), { numRuns: 60, seed: 20261201 })
  t.pass('every generated body')
})

t.test('a client that goes away fails the read', async t => {
  let tell: (outcome: string) => void = () => {}
  const told = new Promise<string>(resolve => { tell = resolve })
  const port = await server(t, async request => {
    try {
      for await (const arrived of arriving(request)) t.ok(arrived.chunk.length > 0)
      tell('ended')
    } catch (error) {
      tell(`failed: ${(error as Error).message}`)
    }
    return ''
  })
  const socket = connect(port, '127.0.0.1', () => socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf', () => socket.destroy()))
  socket.on('error', () => {})
  t.match(await told, /^failed: /)
})

t.test('a read left early leaves the body as it was (not destroyed, its push its own again), to be answered', async t => {
  const port = await server(t, async request => {
    const push = request.push
    for await (const arrived of arriving(request)) if (arrived.chunk.length > 0) break
    return JSON.stringify({ destroyed: request.destroyed, pushRestored: request.push === push })
  })
  t.same(JSON.parse(await send(port, ['a'.repeat(10), 'b'.repeat(10)])), { destroyed: false, pushRestored: true })
})
