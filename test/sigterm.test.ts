// Graceful stop through the real process: SIGTERM under load drains in-flight requests and half-writes nothing.
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { adminKey } from './helper.js'
import { allBooks, type Book, post, type Running, start, stop, until } from './process.js'

t.setTimeout(60_000)

t.test('SIGTERM under load: the request in flight completes (a repeated signal too), new connections are refused, nothing is half-written', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-term-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DATABASE_PATH: join(dir, 'data.sqlite') }
  const running: Running = await start(env)
  const { port, hostname } = new URL(running.origin)

  // Background load: many creates; each outcome is a status or a network error.
  const outcomes: { status: number, book?: Book }[] = []
  let stopping = false
  const load = Array.from({ length: 6 }, async (_, w) => {
    for (let n = 0; !stopping; n++) {
      try {
        outcomes.push(await post(running.origin, `load-${w}-${n}`))
      } catch {
        stopping = true
      }
    }
  })
  await until(() => outcomes.length >= 50)

  // A request whose headers the server has read (it answered 100 Continue) is in flight for sure.
  const body = JSON.stringify({ title: 'in flight at SIGTERM', author: 'A' })
  const slow = httpRequest({
    host: hostname,
    port,
    method: 'POST',
    path: '/books',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue', authorization: `Bearer ${adminKey}` }
  })
  const answered = once(slow, 'response')
  slow.flushHeaders()
  await once(slow, 'continue')
  const exited = once(running.child, 'exit')
  running.child.kill('SIGTERM')

  // The listening socket closes while the in-flight request still holds the process open.
  let refused = false
  while (!refused) {
    const socket = connect(Number(port), hostname)
    const [event] = await Promise.race([once(socket, 'error').then(() => ['error']), once(socket, 'connect').then(() => ['connect'])])
    socket.destroy()
    refused = event === 'error'
    if (!refused) await new Promise(resolve => setTimeout(resolve, 10))
  }
  t.ok(refused, 'a new connection is refused after SIGTERM')
  t.equal(running.child.exitCode, null, 'while the in-flight request keeps the server up')
  // Ctrl-C on `npm start` reaches the server twice (the terminal's and npm's forward): a repeat is no order to quit now.
  running.child.kill('SIGINT')
  await until(() => running.output().includes('the repeated signal is ignored'))

  slow.end(body)
  const [res] = await answered
  let text = ''
  for await (const chunk of res) text += chunk
  t.equal(res.statusCode, 201, 'the in-flight request completed')
  const slowBook = JSON.parse(text) as Book
  t.same(await exited, [0, null], 'then the server exited 0')
  stopping = true
  await Promise.all(load)

  t.same([...new Set(outcomes.map(o => o.status))].filter(s => s !== 201), [], 'every request that got an answer got a 201')
  const restarted = await start(env)
  t.teardown(() => stop(restarted, 'SIGTERM'))
  const stored = await allBooks(restarted.origin)
  const acknowledged = [...outcomes.filter(o => o.status === 201).map(o => o.book!), slowBook]
  t.same(
    stored.map(b => [b.book_id, b.title]).sort(),
    acknowledged.map(b => [b.book_id, b.title]).sort(),
    `exactly the ${acknowledged.length} acknowledged books are stored, each whole`
  )
})
