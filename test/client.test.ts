// The client SDK (client/src) against the service on a real port: every operation, typed problems, paging and auth.
// test/client-package.test.ts installs the packed package in a project of its own, as a user would.
import { getEventListeners } from 'node:events'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { createClient, type ClientOptions, ProblemError, type StudentReplacement } from '../client/src/index.js'
import { type Config, loadConfig } from '../src/config/index.js'
import { ada, adminKey, dune, eventually } from './helper.js'

async function listen (t: Test, overrides: Partial<Config> = {}): Promise<string> {
  const app = await buildApp(loadConfig({}, { databasePath: ':memory:', logLevel: 'silent', adminApiKey: adminKey, opsPort: 'off', ...overrides }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** A 200 event stream whose body comes in these chunks. */
const streamOf = (chunks: string[]) => new Response(new ReadableStream({
  pull: controller => {
    const chunk = chunks.shift()
    if (chunk === undefined) controller.close()
    else controller.enqueue(new TextEncoder().encode(chunk))
  }
}), { status: 200, headers: { 'content-type': 'text/event-stream' } })

t.test('every operation works through the client on a real socket', async t => {
  const client = createClient({ baseUrl: await listen(t), apiKey: adminKey })

  const created = await client.POST('/books', { body: dune })
  t.equal(created.response.status, 201)
  const book = created.data!
  t.match(book, { title: 'Dune', author: 'Frank Herbert', isbn: '9780441013593', published_year: 1965 })
  t.equal(created.response.headers.get('location'), `/books/${book.book_id}`)

  t.same((await client.GET('/books/{book_id}', { params: { path: { book_id: book.book_id } } })).data, book)
  t.same((await client.GET('/books')).data, { items: [book], next_cursor: null })
  const replaced = await client.PUT('/books/{book_id}', {
    params: { path: { book_id: book.book_id } },
    body: { title: 'Dune Messiah', author: 'Frank Herbert' }
  })
  t.match(replaced.data, { book_id: book.book_id, title: 'Dune Messiah', isbn: null, published_year: null })
  const deleted = await client.DELETE('/books/{book_id}', { params: { path: { book_id: book.book_id } } })
  t.equal(deleted.response.status, 204)
  t.equal(deleted.data, undefined)

  const student = (await client.POST('/api/students', { body: { name: ada.name, email: ada.email } })).data!
  t.match(student, { name: 'Ada Lovelace', email: 'ada@example.org', status: 'active', enrollment_year: null })
  t.same((await client.GET('/api/students/{student_id}', { params: { path: { student_id: student.student_id } } })).data, student)
  t.same((await client.GET('/api/students', { params: { query: { limit: 5 } } })).data, { items: [student], next_cursor: null })
  const graduated = await client.PUT('/api/students/{student_id}', {
    params: { path: { student_id: student.student_id } },
    body: { name: 'Ada Lovelace', email: 'ada@example.org', status: 'graduated' }
  })
  t.equal(graduated.data!.status, 'graduated')

  // Read, change one field, put it back: a Student as read is a StudentReplacement, in types and on the wire.
  const read = await client.GET('/api/students/{student_id}', { params: { path: { student_id: student.student_id } } })
  const back: StudentReplacement = { ...read.data!, status: 'withdrawn' }
  const withdrawn = await client.PUT('/api/students/{student_id}', {
    params: { path: { student_id: student.student_id }, header: { 'If-Match': read.response.headers.get('etag')! } },
    body: back
  })
  t.match(withdrawn.data, { status: 'withdrawn', enrollment_year: null, created_at: student.created_at })
})

t.test('problem answers arrive as typed problem details', async t => {
  const client = createClient({ baseUrl: await listen(t), apiKey: adminKey })
  const missing = await client.GET('/books/{book_id}', { params: { path: { book_id: '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60' } } })
  t.equal(missing.data, undefined)
  t.equal(missing.error!.status, 404)
  t.equal(missing.error!.type, 'about:blank')
  t.equal(missing.response.headers.get('content-type'), 'application/problem+json; charset=utf-8')

  await client.POST('/books', { body: dune })
  const duplicate = await client.POST('/books', { body: dune })
  t.match(duplicate.error, { status: 409, type: '/problems/already-exists' })

  const invalid = await client.POST('/books', { body: { title: '', author: 'X' } })
  t.equal(invalid.error!.status, 400)
  t.match(invalid.error!.errors, [{ pointer: '#/title' }])
})

t.test('all() yields every record across pages, in creation order', async t => {
  const client = createClient({ baseUrl: await listen(t), apiKey: adminKey })
  const titles = Array.from({ length: 7 }, (_, i) => `Book ${i}`)
  for (const title of titles) await client.POST('/books', { body: { title, author: 'A' } })
  for (let i = 0; i < 3; i++) await client.POST('/api/students', { body: { name: `S${i}`, email: `s${i}@example.org` } })

  const seen: string[] = []
  for await (const book of client.all('/books', { limit: 3 })) seen.push(book.title)
  t.same(seen, titles, 'three pages of 3, 3 and 1')

  const students: string[] = []
  for await (const student of client.all('/api/students')) students.push(student.email)
  t.same(students, ['s0@example.org', 's1@example.org', 's2@example.org'])

  const empty = createClient({ baseUrl: await listen(t), apiKey: adminKey })
  for await (const book of empty.all('/books')) t.fail(`unexpected ${book.title}`)
})

t.test('all() iterates a filtered, sorted or searched query to its end', async t => {
  const client = createClient({ baseUrl: await listen(t), apiKey: adminKey })
  const books = [['Dune', 'Frank Herbert', 1965], ['Emma', 'Jane Austen', 1815], ['Dune Messiah', 'Frank Herbert', 1969], ['Persuasion', 'Jane Austen', 1817], ['Children of Dune', 'Frank Herbert', 1976]] as const
  for (const [title, author, year] of books) await client.POST('/books', { body: { title, author, published_year: year } })
  const titles = async (query: Parameters<typeof client.all<'/books'>>[1]) => {
    const seen: string[] = []
    for await (const book of client.all('/books', query)) seen.push(book.title)
    return seen
  }
  t.same(await titles({ author: ['frank herbert'], sort: '-published_year', limit: 1 }), ['Children of Dune', 'Dune Messiah', 'Dune'], 'one page a book, every page with the filter and sort')
  t.same(await titles({ sort: 'title', limit: 2 }), ['Children of Dune', 'Dune', 'Dune Messiah', 'Emma', 'Persuasion'])
  t.same((await titles({ q: 'dune', limit: 1 })).sort(), ['Children of Dune', 'Dune', 'Dune Messiah'], 'a search, by relevance')
  t.same(await titles({ author: ['Jane Austen', 'Frank Herbert'], published_year_max: 1900 }), ['Emma', 'Persuasion'])
})

t.test('all() throws the problem of a refused page', async t => {
  const client = createClient({ baseUrl: await listen(t), apiKey: adminKey })
  const pages = client.all('/books', { limit: 101 })
  const error = await pages.next().then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof ProblemError, 'a ProblemError')
  t.equal((error as ProblemError).problem.status, 400)
  t.equal((error as ProblemError).problem.errors?.[0]?.parameter, 'limit')
  t.match((error as Error).message, /^400 Request validation failed: /)
  // A problem from a proxy or gateway may carry no detail; the message still says what it is.
  t.equal(new ProblemError({ type: 'about:blank', title: 'Bad Gateway', status: 502 }).message, '502 Bad Gateway: about:blank')
})

t.test('apiKey and headers options go on every request', async t => {
  const baseUrl = await listen(t)
  const sent: Headers[] = []
  const options: ClientOptions = {
    baseUrl,
    apiKey: adminKey,
    headers: { 'x-request-id': 'sdk-test' },
    fetch: request => {
      sent.push(request.headers)
      return fetch(request)
    }
  }
  const client = createClient(options)
  const res = await client.GET('/books')
  await client.POST('/books', { body: dune })
  t.equal(res.response.headers.get('x-request-id'), 'sdk-test')
  t.same(sent.map(h => h.get('authorization')), [`Bearer ${adminKey}`, `Bearer ${adminKey}`])

  const anonymous: Headers[] = []
  const write = await createClient({ baseUrl, fetch: r => { anonymous.push(r.headers); return fetch(r) } }).POST('/books', { body: dune })
  t.equal(anonymous[0]!.get('authorization'), null, 'no Authorization header without an apiKey')
  t.equal(write.error?.status, 401, 'an anonymous write is refused, as a typed problem')
})

t.test('follow() yields every event live, reconnects from the last id when the stream ends or breaks, and stops on abort', async t => {
  // Streams end every 300 ms here, so the client reconnects several times while books are written.
  const baseUrl = await listen(t, { eventStreamMaxAge: 300, eventStreamHeartbeat: 100 })
  let connections = 0
  let failNext = true
  const client = createClient({
    baseUrl: `${baseUrl}/`,
    apiKey: adminKey,
    fetch: async request => {
      if (!request.url.includes('/events/stream')) return fetch(request)
      connections++
      // One connection that fails outright, as when a node goes away: the client waits and tries again.
      if (connections === 2 && failNext) {
        failNext = false
        throw new TypeError('fetch failed')
      }
      return fetch(request)
    }
  })
  const first = (await client.POST('/books', { body: { title: 'Before', author: 'A' } })).data!
  // Taken once the first event is readable (on PostgreSQL, once older transactions on the server have ended).
  const page = await eventually(async () => (await client.GET('/events')).data!, page => page.items.length > 0, 'the first event readable')
  const start = page.items[0]!.id
  const controller = new AbortController()
  const seen: string[] = []
  const following = (async () => {
    for await (const event of client.follow({ after: start, types: ['book.created', 'book.replaced'], signal: controller.signal })) {
      seen.push(event.type === 'book.replaced' ? `replaced ${(event.data.object as { title: string }).title}` : (event.data.object as { title: string }).title)
      if (seen.length === 5) controller.abort()
    }
  })()
  t.ok(first.book_id)
  for (const title of ['One', 'Two', 'Three']) {
    await client.POST('/books', { body: { title, author: 'A' } })
    await new Promise(resolve => setTimeout(resolve, 400))
  }
  const three = (await client.GET('/books', { params: { query: { q: 'three' } } })).data!.items[0]!
  await client.PUT('/books/{book_id}', { params: { path: { book_id: three.book_id } }, body: { title: 'Three', author: 'B' } })
  await client.POST('/api/students', { body: { name: 'Left out', email: 'out@example.org' } })
  await client.POST('/books', { body: { title: 'Four', author: 'A' } })
  await following
  t.same(seen, ['One', 'Two', 'Three', 'replaced Three', 'Four'], 'every event after the start, once, in order, across reconnections')
  t.ok(connections >= 3, `reconnected (${connections} connections)`)
})

t.test('follow() throws the problem of a refused stream (a 410 means re-list)', async t => {
  const client = createClient({ baseUrl: await listen(t), apiKey: adminKey })
  await t.rejects(async () => {
    for await (const event of client.follow({ after: '00000000ff-1' })) t.fail(`no event expected: ${event.id}`)
  }, { name: 'ProblemError', problem: { status: 410, type: '/problems/cursor-expired' } })
  const aborted = new AbortController()
  aborted.abort()
  for await (const event of client.follow({ signal: aborted.signal })) t.fail(`no event expected: ${event.id}`)
  t.pass('an aborted follow() yields nothing')
})

t.test('follow() waits out a 5xx (after its Retry-After, or the stream\'s retry) and resumes from the last id', async t => {
  const controller = new AbortController()
  const event = (id: string) => `id: ${id}\ndata: {"id":"${id}","type":"book.created"}\n\n`
  const problem = (status: number) => JSON.stringify({ type: 'about:blank', title: 'Server trouble', status })
  // What a load balancer and the service answer while nodes restart and a database comes back, in turn.
  const answers = [
    () => new Response('<html>502 Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html', 'retry-after': '0' } }),
    () => new Response(`retry: 10\n\n${event('a-1')}`, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    () => new Response(problem(500), { status: 500, headers: { 'content-type': 'application/problem+json' } }),
    () => new Response(problem(503), { status: 503, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } }),
    () => new Response(event('a-2'), { status: 200, headers: { 'content-type': 'text/event-stream' } })
  ]
  const sent: string[] = []
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: async request => {
      sent.push(request.headers.get('last-event-id') ?? 'none')
      return answers[sent.length - 1]!()
    }
  })
  const ids: string[] = []
  for await (const { id } of client.follow({ signal: controller.signal })) {
    ids.push(id)
    if (ids.length === 2) controller.abort()
  }
  t.same(ids, ['a-1', 'a-2'], 'every event, once, across the failures')
  t.same(sent, ['none', 'none', 'a-1', 'a-1', 'a-1'], 'each reconnection resumes from the last id received')
})

t.test('follow() leaves no listener on the caller\'s signal behind, however often it reconnects', async t => {
  const controller = new AbortController()
  const listening: number[] = []
  let n = 0
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: async () => {
      listening.push(getEventListeners(controller.signal, 'abort').length)
      n++
      return streamOf([`retry: 0\n\nid: e-${n}\ndata: {"id":"e-${n}"}\n\n`])
    }
  })
  let events = 0
  for await (const event of client.follow({ signal: controller.signal })) {
    if (++events === 50) controller.abort()
    t.equal(event.id, `e-${events}`)
  }
  t.equal(n, 50, 'a connection per event, each stream ending after one')
  t.ok(Math.max(...listening) <= 1, `listeners on the signal at each connection: at most ${Math.max(...listening)}`)
})

t.test('follow() throws a refusal whose body is no problem document as about:blank with its status', async t => {
  for (const [response, title] of [
    [new Response('<html>Not Found</html>', { status: 404, statusText: 'Not Found', headers: { 'content-type': 'text/html' } }), 'Not Found'],
    [new Response('{"error":"unauthorized"}', { status: 401, headers: { 'content-type': 'application/json' } }), 'HTTP 401']
  ] as const) {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', fetch: async () => response })
    await t.rejects(async () => {
      for await (const event of client.follow()) t.fail(`no event expected: ${event.id}`)
    }, { name: 'ProblemError', problem: { type: 'about:blank', title, status: response.status } }, `a ${response.status} from a proxy`)
  }
})

t.test('follow() reads frames as the HTML standard parses them: any line ending, bare fields, several data lines, comments', async t => {
  const controller = new AbortController()
  const stream = 'retry: soon\r\n: a comment\r\nid: a-1\r\ndata: {"id":"a-1",\r\ndata: "type":"book.created"}\r\n\r\nid\rdata:{"id":"a-2","type":"book.deleted"}\r\r'
  const sent: string[] = []
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: async request => {
      sent.push(request.headers.get('last-event-id') ?? 'none')
      return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } })
    }
  })
  const events: unknown[] = []
  for await (const event of client.follow({ signal: controller.signal })) {
    events.push(event)
    if (events.length === 2) controller.abort()
  }
  t.same(events, [{ id: 'a-1', type: 'book.created' }, { id: 'a-2', type: 'book.deleted' }], 'CRLF and CR end lines; data lines join with a line feed')
  t.same(sent, ['none'], 'one connection, from now')

  // The same text cut into chunks at every place, a CRLF's two halves included: still the same two events.
  const text = stream + 'id: a-3\r\ndata: {"id":"a-3"}\r\n\r'
  for (let cut = 1; cut < text.length; cut++) {
    const chunks = [text.slice(0, cut), text.slice(cut)]
    const stop = new AbortController()
    const split = createClient({
      baseUrl: 'http://127.0.0.1:9',
      // One connection: a second one means the first broke.
      fetch: async () => {
        if (chunks.length < 2) stop.abort()
        return streamOf(chunks)
      }
    })
    const ids: string[] = []
    for await (const event of split.follow({ signal: stop.signal })) {
      ids.push(event.id)
      if (ids.length === 3) stop.abort()
    }
    if (JSON.stringify(ids) !== '["a-1","a-2","a-3"]') t.fail(`cut at ${cut} (${JSON.stringify([text.slice(0, cut), text.slice(cut)])}): ${JSON.stringify(ids)}`)
  }
  t.pass('a chunk boundary anywhere, inside a CRLF too, changes no event; a last CR ends its line')

  // An abort that comes while connecting ends the iteration, with nothing yielded and nothing thrown.
  const aborting = new AbortController()
  const quiet = createClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: async () => {
      aborting.abort()
      throw new DOMException('aborted', 'AbortError')
    }
  })
  for await (const event of quiet.follow({ signal: aborting.signal })) t.fail(`no event expected: ${event.id}`)
  t.pass('an abort while connecting ends follow()')
})
