// The live event stream: frames, replay and resume, heartbeats and bookmarks, revocation, limits, stalls, shutdown.
import type { AddressInfo } from 'node:net'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { createKey, type Scope } from '../src/access/api-keys.js'
import type { Config } from '../src/config/index.js'
import { readScan as postgresReadScan } from '../src/storage/postgres/events.js'
import { scanLimit as sqliteScanLimit } from '../src/storage/sqlite/events.js'
import { adminKey, ada, build, dune, eventually, openTestRepositories, tempDatabase, testEngine, testStorage } from './helper.js'
import { settled } from './feed-contract.js'
import { eventsOf, openStream } from './sse.js'

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** A listening app on the test engine, with a way to write through it and to make keys. */
async function streamingApp (t: Test, overrides: Partial<Config> = {}) {
  const repositories = await openTestRepositories(t)
  const api = await build(t, { eventStreamHeartbeat: 200, eventsPoll: 50, ...overrides }, { repositories })
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`
  let n = 0
  return {
    ...api,
    repositories,
    origin,
    key: async (...scopes: Scope[]) => (await createKey(repositories.apiKeys, 'stream test', scopes)).key,
    stream: (query = '', headers: Record<string, string> = {}, key = adminKey, keepData = true) => openStream(`${origin}/events/stream${query}`, { ...bearer(key), ...headers }, { keepData }),
    createBook: async (title = `Book ${++n}`) => (await api.app.inject({ method: 'POST', url: '/books', headers: bearer(adminKey), payload: { ...dune, isbn: null, title } })).json(),
    createStudent: async () => (await api.app.inject({ method: 'POST', url: '/api/students', headers: bearer(adminKey), payload: { ...ada, email: `s${++n}@example.org` } })).json()
  }
}

t.test('frames: retry first, then one frame per event with its id, type and one data line; the headers a proxy needs', async t => {
  const api = await streamingApp(t)
  const stream = await api.stream()
  t.teardown(() => stream.close())
  t.equal(stream.status, 200)
  t.match(stream.headers, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', 'x-request-id': /./, ratelimit: /./ })
  await stream.waitFor(frames => frames.length > 0)
  t.equal(stream.frames[0]!.retry, 3000, 'the first frame sets the reconnection time')
  // A title that would end a frame and forge an id if it were written raw.
  const book = await api.createBook('Dune\n\nid: 9\ndata: forged\r\n\r\n')
  const [event] = eventsOf(await stream.waitFor(frames => eventsOf(frames).length === 1))
  t.equal(event!.event, 'book.created')
  const data = JSON.parse(event!.data!)
  t.equal(data.id, event!.id, 'the frame id is the event id')
  t.same(data.data.object, book, 'the record, title and all, arrives intact in one event')
  t.equal(stream.lastEventId(), data.id)
})

t.test('replay from after or Last-Event-ID (which wins), then live; without either, from now', async t => {
  const api = await streamingApp(t)
  const start = await api.repositories.events.head()
  await api.createBook()
  await api.createBook()
  await settled(api.repositories.events, start, 2)
  const page = (await api.app.inject({ url: '/events', headers: bearer(adminKey) })).json()
  const [first, second] = page.items
  const fromFirst = await api.stream(`?after=${first.id}`)
  t.teardown(() => fromFirst.close())
  t.same(eventsOf(await fromFirst.waitFor(f => eventsOf(f).length === 1)).map(f => f.id), [second.id])
  const byHeader = await api.stream(`?after=${first.id}`, { 'last-event-id': second.id })
  t.teardown(() => byHeader.close())
  const fromNow = await api.stream()
  t.teardown(() => fromNow.close())
  await fromNow.waitFor(f => f.length > 0)
  const third = await api.createStudent()
  for (const [name, stream, count] of [['after', fromFirst, 2], ['Last-Event-ID', byHeader, 1], ['now', fromNow, 1]] as const) {
    const events = eventsOf(await stream.waitFor(f => eventsOf(f).length === count))
    t.equal(JSON.parse(events.at(-1)!.data!).data.id, third.student_id, `${name}: the live event follows the replay`)
    t.equal(events.length, count, `${name}: nothing replayed twice`)
  }
})

t.test('refusals come before the stream, as problems: 400, 410, 406, 403, 429', async t => {
  const api = await streamingApp(t, { eventStreamsPerKey: 2 })
  const bad = await api.stream('', { 'last-event-id': 'nodash' })
  t.equal(bad.status, 400)
  t.match(JSON.parse(await bad.body()), { type: '/problems/validation-error', errors: [{ parameter: 'Last-Event-ID' }] })
  const gone = await api.stream('?after=00000000ff-1')
  t.equal(gone.status, 410)
  t.match(JSON.parse(await gone.body()), { type: '/problems/cursor-expired' })
  const json = await api.stream('', { accept: 'application/json' })
  t.equal(json.status, 406)
  const studentsOnly = await api.key('students:read')
  const forbidden = await api.stream('?types=book.created', {}, studentsOnly)
  t.equal(forbidden.status, 403)

  const key = await api.key('books:read')
  const one = await api.stream('', {}, key)
  const two = await api.stream('', {}, key)
  const three = await api.stream('', {}, key)
  t.equal(three.status, 429)
  t.equal(three.headers['retry-after'], '10')
  t.match(JSON.parse(await three.body()), { type: '/problems/too-many-streams', status: 429 })
  t.equal((await api.stream('')).status, 200, 'another key has streams of its own')
  one.close()
  await one.ended
  await sleep(50)
  const again = await api.stream('', {}, key)
  t.equal(again.status, 200, 'a closed stream frees its place')
  for (const s of [two, again]) s.close()
})

t.test('HEAD of the stream answers headers and holds no stream', async t => {
  const api = await streamingApp(t, { eventStreamsPerKey: 1 })
  const key = await api.key('books:read')
  for (let i = 0; i < 3; i++) {
    const head = await fetch(`${api.origin}/events/stream`, { method: 'HEAD', headers: bearer(key) })
    t.equal(head.status, 200)
  }
  await sleep(50)
  const stream = await api.stream('', {}, key)
  t.equal(stream.status, 200, 'the key still has its one stream to open')
  stream.close()
})

t.test('heartbeats; a bookmark moves past what the stream leaves out; a revocation the node never hears of still cuts the key off within a heartbeat', async t => {
  const api = await streamingApp(t)
  // As when a notification is lost: the heartbeat's check of the key is what ends the stream.
  api.repositories.apiKeys.onRevoked = () => () => {}
  const created = await createKey(api.repositories.apiKeys, 'books reader', ['books:read'])
  const stream = await api.stream('', {}, created.key)
  await api.createStudent()
  await api.createStudent()
  // The head once both are readable (on PostgreSQL, once older transactions on the server have ended).
  const page = await eventually(async () => (await api.app.inject({ url: '/events', headers: bearer(adminKey) })).json(), page => page.items.length === 2, 'both events readable')
  const frames = await stream.waitFor(f => f.some(frame => frame.comment) && stream.lastEventId() === page.next_cursor)
  t.equal(eventsOf(frames).length, 0, 'no student event reaches a books-only key')
  t.pass('the bookmark is the head: a reconnection scans nothing again')
  await api.repositories.apiKeys.revoke(created.key_id)
  const started = Date.now()
  t.equal(await stream.ended, 'end', 'the revoked key\'s stream ends cleanly')
  // Heartbeats come every 200 ms and the stream would otherwise live an hour; the bound leaves room for a loaded machine.
  t.ok(Date.now() - started < 5000, `within a heartbeat or so (${Date.now() - started} ms)`)
})

t.test('a revoked key\'s streams end once the revocation reaches the node, long before a heartbeat: revoked by this process or another', async t => {
  const storage = testEngine === 'postgres' ? await testStorage(t) : { databasePath: tempDatabase(t) }
  const node = await openTestRepositories(t, storage)
  // Another process's connection to the same database, as `npm run keys` opens one.
  const elsewhere = await openTestRepositories(t, storage)
  const heartbeat = 600_000
  const api = await build(t, { ...storage, eventStreamHeartbeat: heartbeat }, { repositories: node })
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/events/stream`
  const open = async (name: string) => {
    const created = await createKey(node.apiKeys, name, ['books:read'])
    const stream = await openStream(url, bearer(created.key))
    t.teardown(() => stream.close())
    await stream.waitFor(frames => frames.length > 0)
    return { keyId: created.key_id, stream }
  }
  const here = await open('revoked by this process')
  const there = await open('revoked by another')
  const kept = await open('kept')
  const started = Date.now()
  await node.apiKeys.revoke(here.keyId)
  t.equal(await here.stream.ended, 'end', 'a revocation by this process ends the key\'s stream')
  await elsewhere.apiKeys.revoke(there.keyId)
  t.equal(await there.stream.ended, 'end', 'and one by another process, once it reaches this one')
  const elapsed = Date.now() - started
  t.ok(elapsed < heartbeat / 20, `long before a heartbeat (${elapsed} ms of ${heartbeat})`)
  await api.app.inject({ method: 'POST', url: '/books', headers: bearer(adminKey), payload: dune })
  t.equal(eventsOf(await kept.stream.waitFor(frames => eventsOf(frames).length === 1)).length, 1, 'another key\'s stream goes on')
  await elsewhere.apiKeys.revoke(kept.keyId)
  t.equal(await kept.stream.ended, 'end', 'the last stream ends too, and with it the watch')
})

t.test('a stream ends at its maximum age, and its client resumes without loss', async t => {
  const api = await streamingApp(t, { eventStreamMaxAge: 300 })
  const start = await api.repositories.events.head()
  const stream = await api.stream()
  await api.createBook()
  t.equal(await stream.ended, 'end', 'the stream ends at its maximum age')
  const received = eventsOf(stream.frames).map(f => f.id)
  await api.createBook()
  // Every stream lives 300 ms, and on PostgreSQL older transactions on the server can hold events back for
  // longer: the client reconnects with its last id until it has both, as a client would.
  let last = stream.lastEventId() ?? start
  let reconnections = 0
  await eventually(async () => {
    const resumed = await api.stream('', { 'last-event-id': last })
    t.teardown(() => resumed.close())
    t.equal(await resumed.ended, 'end')
    received.push(...eventsOf(resumed.frames).map(f => f.id))
    last = resumed.lastEventId() ?? last
    reconnections++
    return received.length
  }, count => count >= 2, 'both events, across reconnections')
  const feed = (await api.app.inject({ url: `/events?after=${start}`, headers: bearer(adminKey) })).json()
  t.same(received, feed.items.map((e: { id: string }) => e.id), `every event once, in order, after ${reconnections} reconnection(s)`)
})

t.test('shutdown ends open streams at once, cleanly', async t => {
  const api = await streamingApp(t)
  const streams = await Promise.all([api.stream(), api.stream(), api.stream()])
  await Promise.all(streams.map(s => s.waitFor(f => f.length > 0)))
  const started = Date.now()
  await api.app.close()
  // Without ending them, close() would wait for streams that live an hour; the bound leaves room for a loaded machine.
  t.ok(Date.now() - started < 5000, `closed in ${Date.now() - started} ms`)
  t.same(await Promise.all(streams.map(s => s.ended)), ['end', 'end', 'end'])
})

t.test('a stream whose types leave out a long run of events finds the one after it without waiting for a write', async t => {
  // Heartbeats far apart: each also lets the stream read again, which would hide a stream waiting for news it need not.
  const api = await streamingApp(t, { eventStreamHeartbeat: 60_000 })
  const start = await api.repositories.events.head()
  // Several times what one read of either engine scans: each read ends empty-handed before the head.
  const leftOut = 3 * Math.max(sqliteScanLimit, postgresReadScan) + 1
  for (let i = 0; i < leftOut; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, leftOut - i) }, (_, j) => api.repositories.books.create({ ...dune, isbn: null, title: `Left out ${i + j}` })))
  }
  const student = await api.createStudent()
  await settled(api.repositories.events, start, leftOut + 1)
  const stream = await api.stream(`?after=${start}&types=student.created`)
  t.teardown(() => stream.close())
  const [event] = eventsOf(await stream.waitFor(f => eventsOf(f).length === 1, 10_000))
  t.equal(JSON.parse(event!.data!).data.id, student.student_id, 'the student\'s event arrives, with nothing written after it')
})

t.test('a stalled consumer cannot slow the others: they get everything, it is cut off, then resumes without loss', async t => {
  // No record cache: the heap then holds what the streams hold, which is what is measured.
  const api = await streamingApp(t, { eventStreamStall: 300, eventStreamHeartbeat: 60_000, recordCacheSize: 0 })
  const repositories = api.repositories
  const stalled = await api.stream('', {}, adminKey, false)
  const reader = await api.stream('', {}, adminKey, false)
  await Promise.all([stalled, reader].map(s => s.waitFor(f => f.length > 0)))
  stalled.pause()
  v8.setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  const total = 20_000
  // Long titles (the contract allows 500 characters): some 20 MB of frames, more than the kernel's
  // socket buffers hold for a client that stopped reading, so the server itself must hold the rest back.
  const title = (i: number) => `Stall ${i} ${'x'.repeat(480)}`
  // Written straight to storage, in batches as the service's group commit would: the test is about the stream.
  for (let i = 0; i < total; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => repositories.books.create({ ...dune, isbn: null, title: title(i + j) })))
  }
  const received = eventsOf(await reader.waitFor(f => eventsOf(f).length === total, 60_000))
  t.equal(new Set(received.map(f => f.id)).size, total, 'the reading stream got every event, once')
  // Back to reading, the stalled client finds what its socket held, then the server's cut.
  stalled.resume()
  t.equal(await stalled.ended, 'error', 'the stalled stream was cut off')
  t.ok(eventsOf(stalled.frames).length < total, `it had ${eventsOf(stalled.frames).length} events when it was cut off`)
  gc()
  const heapGrowth = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024
  t.ok(heapGrowth < 50, `memory stays bounded (heap grew ${heapGrowth.toFixed(1)} MB while ${total} events were written)`)

  const resumed = await api.stream('', { 'last-event-id': stalled.lastEventId() ?? (await api.repositories.events.oldest()) })
  t.teardown(() => resumed.close())
  const rest = eventsOf(await resumed.waitFor(f => eventsOf(f).length === total - eventsOf(stalled.frames).length, 60_000))
  t.same([...eventsOf(stalled.frames), ...rest].map(f => f.id), received.map(f => f.id), 'what it had plus what it resumed with is every event, in order')
  const scraped = await api.app.operations.metrics!.registry.metrics()
  t.match(scraped, /bsa_event_streams_ended_total\{reason="stalled"\} 1/, 'the cut is counted, by its reason')
  t.match(scraped, /bsa_event_streams_open 2/, 'and the streams open are too (the reader and the resumed one)')
})

t.test('a feed that fails ends its streams (logged, without details to the client), which resume once it is back', async t => {
  const lines: string[] = []
  const repositories = await openTestRepositories(t)
  const api = await build(t, { eventStreamHeartbeat: 100, eventsPoll: 20, logLevel: 'error' }, { repositories, logStream: { write: line => { lines.push(line) } } })
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/events/stream`
  const { read, head } = repositories.events
  const readFails = await openStream(url, bearer(adminKey))
  await readFails.waitFor(f => f.length > 0)
  repositories.events.head = async () => { throw new Error('the database went away') }
  repositories.events.read = async () => { throw new Error('the database went away') }
  t.equal(await readFails.ended, 'end', 'a failed read (woken by a failed look at the head) ends the stream cleanly')
  t.match(lines.join(''), /event stream read failed/)
  repositories.events.read = read
  repositories.events.head = head

  const { find } = repositories.apiKeys
  const created = await createKey(repositories.apiKeys, 'checked', ['books:read'])
  const checked = await openStream(url, bearer(created.key))
  await checked.waitFor(f => f.length > 0)
  repositories.apiKeys.find = async () => { throw new Error('the database went away') }
  t.equal(await checked.ended, 'end', 'a key that cannot be checked at a heartbeat ends its stream')
  repositories.apiKeys.find = find
})

t.test('a client that leaves while its stream is reading frees its place, and nothing is written after', async t => {
  const repositories = await openTestRepositories(t)
  const api = await build(t, { eventStreamsPerKey: 1 }, { repositories })
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/events/stream`
  const { read } = repositories.events
  let reading: () => void = () => {}
  const started = new Promise<void>(resolve => { reading = resolve })
  // Reads take their time, as over a slow network to the database.
  repositories.events.read = async (...args) => {
    reading()
    await sleep(200)
    return read.apply(repositories.events, args)
  }
  const stream = await openStream(url, bearer(adminKey))
  await started
  stream.close()
  await sleep(300)
  repositories.events.read = read
  const again = await openStream(url, bearer(adminKey))
  t.equal(again.status, 200, 'the key\'s one stream is free again')
  again.close()
})
