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

/**
 * A create whose headers the server has read (it answered 100 Continue), so it is in flight for
 * sure, and whose body is sent when the test says (`slow.end(body)`).
 */
async function inFlightCreate (host: string, port: number, title: string) {
  const body = JSON.stringify({ title, author: 'A' })
  const slow = httpRequest({
    host,
    port,
    method: 'POST',
    path: '/books',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue', authorization: `Bearer ${adminKey}` }
  })
  const answered = once(slow, 'response')
  slow.flushHeaders()
  await once(slow, 'continue')
  return { slow, body, answered }
}

/** Resolves once the server's listening socket is closed (a connection is refused). */
async function untilRefused (hostname: string, port: number): Promise<void> {
  for (;;) {
    const socket = connect(port, hostname)
    const [event] = await Promise.race([once(socket, 'error').then(() => ['error']), once(socket, 'connect').then(() => ['connect'])])
    socket.destroy()
    if (event === 'error') return
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

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

  const { slow, body, answered } = await inFlightCreate(hostname, Number(port), 'in flight at SIGTERM')
  const exited = once(running.child, 'exit')
  running.child.kill('SIGTERM')

  // The listening socket closes while the in-flight request still holds the process open.
  await untilRefused(hostname, Number(port))
  t.pass('a new connection is refused after SIGTERM')
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

t.test('SIGTERM with a drain period: not-ready at once, every request sent during the drain succeeds, the one in flight at its end completes, exit 0', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-drain-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // The client sends as fast as it is answered, past the default quota: the quota is not what is tested here.
  const env = { DATABASE_PATH: join(dir, 'data.sqlite'), SHUTDOWN_DRAIN_MS: '1500', RATE_LIMIT: '1000000/60' }
  const running = await start(env)
  const ops = running.opsOrigin!
  t.equal((await fetch(`${ops}/health/ready`)).status, 200, 'ready before the signal')
  const { port, hostname } = new URL(running.origin)
  const exited = once(running.child, 'exit')

  // A client that keeps sending (reads and creates, on kept-alive connections) through the first
  // second of the drain, as a load balancer does until it sees the node is not ready.
  const failures: string[] = []
  const outcomes: number[] = []
  const client = { sending: true }
  const load = Array.from({ length: 4 }, async (_, w) => {
    for (let n = 0; client.sending; n++) {
      try {
        if (n % 2 === 0) outcomes.push((await fetch(`${running.origin}/books?limit=5`, { headers: { authorization: `Bearer ${adminKey}` } })).status)
        else outcomes.push((await post(running.origin, `drain-${w}-${n}`)).status)
      } catch (error) {
        failures.push(String((error as Error).cause ?? error))
      }
    }
  })
  await until(() => outcomes.length >= 20)
  running.child.kill('SIGTERM')
  const sentBefore = outcomes.length
  let readiness = 200
  while (readiness === 200) readiness = (await fetch(`${ops}/health/ready`)).status
  t.equal(readiness, 503, 'readiness fails once the signal is taken')
  t.equal((await fetch(`${ops}/health/live`)).status, 200, 'while liveness still passes')
  await new Promise(resolve => setTimeout(resolve, 1000))
  client.sending = false
  await Promise.all(load)
  t.ok(outcomes.length > sentBefore, `requests were answered during the drain (${outcomes.length - sentBefore})`)
  t.same(failures, [], 'no request failed')
  t.same([...new Set(outcomes)].sort(), [200, 201], 'every one was answered normally')

  // A request in flight when the drain ends: its headers are read before the listener closes.
  const { slow, body, answered } = await inFlightCreate(hostname, Number(port), 'in flight at the end of the drain')
  await untilRefused(hostname, Number(port))
  slow.end(body)
  const [res] = await answered
  res.resume()
  t.equal(res.statusCode, 201, 'the request in flight at the end of the drain completed')
  t.same(await exited, [0, null], 'and the process exited 0')
})
