// The change feed over HTTP: one event per accepted write and none for a refused one, pages, filters, scopes, 410.
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { createKey, type Scope } from '../src/access/api-keys.js'
import pino from 'pino'
import { keepEvents } from '../src/events/retention.js'
import { ada, adminKey, build, dune, eventually, openTestRepositories } from './helper.js'
import { settled } from './feed-contract.js'

interface FeedEvent {
  id: string
  specversion: string
  source: string
  type: string
  subject: string
  time: string
  datacontenttype: string
  data: { id: string, revision: number, object: Record<string, unknown> | null }
}

/** An app on its own storage, so the test can also reach the repositories (keys, pruning). */
async function feedApp (t: Test, overrides = {}) {
  const repositories = await openTestRepositories(t)
  const api = await build(t, overrides, { repositories })
  const key = async (...scopes: Scope[]) => (await createKey(repositories.apiKeys, 'feed test', scopes)).key
  return { ...api, repositories, key }
}

type Api = Awaited<ReturnType<typeof feedApp>>

/** Every event the key may see, page after page, from the oldest kept. */
async function allEvents (api: Api, query = '', key = adminKey): Promise<FeedEvent[]> {
  const events: FeedEvent[] = []
  let after: string | null = null
  for (;;) {
    const res = await api.request({ url: `/events?limit=7${query}${after === null ? '' : `&after=${after}`}`, key })
    const page = res.json() as { items: FeedEvent[], next_cursor: string }
    events.push(...page.items)
    if (page.next_cursor === after) return events
    after = page.next_cursor
  }
}

/** Waits until the feed shows `count` events (on PostgreSQL, see eventually()). */
async function visible (api: Api, count: number): Promise<void> {
  await eventually(async () => await allEvents(api), events => events.length >= count, `the feed showing ${count} events`)
}

const revisionOf = (etag: string) => Number(/^"(\d+)-/.exec(etag)![1])

t.test('each accepted write is one event with its revision and record; a refused write or a replay is none', async t => {
  const api = await feedApp(t)
  // What the feed must hold: each accepted write, in order.
  const expected: { type: string, id: string, revision: number, object: unknown }[] = []
  const books: { id: string, etag: string }[] = []
  const students: { id: string, etag: string }[] = []
  const action = fc.oneof(
    fc.record({ kind: fc.constant('create-book'), isbn: fc.boolean(), bad: fc.boolean(), key: fc.option(fc.constantFrom('k1', 'k2'), { nil: undefined }) }),
    fc.record({ kind: fc.constant('create-student'), email: fc.constantFrom('a@example.org', 'b@example.org', 'c@example.org') }),
    fc.record({ kind: fc.constant('replace-book'), pick: fc.nat(), stale: fc.boolean() }),
    fc.record({ kind: fc.constant('replace-student'), pick: fc.nat(), stale: fc.boolean() }),
    fc.record({ kind: fc.constant('delete-book'), pick: fc.nat(), stale: fc.boolean() }),
    fc.record({ kind: fc.constant('missing'), book: fc.boolean() })
  )
  let n = 0
  await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 12 }), async actions => {
    for (const a of actions) {
      n++
      if (a.kind === 'create-book') {
        const payload = a.bad ? { title: '' } : { ...dune, title: `Book ${n}`, isbn: a.isbn ? dune.isbn : null }
        const headers = a.key === undefined ? {} : { 'idempotency-key': `${a.key}-${a.bad}-${a.isbn}` }
        const res = await api.request({ method: 'POST', url: '/books', payload, headers })
        if (res.statusCode === 201 && res.headers['idempotent-replayed'] === undefined) {
          expected.push({ type: 'book.created', id: res.json().book_id, revision: 1, object: res.json() })
          books.push({ id: res.json().book_id, etag: String(res.headers.etag) })
        }
      } else if (a.kind === 'create-student') {
        const res = await api.request({ method: 'POST', url: '/api/students', payload: { ...ada, email: a.email } })
        if (res.statusCode === 201) {
          expected.push({ type: 'student.created', id: res.json().student_id, revision: 1, object: res.json() })
          students.push({ id: res.json().student_id, etag: String(res.headers.etag) })
        }
      } else if (a.kind === 'replace-book' || a.kind === 'replace-student' || a.kind === 'delete-book') {
        const pool = a.kind === 'replace-student' ? students : books
        if (pool.length === 0) continue
        const target = pool[a.pick % pool.length]!
        const url = a.kind === 'replace-student' ? `/api/students/${target.id}` : `/books/${target.id}`
        const ifMatch = a.stale ? '"999-000000000000"' : target.etag
        const method = a.kind === 'delete-book' ? 'DELETE' : 'PUT'
        const payload = a.kind === 'replace-student' ? { ...ada, email: `s${n}@example.org` } : a.kind === 'replace-book' ? { ...dune, isbn: null, title: `Again ${n}` } : undefined
        const res = await api.request({ method, url, payload, headers: { 'if-match': ifMatch } })
        if (res.statusCode === 200) {
          expected.push({ type: a.kind === 'replace-student' ? 'student.replaced' : 'book.replaced', id: target.id, revision: revisionOf(String(res.headers.etag)), object: res.json() })
          target.etag = String(res.headers.etag)
        } else if (res.statusCode === 204) {
          expected.push({ type: 'book.deleted', id: target.id, revision: revisionOf(target.etag) + 1, object: null })
          books.splice(books.indexOf(target), 1)
        } else {
          t.equal(res.statusCode, a.stale ? 412 : 404, `${method} ${url} refused`)
        }
      } else {
        const res = await api.request({ method: 'PUT', url: a.book ? '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60' : '/api/students/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', payload: a.book ? dune : ada })
        t.equal(res.statusCode, 404)
      }
    }
    await visible(api, expected.length)
    const events = await allEvents(api)
    const seen = events.map(e => ({ type: e.type, id: e.data.id, revision: e.data.revision, object: e.data.object }))
    if (JSON.stringify(seen) !== JSON.stringify(expected)) t.fail(`the feed differs from the accepted writes:\n${JSON.stringify(seen)}\n${JSON.stringify(expected)}`)
  }), { seed: 20261125, numRuns: 15 })
  const events = await allEvents(api)
  t.ok(events.length > 10, `the runs wrote ${events.length} events`)
  t.equal(new Set(events.map(e => e.id)).size, events.length, 'ids are unique')
  for (const event of events.slice(0, 3)) {
    t.match(event, {
      specversion: '1.0',
      source: '/books-students-api',
      subject: event.type.startsWith('book') ? `/books/${event.data.id}` : `/api/students/${event.data.id}`,
      datacontenttype: 'application/json',
      time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
    })
  }
})

t.test('pages: limit, types, next_cursor past filtered events, and the head', async t => {
  const api = await feedApp(t)
  for (let i = 0; i < 5; i++) {
    await api.request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null, title: `B${i}` } })
    await api.request({ method: 'POST', url: '/api/students', payload: { ...ada, email: `s${i}@example.org` } })
  }
  await visible(api, 10)
  const first = await api.request({ url: '/events?limit=3' })
  t.equal(first.statusCode, 200)
  t.same(first.json().items.map((e: FeedEvent) => e.type), ['book.created', 'student.created', 'book.created'])
  const rest = await api.request({ url: `/events?after=${first.json().next_cursor}&limit=500` })
  t.equal(rest.json().items.length, 7)
  const head = rest.json().next_cursor
  t.equal(head, rest.json().items.at(-1).id, 'a short page ends at its last event')
  const atHead = await api.request({ url: `/events?after=${head}` })
  t.same(atHead.json(), { items: [], next_cursor: head }, 'at the head, next_cursor is the after sent')

  const students = await allEvents(api, '&types=student.created')
  t.equal(students.length, 5)
  t.ok(students.every(e => e.type === 'student.created'))
  const onlyBooks = await api.request({ url: '/events?types=book.created,book.deleted&types=book.replaced&limit=500' })
  t.equal(onlyBooks.json().items.length, 5, 'comma lists and repeated types combine')
  t.equal(onlyBooks.json().next_cursor, head, 'next_cursor moves past the student events left out')

  const list = await api.request({ url: '/books' })
  t.equal(list.headers['events-cursor'], head, 'a list page carries the feed position read with it')
  const anonymous = await api.request({ url: '/books', key: null })
  t.equal(anonymous.statusCode, 200)
  t.notOk('events-cursor' in anonymous.headers, 'but not to a caller without a key, who cannot follow the feed and would only learn how often it is written to')
})

t.test('a key sees the events of what it may read', async t => {
  const api = await feedApp(t)
  await api.request({ method: 'POST', url: '/books', payload: dune })
  await api.request({ method: 'POST', url: '/api/students', payload: ada })
  await visible(api, 2)
  const booksOnly = await api.key('books:read')
  const page = await api.request({ url: '/events', key: booksOnly })
  t.same(page.json().items.map((e: FeedEvent) => e.type), ['book.created'])
  t.equal(page.json().next_cursor, (await api.request({ url: '/events' })).json().next_cursor, 'and moves past the rest')

  const refused = await api.request({ url: '/events?types=student.created', key: booksOnly })
  t.equal(refused.statusCode, 403)
  t.match(refused.json(), { type: '/problems/missing-scope', detail: /students:read/ })
  const writer = await api.key('books:write', 'students:write')
  const neither = await api.request({ url: '/events', key: writer })
  t.equal(neither.statusCode, 403)
  t.match(neither.json().detail, 'one of the scopes books:read, students:read')
  t.equal((await api.request({ url: '/events', key: null })).statusCode, 401, 'anonymous callers are refused, even where book reads are public')
})

t.test('a bad cursor is a 400, an unknown type a 400, a cursor of another database or before the retention a 410', async t => {
  const api = await feedApp(t)
  const bad = await api.request({ url: '/events?after=nodash' })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { type: '/problems/validation-error', errors: [{ parameter: 'after' }] })
  const unknown = await api.request({ url: '/events?types=book.burned' })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().errors[0], { parameter: 'types' })

  const foreign = await api.request({ url: '/events?after=00000000ff-1' })
  t.equal(foreign.statusCode, 410)
  t.match(foreign.json(), { type: '/problems/cursor-expired', title: 'Gone', detail: /30 days/ })

  await api.request({ method: 'POST', url: '/books', payload: dune })
  await visible(api, 1)
  const [created] = (await api.request({ url: '/events' })).json().items as FeedEvent[]
  const ahead = created!.id.replace(/-[^-]+$/, '-zz')
  t.equal((await api.request({ url: `/events?after=${ahead}` })).statusCode, 410, 'a position the feed never reached (a restored database) is gone')
  const start = (await api.request({ url: '/events' })).json()
  t.equal(start.items.length, 1)

  // Pruned as if a retention had passed: the position before it is gone, the one after it still current.
  t.equal(await api.repositories.events.prune(Date.now() + 1000), 1)
  const before = await api.request({ url: `/events?after=${created!.id.replace(/-[^-]+$/, '-0')}` })
  t.equal(before.statusCode, 410)
  const current = await api.request({ url: `/events?after=${created!.id}` })
  t.same(current.json(), { items: [], next_cursor: created!.id })
  const oldest = await api.request({ url: '/events' })
  t.same(oldest.json(), { items: [], next_cursor: created!.id }, 'without after, the feed starts at the oldest kept')
})

t.test('retention: events older than EVENTS_RETENTION_DAYS are pruned at start, and hourly', async t => {
  const repositories = await openTestRepositories(t)
  const start = await repositories.events.head()
  await repositories.books.create({ ...dune, isbn: null })
  await settled(repositories.events, start, 1)
  const day = 24 * 60 * 60 * 1000
  let now = Date.now()
  const stop = keepEvents(repositories.events, 2, pino({ level: 'silent' }), () => now)
  await stop()
  t.same((await repositories.events.read(await repositories.events.oldest(), ['book.created'], 10)).events.length, 1, 'an event of today is kept')
  now += 2 * day + 1000
  await keepEvents(repositories.events, 2, pino({ level: 'silent' }), () => now)()
  t.same((await repositories.events.read(await repositories.events.oldest(), ['book.created'], 10)).events.length, 0, 'an event older than the retention is pruned')
  t.equal(await repositories.events.check(await repositories.events.head()), 'current', 'the head stays current once everything is pruned')
})

t.test('pruning that fails is logged, and tried again at the next turn', async t => {
  const repositories = await openTestRepositories(t)
  const lines: string[] = []
  const log = pino({ level: 'error' }, { write: (line: string) => { lines.push(line) } })
  const failing = { ...repositories.events, prune: async () => { throw new Error('disk on fire') } }
  await keepEvents(failing, 30, log)()
  t.match(lines.join(''), /pruning the change feed failed/)
})
