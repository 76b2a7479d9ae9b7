// Requests no operation takes (404, 405, OPTIONS, the docs, the ops paths) are answered without their body being read or parsed.
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { adminKey, build, dune } from './helper.js'

const someId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'
// The research note's body: parsed and checked as main did, 75 s of event loop or more.
const hostile = '['.repeat(20_000) + Array(2500).fill('"\\ud800"').join(',') + ']'.repeat(20_000)
const notJson = '{"title": tru'
const json = { 'content-type': 'application/json' }

/** What no route parses: status, and the detail the answer gives. */
const unrouted = [
  { method: 'POST', url: '/nope', status: 404 },
  { method: 'PUT', url: '/nope/deeper?x=1', status: 404 },
  { method: 'POST', url: `/books/${someId}`, status: 405 },
  { method: 'PATCH', url: '/books', status: 405 },
  { method: 'OPTIONS', url: '/books', status: 405 },
  { method: 'OPTIONS', url: '*', status: 404 },
  { method: 'DELETE', url: '/api/students', status: 405 },
  { method: 'POST', url: '/docs', status: 404 },
  { method: 'POST', url: '/docs/json', status: 404 },
  { method: 'PUT', url: '/docs/yaml', status: 404 },
  { method: 'DELETE', url: '/docs/static/index.html', status: 404 },
  { method: 'POST', url: '/', status: 404 },
  { method: 'POST', url: '/problems/validation-error', status: 404 },
  { method: 'POST', url: '/metrics', status: 404 },
  { method: 'POST', url: '/health/ready', status: 404 }
] as const

t.test('a hostile or malformed JSON body sent where no operation is gets the 404 or 405, and is never parsed, with a key or without', async t => {
  let parsed = 0
  const { app } = await build(t, { opsPort: 'public', metricsToken: 'metrics-token-secret-0123456789', rateLimitAnonymous: { requests: 1e6, seconds: 60 } }, { jsonBodyMeter: () => { parsed++ } })
  for (const { method, url, status } of unrouted) {
    for (const payload of [hostile, notJson]) {
      for (const headers of [json, { ...json, authorization: `Bearer ${adminKey}` }]) {
        const res = await app.inject({ method, url, headers, payload })
        t.equal(res.statusCode, status, `${method} ${url}`)
        t.match(res.json(), { status, detail: /Nothing is served at|is not allowed here/ })
        if (status === 405) t.ok(res.headers['allow'], 'with Allow')
      }
    }
  }
  t.equal(parsed, 0, 'no body was parsed')

  const docs = await app.inject({ method: 'GET', url: '/docs/json', headers: json, payload: hostile })
  t.equal(docs.statusCode, 200, 'a read of the docs with a body is served, the body ignored')
  t.equal(parsed, 0)
  // The meter does count: the same bodies sent to an operation are read.
  const refused = await app.inject({ method: 'POST', url: '/books', headers: { ...json, authorization: `Bearer ${adminKey}` }, payload: hostile })
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { errors: [{ detail: /nested more than 64 deep/ }] })
  t.ok(parsed > 0, 'a body sent to an operation is parsed')
  const anonymous = await app.inject({ method: 'POST', url: '/books', headers: json, payload: hostile })
  t.equal(anonymous.statusCode, 401, 'an anonymous write is refused before its body is read')
})

t.test('a body sent to an import in a type it does not take is a 415 before it is parsed', async t => {
  let parsed = 0
  const { request } = await build(t, {}, { jsonBodyMeter: () => { parsed++ } })
  for (const payload of [hostile, notJson, JSON.stringify(dune)]) {
    const res = await request({ method: 'POST', url: '/imports?collection=books', headers: json, payload })
    t.equal(res.statusCode, 415)
    t.match(res.json(), { detail: 'The request body must be text/csv or application/x-ndjson' })
  }
  t.equal(parsed, 0)
})

t.test('POST /nope with a large body: the 404 comes before the body is sent, and the connection closes once the body is dropped', async t => {
  const { app } = await build(t, { headersTimeout: 5000, requestTimeout: 30_000 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  let received = ''
  const closed = new Promise<void>(resolve => socket.once('close', () => resolve()))
  const answered = new Promise<void>(resolve => socket.on('data', chunk => {
    received += chunk.toString('latin1')
    if (received.includes('\r\n\r\n')) resolve()
  }))
  socket.write(`POST /nope HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(hostile)}\r\n\r\n`)
  await answered
  t.match(received, /^HTTP\/1\.1 404 /, 'answered with the body still unsent')
  t.match(received, /\r\nconnection: close\r\n/i)
  socket.write(hostile)
  await closed
  t.pass('the body was read to its end and dropped, then the connection closed')
})
