// The change feed's contract: what every engine's EventFeed and its record writes must do, through Repositories only (feed.*.test.ts).
import fc from 'fast-check'
import type { Test } from 'tap'
import { IdempotencyKeyTakenError, RevisionNotCurrentError, ValueTakenError } from '../src/domain/outcomes.js'
import { eventEnvelope, eventSource, eventTypes, type EventType } from '../src/storage/events.js'
import type { BookValues, EventFeed, IdempotencyEntry, Repositories, StoredEvent, StudentValues, Versioned } from '../src/storage/types.js'
import type { FreshDatabase, OpenStorage } from './storage-contract.js'
import { eventually } from './helper.js'

const book = (overrides: Partial<BookValues> = {}): BookValues => ({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: 1965, ...overrides })
const student = (overrides: Partial<StudentValues> = {}): StudentValues => ({ name: 'Ada', email: 'ada@example.org', enrollment_year: 2025, status: 'active', ...overrides })
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const allTypes: readonly string[] = eventTypes

function entry (key: string) {
  return (created: Versioned<unknown>): IdempotencyEntry => ({
    scope: 'key-1 createBook',
    key,
    fingerprint: 'f',
    expiresAt: Date.now() + 60_000,
    response: { status: 201, headers: {}, body: JSON.stringify(created.record) }
  })
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Every event after `after` of `types`, page by page until one says there is no more, and the position it ended at. */
export async function readAll (feed: EventFeed, after: string, types: readonly string[] = allTypes, limit = 100): Promise<{ events: StoredEvent[], next: string }> {
  const events: StoredEvent[] = []
  for (let from = after; ;) {
    const page = await feed.read(from, types, limit)
    events.push(...page.events)
    if (!page.more) return { events, next: page.next }
    from = page.next
  }
}

/** Waits until `count` events after `after` can be read (on PostgreSQL, see eventually()). */
export async function settled (feed: EventFeed, after: string, count: number): Promise<void> {
  await eventually(async () => await readAll(feed, after), all => all.events.length >= count, `${count} events readable`)
}

/** What a record write answers, as the event about it must carry it. */
interface Change { type: EventType, subject: string, id: string, revision: number, object: Record<string, unknown> | null }

const bookChange = (change: 'created' | 'replaced', written: Versioned<{ book_id: string }>): Change =>
  ({ type: `book.${change}`, subject: `/books/${written.record.book_id}`, id: written.record.book_id, revision: written.revision, object: written.record })
const studentChange = (change: 'created' | 'replaced', written: Versioned<{ student_id: string }>): Change =>
  ({ type: `student.${change}`, subject: `/api/students/${written.record.student_id}`, id: written.record.student_id, revision: written.revision, object: written.record })

export function feedContract (t: Test, fresh: FreshDatabase): void {
  const opened = async (t: Test, open?: OpenStorage): Promise<Repositories> => {
    const repositories = await (open ?? await fresh(t))()
    t.teardown(() => repositories.close())
    return repositories
  }

  /** The event's envelope is exactly the one eventEnvelope() makes for the write's answer, at the change's time. */
  const matches = (t: Test, event: StoredEvent, change: Change) => {
    const parsed = JSON.parse(event.envelope) as { time: string }
    const attributes = { specversion: '1.0', source: eventSource, type: change.type, subject: change.subject, time: iso, datacontenttype: 'application/json' }
    t.match(parsed, { ...attributes, data: { id: change.id, revision: change.revision, object: change.object } }, `${change.type} carries the write's answer`)
    t.equal(event.type, change.type)
    t.notOk('id' in parsed, 'the id is the position, not in the envelope')
    const time = change.object === null ? parsed.time : String(change.object[change.type.endsWith('created') ? 'created_at' : 'updated_at'])
    t.equal(event.envelope, eventEnvelope(change.type, change.subject, time, change.id, change.revision, change.object), 'the envelope, byte for byte')
  }

  t.test('each successful create, replace and delete writes exactly one event with the record as the write answered it', async t => {
    const { books, students, events } = await opened(t)
    const start = await events.head()
    t.equal(await events.check(start), 'current', 'the empty feed has a head one may resume from')
    t.same(await events.read(start, allTypes, 10), { events: [], next: start, more: false }, 'nothing to read yet')

    const created = await books.create(book({ isbn: '9780441013593' }))
    const id = created.record.book_id
    const replaced = await books.replace(id, book({ title: 'Dune Messiah', isbn: null }), [1])
    const again = await books.replace(id, book({ title: 'Children of Dune' }), null)
    const ada = await students.create(student())
    const graduated = await students.replace(ada.record.student_id, student({ status: 'graduated' }), [1])
    t.equal(await books.delete(id, [3]), true)
    const keyed = await books.create(book({ title: 'Keyed' }), entry('k1'))

    await settled(events, start, 7)
    const { events: read, next } = await readAll(events, start)
    t.equal(read.length, 7, 'one event per write')
    matches(t, read[0]!, bookChange('created', created))
    matches(t, read[1]!, bookChange('replaced', replaced!))
    matches(t, read[2]!, bookChange('replaced', again!))
    matches(t, read[3]!, studentChange('created', ada))
    matches(t, read[4]!, studentChange('replaced', graduated!))
    matches(t, read[5]!, { type: 'book.deleted', subject: `/books/${id}`, id, revision: 4, object: null })
    matches(t, read[6]!, bookChange('created', keyed))
    t.equal(new Set(read.map(e => e.position)).size, 7, 'every event has a position of its own')
    for (const event of read) {
      t.match(event.position, /^[A-Za-z0-9-]{1,100}$/, 'a position fits an SSE id and a query parameter')
      t.equal(await events.check(event.position), 'current')
    }
    t.equal(next, await events.head(), 'the last read ends at the head')
    t.equal(next, read.at(-1)!.position, 'which is the last event')
  })

  t.test('rejected writes write no event', async t => {
    const { books, students, events } = await opened(t)
    const taken = await books.create(book({ isbn: '9780441013593' }))
    const other = await books.create(book({ title: 'Other' }))
    await students.create(student())
    await books.create(book({ title: 'Keyed' }), entry('k1'))
    await settled(events, await events.oldest(), 4)
    const head = await events.head()

    await t.rejects(books.create(book({ isbn: '9780441013593' })), new ValueTakenError('book', 'isbn'))
    await t.rejects(books.create(book({ isbn: '9780441013593' }), entry('k2')), new ValueTakenError('book', 'isbn'))
    await t.rejects(students.create(student({ email: 'ADA@example.org' })), new ValueTakenError('student', 'email'))
    await t.rejects(books.replace(other.record.book_id, book({ isbn: '9780441013593' }), null), new ValueTakenError('book', 'isbn'))
    await t.rejects(books.replace(taken.record.book_id, book(), [2]), new RevisionNotCurrentError('book', false))
    await t.rejects(books.delete(taken.record.book_id, [7]), new RevisionNotCurrentError('book', false))
    const missing = '01900000-0000-7000-8000-000000000000'
    t.equal(await books.replace(missing, book(), null), null)
    t.equal(await students.replace(missing, student(), null), null)
    t.equal(await books.delete(missing, null), false)
    await t.rejects(books.create(book({ title: 'Keyed again' }), entry('k1')), new IdempotencyKeyTakenError())

    t.same(await events.read(head, allTypes, 10), { events: [], next: head, more: false }, 'nothing after the head')
    t.equal(await events.head(), head, 'the head did not move')
  })

  t.test('pages of any size and any types, concatenated, are exactly the events of those types in order', async t => {
    const repositories = await opened(t)
    const { books, students, events } = repositories
    type Op = { kind: 'book' | 'student', action: 'create' | 'replace' | 'delete', pick: number }
    const op: fc.Arbitrary<Op> = fc.record({ kind: fc.constantFrom('book', 'student'), action: fc.constantFrom('create', 'replace', 'delete'), pick: fc.nat() })
    const bookIds: string[] = []
    const studentIds: string[] = []
    let written = 0
    await fc.assert(fc.asyncProperty(
      fc.array(op, { maxLength: 12 }), fc.subarray([...eventTypes]), fc.integer({ min: 1, max: 5 }),
      async (ops, types, limit) => {
        const start = await events.head()
        const expected: string[] = []
        for (const { kind, action, pick } of ops) {
          const ids = kind === 'book' ? bookIds : studentIds
          const id = ids[pick % Math.max(ids.length, 1)]
          if (action === 'create' || id === undefined) {
            written++
            if (kind === 'book') bookIds.push((await books.create(book({ title: `Book ${written}` }))).record.book_id)
            else studentIds.push((await students.create(student({ email: `s${written}@example.org` }))).record.student_id)
            expected.push(`${kind}.created`)
          } else if (action === 'replace' || kind === 'student') {
            if (kind === 'book') await books.replace(id, book({ title: `Again ${pick}` }), null)
            else await students.replace(id, student({ email: `r${++written}@example.org` }), null)
            expected.push(`${kind}.replaced`)
          } else {
            await books.delete(id, null)
            bookIds.splice(bookIds.indexOf(id), 1)
            expected.push('book.deleted')
          }
        }
        await settled(events, start, expected.length)
        const everything = await readAll(events, start)
        if (JSON.stringify(everything.events.map(e => e.type)) !== JSON.stringify(expected)) return false
        const paged = await readAll(events, start, types, limit)
        const wanted = everything.events.filter(e => types.includes(e.type as EventType))
        // Every page ends where the next begins: no event twice, none skipped, and only a read that reached the head says it has no more.
        return JSON.stringify(paged.events) === JSON.stringify(wanted) && paged.next === everything.next && paged.next === await events.head()
      }
    // Twenty runs reach every page size and type set often enough; each write is a round trip on PostgreSQL.
    ), { seed: 20261125, numRuns: 20 })
    t.pass('paging never skipped nor repeated an event')
  })

  t.test('writes sent together (one batch, one shared statement per kind): each acknowledged write has its one event, and the events replay to the stored records', async t => {
    const { books, events } = await opened(t)
    const isbns = ['9780441013593', '9780143111580', '9780262033848']
    type Op = { action: 'create' | 'create-keyed' | 'replace' | 'delete', pick: number, isbn: number | null, expected: number[] | null }
    const op: fc.Arbitrary<Op> = fc.record({
      action: fc.constantFrom('create', 'create-keyed', 'replace', 'replace', 'delete'),
      pick: fc.nat({ max: 2 }),
      isbn: fc.option(fc.nat({ max: isbns.length - 1 })),
      expected: fc.option(fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }))
    })
    let run = 0
    // Where the last run's batch ended in the feed: its cleanup and the next run's seeds come after.
    let origin = await events.head()
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 16 }), async ops => {
      run++
      // Three stored books to replace and delete; the batch's writes fight over them and over the ISBNs.
      const seeded = [await books.create(book({ title: `Run ${run} a`, isbn: null })), await books.create(book({ title: `Run ${run} b`, isbn: null })), await books.create(book({ title: `Run ${run} c`, isbn: null }))]
      const ids = seeded.map(s => s.record.book_id)
      // The batch's events come after the last seed's. Not after the head as read now: on PostgreSQL the
      // head stays behind a commit while an older transaction anywhere on the server is open.
      const isLastSeed = (event: StoredEvent) => event.envelope.includes(ids[2]!)
      const seeds = await eventually(async () => await readAll(events, origin), all => all.events.some(isLastSeed), 'the seeds\' events')
      const start = seeds.events.find(isLastSeed)!.position
      // Sent in one tick: one batch.
      const outcomes = await Promise.allSettled(ops.map(({ action, pick, isbn, expected }, i) => {
        const values = book({ title: `Run ${run} write ${i}`, isbn: isbn === null ? null : isbns[isbn]! })
        if (action === 'create') return books.create(values)
        // Keyed creates share three keys a run: of those with one key, only the first to claim it writes.
        if (action === 'create-keyed') return books.create(values, entry(`run ${run} key ${pick}`))
        if (action === 'replace') return books.replace(ids[pick]!, values, expected)
        return books.delete(ids[pick]!, expected)
      }))
      // Refused only for a reason it gave: a taken ISBN for one that sets an ISBN, a revision for one that named some.
      const justified = (reason: unknown, { action, isbn, expected }: Op) =>
        (reason instanceof ValueTakenError && isbn !== null) || (reason instanceof RevisionNotCurrentError && expected !== null) ||
        (reason instanceof IdempotencyKeyTakenError && action === 'create-keyed')
      if (outcomes.some((o, i) => o.status === 'rejected' && !justified(o.reason, ops[i]!))) return false
      // A key creates one record, and one is created whenever a create with it could not be a duplicate.
      for (let key = 0; key < 3; key++) {
        const withKey = ops.flatMap((o, i) => o.action === 'create-keyed' && o.pick === key ? [i] : [])
        const written = withKey.filter(i => outcomes[i]!.status === 'fulfilled').length
        if (written > 1 || (written === 0 && withKey.some(i => ops[i]!.isbn === null))) return false
      }
      const answered = outcomes.map(o => o.status === 'fulfilled' ? o.value : null)
      const succeeded = answered.filter(value => value !== null && value !== false).length
      await settled(events, start, succeeded)
      const { events: read, next } = await readAll(events, start)
      if (read.length !== succeeded) return false
      origin = next
      // Replayed in feed order from the seeded records, every event follows the one before it on its record.
      const model = new Map<string, { revision: number, record: unknown }>(seeded.map(s => [s.record.book_id, { revision: 1, record: s.record }]))
      const envelopes = new Map<string, number>()
      answered.forEach((value, i) => {
        if (typeof value !== 'object' || value === null) return
        const created = ops[i]!.action.startsWith('create')
        const change = bookChange(created ? 'created' : 'replaced', value)
        envelopes.set(eventEnvelope(change.type, change.subject, String(change.object![created ? 'created_at' : 'updated_at']), change.id, change.revision, change.object), i)
      })
      for (const event of read) {
        const { subject, data } = JSON.parse(event.envelope) as { subject: string, data: { id: string, revision: number } }
        const before = model.get(data.id)
        const write = event.type === 'book.deleted'
          ? ops.findIndex((o, i) => o.action === 'delete' && answered[i] === true && ids[o.pick] === data.id)
          : envelopes.get(event.envelope)
        if (write === undefined || write === -1 || subject !== `/books/${data.id}`) return false
        if (event.type === 'book.created') {
          if (before !== undefined || data.revision !== 1) return false
        } else if (before === undefined || data.revision !== before.revision + 1 || !(ops[write]!.expected ?? [before.revision]).includes(before.revision)) {
          return false
        }
        if (event.type === 'book.deleted') model.delete(data.id)
        else model.set(data.id, { revision: data.revision, record: answered[write] === null ? null : (answered[write] as Versioned<unknown>).record })
        // The order replayed is one in which every ISBN is held by one book at a time.
        const held = [...model.values()].map(m => (m.record as BookValues).isbn).filter(isbn => isbn !== null)
        if (new Set(held).size !== held.length) return false
      }
      // What is stored is what the replay ends at.
      const createdIds = answered.flatMap((value, i) => ops[i]!.action.startsWith('create') && typeof value === 'object' && value !== null ? [(value as Versioned<{ book_id: string }>).record.book_id] : [])
      for (const id of [...ids, ...createdIds]) {
        const stored = await books.get(id)
        const expected = model.get(id)
        if (JSON.stringify(stored) !== JSON.stringify(expected === undefined ? null : { record: expected.record, revision: expected.revision })) return false
      }
      // The next run's writes may take the ISBNs again.
      for (const [id, { revision }] of model) await books.replace(id, book({ title: `Run ${run} cleared`, isbn: null }), [revision])
      return true
    // Each run is a batch of up to 16 writes; thirty reach every mix of refusals often enough.
    }), { seed: 20261126, numRuns: 30 })
    t.pass('every batch replayed to what is stored')
  })

  t.test('a read moves past the events its types leave out', async t => {
    const { books, students, events } = await opened(t)
    const start = await events.head()
    await students.create(student())
    await books.create(book())
    await students.create(student({ email: 'bo@example.org' }))
    await settled(events, start, 3)
    const none = await events.read(start, [], 10)
    t.same(none.events, [], 'no types, no events')
    t.equal(none.next, await events.head(), 'but the position moves to the head')
    t.equal(none.more, false, 'and says there is no more')
    const page = await events.read(start, ['book.created'], 10)
    t.same(page.events.map(e => e.type), ['book.created'])
    t.equal(page.next, await events.head(), 'past the student after the book')
    t.equal(page.more, false)
    t.same(await events.read(page.next, allTypes, 10), { events: [], next: page.next, more: false }, 'nothing is left behind it')
    const full = await events.read(start, ['student.created'], 1)
    t.equal(full.next, full.events[0]!.position, 'a full page ends at its last event')
    t.equal(full.more, true, 'and says there may be more')
  })

  t.test('check: garbage is invalid; another feed\'s positions are gone', async t => {
    const { books, events } = await opened(t)
    const { events: elsewhere } = await opened(t)
    await books.create(book())
    for (const garbage of ['', 'x', '-', '!!!', 'a'.repeat(101), `${await events.head()}-1`, `${await events.head()}Z`]) {
      t.equal(await events.check(garbage), 'invalid', `${JSON.stringify(garbage)} is no position`)
    }
    t.equal(await events.check(await elsewhere.head()), 'gone', 'another database\'s head')
    t.equal(await elsewhere.check(await events.head()), 'gone', 'and the other way round')
  })

  t.test('prune deletes old events only, and a position before them is gone; positions are never drawn again', async t => {
    const { books, events } = await opened(t)
    const start = await events.head()
    for (let i = 0; i < 3; i++) await books.create(book({ title: `Old ${i}` }))
    await sleep(5)
    const cutoff = Date.now()
    await sleep(5)
    for (let i = 0; i < 2; i++) await books.create(book({ title: `New ${i}` }))
    await settled(events, start, 5)
    const before = (await readAll(events, start)).events
    t.equal(await events.prune(cutoff), 3, 'the three older than the cutoff')
    t.equal(await events.prune(cutoff), 0, 'and nothing more')
    t.equal(await events.check(start), 'gone', 'a position before pruned events is gone')
    t.equal(await events.check(before[0]!.position), 'gone')
    const kept = (await readAll(events, before[2]!.position)).events
    t.same(kept, before.slice(3), 'the newer events stay')
    for (const event of kept) t.equal(await events.check(event.position), 'current')

    t.equal(await events.prune(Date.now() + 1000), 2, 'everything, given a cutoff in the future')
    const head = await events.head()
    t.equal(await events.check(head), 'current', 'the head of an emptied feed may be resumed from')
    t.equal(await events.check(before[3]!.position), 'gone', 'a pruned event\'s position before the head is gone')
    const after = await books.create(book({ title: 'After' }))
    await settled(events, head, 1)
    const { events: fresh } = await readAll(events, head)
    t.equal(fresh.length, 1, 'a write after pruning is read from the head')
    t.equal(JSON.parse(fresh[0]!.envelope).data.object.book_id, after.record.book_id)
    t.notOk(before.some(e => e.position === fresh[0]!.position), 'with a position never issued before')
  })

  t.test('oldest: the position before the oldest event kept, which moves with pruning', async t => {
    const { books, events } = await opened(t)
    const empty = await events.oldest()
    t.equal(empty, await events.head(), 'an empty feed starts at its head')
    await books.create(book({ title: 'Old' }))
    await settled(events, empty, 1)
    t.equal(await events.oldest(), empty, 'writing keeps the start')
    t.equal((await readAll(events, await events.oldest())).events.length, 1, 'reading from it gives every event kept')
    await events.prune(Date.now() + 60_000)
    t.equal(await events.oldest(), await events.head(), 'once every event is pruned, it is the head')
    t.equal(await events.check(await events.oldest()), 'current')
  })

  t.test('onCommit: listeners hear of committed writes until they unsubscribe', async t => {
    const { books, events } = await opened(t)
    let heard = 0
    const unsubscribe = events.onCommit(() => { heard++ })
    const also = events.onCommit(() => {})
    await books.create(book())
    await sleep(0)
    t.ok(heard >= 1, 'heard of the create')
    const now = heard
    t.equal(await books.replace('01900000-0000-7000-8000-000000000000', book(), [1]), null)
    await sleep(0)
    t.equal(heard, now, 'a write that changed nothing is not announced')
    unsubscribe()
    also()
    await books.create(book({ title: 'Unheard' }))
    await sleep(0)
    t.equal(heard, now, 'not after unsubscribing')
  })

  t.test('another node on the same database reads the same feed', async t => {
    const open = await fresh(t)
    const one = await opened(t, open)
    const two = await opened(t, open)
    const start = await one.events.head()
    t.equal(await two.events.check(start), 'current', 'one feed id per database')
    await one.books.create(book())
    await two.books.create(book({ title: 'Two' }))
    await settled(one.events, start, 2)
    const fromOne = await readAll(one.events, start)
    const fromTwo = await readAll(two.events, start)
    t.same(fromTwo, fromOne, 'the same events at the same positions')
    t.equal(fromOne.events.length, 2)
  })
}
