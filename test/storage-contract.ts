// The repository contract: what every storage engine must do, run against each (storage.*.test.ts).
import fc from 'fast-check'
import type { Test } from 'tap'
import { IdempotencyKeyTakenError, RevisionNotCurrentError, ValueTakenError } from '../src/domain/outcomes.js'
import type { BookValues, EventLane, IdempotencyEntry, RecordExport, Repositories, StudentValues, Versioned } from '../src/storage/types.js'
import { toIsbn13 } from '../src/domain/isbn.js'
import { creationOrder } from '../src/storage/list-sql.js'
import { exportBatch } from '../src/storage/export.js'
import { parseSearch } from '../src/domain/search/query.js'
import { ImportRunner } from '../src/imports/runner.js'
import { eventually } from './helper.js'

/** An NDJSON export's chunk as rows of values, in the order of `fields`. */
export const ndjsonRows = (chunk: string, fields: readonly string[]): unknown[][] =>
  chunk.split('\n').slice(0, -1).map(line => {
    const record = JSON.parse(line) as Record<string, unknown>
    return fields.map(field => record[field])
  })

/** Every row of an NDJSON export, read to the end. */
export async function exportedRows ({ fields, chunks }: RecordExport): Promise<unknown[][]> {
  const rows: unknown[][] = []
  for await (const chunk of chunks) rows.push(...ndjsonRows(chunk, fields))
  return rows
}

const ndjson = { format: 'ndjson' } as const

/** Opens the engine on one database; called again, it must open the same database (a restart, or another node). */
export type OpenStorage = () => Promise<Repositories>

/** Makes a fresh, empty database for `t` (gone when `t` ends) and says how to open it. */
export type FreshDatabase = (t: Test) => Promise<OpenStorage>

const book = (overrides: Partial<BookValues> = {}): BookValues => ({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: 1965, ...overrides })
const student = (overrides: Partial<StudentValues> = {}): StudentValues => ({ name: 'Ada', email: 'ada@example.org', enrollment_year: 2025, status: 'active', ...overrides })
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

function entry (key: string, expiresAt = Date.now() + 60_000) {
  return (created: Versioned<unknown>): IdempotencyEntry => ({
    scope: 'key-1 createBook',
    key,
    fingerprint: 'f',
    expiresAt,
    response: { status: 201, headers: { location: '/x' }, body: JSON.stringify(created.record) }
  })
}

// Text the contract accepts (any Unicode but NUL, which it refuses on both engines), at the contract's lengths.
const text = (maxLength: number) => fc.string({ unit: 'grapheme', minLength: 1, maxLength }).filter(s => !s.includes('\u0000') && s.length <= maxLength)
const isbn = fc.oneof(fc.constant(null), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 12 }).map(digits => {
  const sum = digits.reduce((s, d, i) => s + d * (i % 2 === 0 ? 1 : 3), 0)
  return toIsbn13(`978${digits.slice(3).join('')}${(10 - ((sum - digits[0]! - digits[1]! * 3 - digits[2]! + 9 + 7 * 3 + 8) % 10)) % 10}`)
}))
const bookValues: fc.Arbitrary<BookValues> = fc.record({
  title: text(500),
  author: text(300),
  isbn: isbn.map(v => v ?? null),
  published_year: fc.oneof(fc.constant(null), fc.integer({ min: -5000, max: 9999 }))
})

export function storageContract (t: Test, fresh: FreshDatabase): void {
  const opened = async (t: Test, open?: OpenStorage) => {
    const repositories = await (open ?? await fresh(t))()
    t.teardown(() => repositories.close())
    return repositories
  }

  t.test('a record reads back exactly as written, whatever its text', async t => {
    const { books } = await opened(t)
    await fc.assert(fc.asyncProperty(bookValues, async values => {
      const created = await books.create(values).catch(error => {
        if (error instanceof ValueTakenError) return null
        throw error
      })
      if (created === null) return
      t.match(created.record, { ...values, created_at: iso }, 'create answers the values')
      const read = await books.get((created.record as { book_id: string }).book_id)
      if (JSON.stringify(read) !== JSON.stringify(created)) t.fail(`read back differs: ${JSON.stringify(read)} vs ${JSON.stringify(created)}`)
    }), { seed: 20261123, numRuns: 60 })
    t.pass('every generated record read back byte for byte')
  })

  t.test('lists page in creation order with an opaque position', async t => {
    const { books } = await opened(t)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await books.create(book({ title: `Book ${i}` }))).record.book_id)
    const first = await books.list(creationOrder, 2, null)
    t.same(first.items.map(b => b.book_id), ids.slice(0, 2))
    t.type(first.after, 'string')
    const second = await books.list(creationOrder, 2, first.after)
    t.same(second.items.map(b => b.book_id), ids.slice(2, 4))
    const last = await books.list(creationOrder, 2, second.after)
    t.same(last.items.map(b => b.book_id), ids.slice(4))
    t.equal(last.after, null, 'the last page says so')
    t.same((await books.list(creationOrder, 10, null)).items.map(b => b.book_id), ids)
  })

  t.test('a unique value taken is a ValueTakenError naming the field; emails ignore case', async t => {
    const { books, students } = await opened(t)
    await books.create(book({ isbn: '9780441013593' }))
    await t.rejects(books.create(book({ isbn: '9780441013593' })), new ValueTakenError('book', 'isbn'))
    await students.create(student({ email: 'Ada@Example.org' }))
    await t.rejects(students.create(student({ email: 'ada@EXAMPLE.ORG' })), new ValueTakenError('student', 'email'))
    const other = await students.create(student({ email: 'bob@example.org' }))
    await t.rejects(students.replace(other.record.student_id, student({ email: 'ADA@example.org' }), null), new ValueTakenError('student', 'email'))
    await t.rejects(students.replace(other.record.student_id, student({ email: 'ADA@example.org' }), [1]), new ValueTakenError('student', 'email'),
      'the revision named is current: the taken value is the refusal')
    await t.rejects(students.replace(other.record.student_id, student({ email: 'ADA@example.org' }), [2]), new RevisionNotCurrentError('student', false),
      'a revision it never had is refused first')
    t.equal((await students.list(creationOrder, 10, null)).items.length, 2, 'nothing was written by the failed writes')
    t.equal((await students.get(other.record.student_id))?.revision, 1)
  })

  t.test('replace checks the revision in the same write, and grows it', async t => {
    const { books } = await opened(t)
    const created = await books.create(book())
    const id = created.record.book_id
    const replaced = await books.replace(id, book({ title: 'Dune Messiah' }), [1])
    t.equal(replaced?.revision, 2)
    t.equal(replaced?.record.created_at, created.record.created_at, 'created_at is kept')
    t.match(replaced?.record.updated_at, iso)
    await t.rejects(books.replace(id, book(), [1]), new RevisionNotCurrentError('book', true), 'a tag of an earlier revision: changed since')
    t.equal(await books.replace('01900000-0000-7000-8000-000000000000', book(), null), null, 'no record, no write')
    t.same(await books.get(id), replaced, 'the stale write changed nothing')
  })

  t.test('of racing writes with the same expected revision exactly one wins', async t => {
    const { books } = await opened(t)
    const id = (await books.create(book())).record.book_id
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => books.replace(id, book({ title: `Writer ${i}` }), [1])))
    t.equal(outcomes.filter(o => o.status === 'fulfilled').length, 1, 'one winner')
    t.ok(outcomes.every(o => o.status === 'fulfilled' || o.reason instanceof RevisionNotCurrentError), 'the others get 412')
    t.equal((await books.get(id))?.revision, 2)
  })

  t.test('delete: checked, once', async t => {
    const { books } = await opened(t)
    const id = (await books.create(book())).record.book_id
    await t.rejects(books.delete(id, [7]), new RevisionNotCurrentError('book', false), 'a revision the book never had: not "changed since"')
    t.equal(await books.delete(id, [1]), true)
    t.equal(await books.delete(id, null), false)
    t.equal(await books.get(id), null)
  })

  t.test('an idempotency key is stored with its record, and only with it', async t => {
    const { books, idempotency } = await opened(t)
    const created = await books.create(book({ isbn: '9780441013593' }), entry('k1'))
    const found = await idempotency.find('key-1 createBook', 'k1', Date.now())
    t.same(found, { fingerprint: 'f', response: { status: 201, headers: { location: '/x' }, body: JSON.stringify(created.record) } })
    await t.rejects(books.create(book({ isbn: '9780441013593' }), entry('k2')), new ValueTakenError('book', 'isbn'))
    t.equal(await idempotency.find('key-1 createBook', 'k2', Date.now()), null, 'a failed create stores no key')
    t.equal(await idempotency.find('key-1 createBook', 'k1', Date.now() + 120_000), null, 'an expired entry is not found')
  })

  t.test('the same key sent twice at once creates one record', async t => {
    const { books, idempotency } = await opened(t)
    const outcomes = await Promise.allSettled([books.create(book(), entry('same')), books.create(book(), entry('same'))])
    t.equal(outcomes.filter(o => o.status === 'fulfilled').length, 1)
    t.ok(outcomes.some(o => o.status === 'rejected' && o.reason instanceof IdempotencyKeyTakenError), 'the other learns the key is taken')
    t.equal((await books.list(creationOrder, 10, null)).items.length, 1)
    t.not(await idempotency.find('key-1 createBook', 'same', Date.now()), null)
  })

  t.test('an expired key may be used again', async t => {
    const { books, idempotency } = await opened(t)
    await books.create(book(), entry('old', Date.now() - 1))
    const again = await books.create(book({ title: 'Again' }), entry('old'))
    const found = await idempotency.find('key-1 createBook', 'old', Date.now())
    t.equal(found?.response.body, JSON.stringify(again.record))
  })

  t.test('API keys: created, found, listed, revoked once', async t => {
    const { apiKeys } = await opened(t)
    const info = await apiKeys.create({ keyId: 'k_1', name: 'ci', scopes: ['books:read', 'books:write'], secretHash: Buffer.alloc(32, 1) })
    t.match(info, { key_id: 'k_1', name: 'ci', scopes: ['books:read', 'books:write'], created_at: iso, revoked_at: null })
    t.same((await apiKeys.find('k_1'))?.secretHash, Buffer.alloc(32, 1))
    t.equal(await apiKeys.find('k_nope'), null)
    t.equal(await apiKeys.revoke('k_1'), true)
    t.equal(await apiKeys.revoke('k_1'), false)
    t.match((await apiKeys.find('k_1'))?.revoked_at, iso, 'a revocation is seen at once by the node that made it')
    t.same((await apiKeys.list()).map(k => k.key_id), ['k_1'])
  })

  t.test('API keys: a revocation by this node is told to its listeners at once, and only while they listen', async t => {
    const { apiKeys } = await opened(t)
    for (const keyId of ['k_a', 'k_b']) await apiKeys.create({ keyId, name: keyId, scopes: ['books:read'], secretHash: Buffer.alloc(32, 2) })
    const heard: string[] = []
    const stop = apiKeys.onRevoked(keyId => heard.push(keyId))
    await apiKeys.revoke('k_a')
    // Told before revoke() answers; the engine may tell it again when its own notification comes back.
    t.ok(heard.includes('k_a'), 'told when the key was revoked, before revoke() answered')
    stop()
    await apiKeys.revoke('k_b')
    t.notOk(heard.includes('k_b'), 'nothing after unsubscribing')
  })

  t.test('the cursor secret and the data outlive a restart; the probe passes', async t => {
    const open = await fresh(t)
    const first = await open()
    const id = (await first.books.create(book())).record.book_id
    const secret = await first.cursorSecret()
    await first.close()
    const second = await opened(t, open)
    t.same(await second.cursorSecret(), secret)
    t.equal(secret.length, 32)
    t.not(await second.books.get(id), null)
    await t.resolves(second.probe())
  })

  t.test('usage: the connections open and the most it may open; nothing in flight once every call is answered', async t => {
    const repositories = await opened(t)
    await Promise.all([repositories.books.get('00000000-0000-4000-8000-000000000000'), repositories.books.create(book())])
    const usage = repositories.usage()
    t.ok(usage.connections >= 1 && usage.connections <= usage.maxConnections, `${usage.connections} of ${usage.maxConnections} open`)
    t.equal(usage.maxConnections, repositories.engine === 'sqlite' ? 1 : 2 + 2, 'SQLite: one; PostgreSQL: the pipelined ones, group commit\'s and the listener\'s')
    t.equal(usage.queriesInFlight, 0)
    await repositories.close()
    t.equal(repositories.usage().connections, 0, 'none once closed')
  })

  t.test('years at the contract bounds, and nulls, round-trip', async t => {
    const { books, students } = await opened(t)
    for (const year of [-5000, 0, 9999, null]) {
      const created = await books.create(book({ published_year: year }))
      t.equal((await books.get(created.record.book_id))?.record.published_year, year)
    }
    const s = await students.create(student({ enrollment_year: null, status: 'graduated' }))
    t.same((await students.get(s.record.student_id))?.record, s.record)
  })

  t.test('an export reads every record from one snapshot while writes go on, and the feed position in that snapshot', async t => {
    const { books, events } = await opened(t)
    // Enough rows that the writes below land while the export is midway, whatever its engine reads at a
    // time (a SQLite export thread reads a chunk ahead of the one handed out).
    const count = exportBatch * 10 + 1
    const ids = Array.from({ length: count }, (_, i) => `01a21d0c-0000-7000-8000-${String(i).padStart(12, '0')}`)
    for (let from = 0; from < count; from += exportBatch) {
      await books.createMany(ids.slice(from, from + exportBatch).map((id, i) => ({ values: book({ title: `Book ${from + i}`, published_year: from + i }), given: { id } })))
    }
    const exported = await books.export({ ...creationOrder, sort: { key: 'published_year', descending: true } }, { ...ndjson, feedPosition: true })
    t.same(exported.fields, ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at'], 'the record\'s fields, in the contract\'s order')
    // The snapshot is the position's, taken by the time export() resolves (the position goes out before
    // any row): a record created now, before the first row is read, is after both.
    const between = await books.create(book({ title: 'Between' }))
    const first = await exported.chunks.next()
    const firstRows = ndjsonRows(first.value!, exported.fields)
    t.ok(firstRows.length > 0 && firstRows.length < count / 2, `a first chunk of ${firstRows.length} rows`)
    const created = await books.create(book({ title: 'Later' }))
    const replaced = ids[10]!
    const deleted = ids[exportBatch + 1]!
    await books.replace(replaced, book({ title: 'Changed', published_year: 10 }), null)
    t.ok(await books.delete(deleted, null))
    const rows = [...firstRows, ...await exportedRows(exported)]
    t.same(rows.map(row => row[0]), [...ids].reverse(), 'every record as it was when the export began, in its order')
    const stored = (await books.get(ids[3]!))!.record
    t.same(rows.at(-4), exported.fields.map(field => stored[field as keyof typeof stored]), 'a row holds the record\'s values')
    t.equal(rows.find(row => row[0] === replaced)?.[1], 'Book 10', 'a change made meanwhile is not in it')
    // After its position, every change made once it began (on PostgreSQL, records created as it began may come again).
    const types = ['book.created', 'book.replaced', 'book.deleted']
    const later = await eventually(async () => (await events.read(exported.position!, types, 2000)).events.map(e => ({ type: e.type, subject: (JSON.parse(e.envelope) as { subject: string }).subject })),
      seen => seen.some(e => e.type === 'book.deleted'), 'the deletion after the export\'s position')
    t.same(later.slice(-4), [
      { type: 'book.created', subject: `/books/${between.record.book_id}` },
      { type: 'book.created', subject: `/books/${created.record.book_id}` },
      { type: 'book.replaced', subject: `/books/${replaced}` },
      { type: 'book.deleted', subject: `/books/${deleted}` }
    ])
    t.ok(later.slice(0, -4).every(e => e.type === 'book.created' && ids.includes(e.subject.slice('/books/'.length))), 'anything before them is a creation the export holds')
  })

  t.test('an export\'s feed position is its snapshot\'s while writes go on: a record the export does not hold was created after the position', async t => {
    const { books, events } = await opened(t)
    for (let i = 0; i < 20; i++) await books.create(book({ title: `Before ${i}` }))
    // Creates one after another, from the same process, while exports open and are read.
    const writes = { going: true, done: 0 }
    const writer = (async () => {
      while (writes.going) await books.create(book({ title: `During ${writes.done++}` }))
    })()
    const exports: { position: string, ids: Set<unknown> }[] = []
    for (let round = 0; round < 20 || writes.done < 40; round++) {
      const exported = await books.export(creationOrder, { ...ndjson, feedPosition: true })
      exports.push({ position: exported.position!, ids: new Set((await exportedRows(exported)).map(row => row[0])) })
    }
    writes.going = false
    await writer
    const all = (await exportedRows(await books.export(creationOrder, ndjson))).map(row => row[0] as string)
    for (const { position, ids } of exports) {
      // Following the feed from the position must bring every record the export missed.
      const later = new Set<string>()
      for (let cursor = position, previous = ''; cursor !== previous;) {
        const page = await events.read(cursor, ['book.created'], 1000)
        for (const event of page.events) later.add((JSON.parse(event.envelope) as { subject: string }).subject.slice('/books/'.length))
        ;[previous, cursor] = [cursor, page.next]
      }
      const missed = all.filter(id => !ids.has(id) && !later.has(id))
      if (missed.length > 0) t.fail(`an export at ${position} holds ${ids.size} records; ${missed.length} others were created at or before its position: a client following the feed from it never sees them`)
    }
    t.pass(`${exports.length} exports while ${writes.done} records were created`)
  })

  t.test('an export of a search ranks and filters as the list does; one left before its end, or never read, releases its snapshot', async t => {
    const { books } = await opened(t)
    for (const title of ['Dune Messiah', 'Dune', 'Children of Dune', 'Emma']) await books.create(book({ title }))
    const search = parseSearch('dune')
    const ranked = await books.export({ ...creationOrder, search, sort: { key: 'relevance', descending: false } }, ndjson)
    t.equal(ranked.position, null, 'no position unless asked for')
    t.same((await exportedRows(ranked)).map(row => row[1]), ['Dune', 'Children of Dune', 'Dune Messiah'])
    const left = await books.export(creationOrder, ndjson)
    await left.chunks.return!()
    t.same(await left.chunks.next(), { done: true, value: undefined }, 'nothing more once left')
    for (let i = 0; i < 3; i++) {
      const partly = (await books.export(creationOrder, { format: 'csv' })).chunks
      t.equal((await partly.next()).value?.split('\r\n').length, 5, 'four CSV rows')
      await partly.return!()
    }
    t.equal((await books.create(book({ title: 'After' }))).revision, 1, 'writes go on once exports are left')
  })

  t.test('imports: started once per key, rows staged with repeats named, conflicts with stored records found, counts kept, leases claimed once', async t => {
    const { imports, books, students } = await opened(t)
    const now = Date.now()
    const started = { import_id: 'import-1', keyId: 'key-1', collection: 'books' as const, mode: 'valid' as const, format: 'csv' as const, created_at: new Date(now).toISOString(), idempotencyKey: 'k' }
    t.equal(await imports.start(started, 'node-a', now + 60_000), null, 'stored')
    t.match(await imports.start({ ...started, import_id: 'import-2' }, 'node-a', now + 60_000), { import_id: 'import-1', state: 'receiving' }, 'the key is held: the first import')
    const id = (n: number) => `01a21d0c-0000-7000-8000-${String(n).padStart(12, '0')}`
    const rows = [1, 2, 3, 4, 5].map(line => ({ line, recordId: id(line), unique: line === 3 ? '9780306406157' : null, record: JSON.stringify({ title: `Row ${line}`, author: 'A', isbn: null, published_year: null }) }))
    t.same(await imports.stage('import-1', rows), [])
    t.same(await imports.stage('import-1', [{ ...rows[0]!, line: 6 }, { ...rows[2]!, line: 7, recordId: id(7) }, { line: 8, recordId: id(8), unique: null, record: '{}' }]),
      [{ line: 6, earlier: 1, field: 'id' }, { line: 7, earlier: 3, field: 'unique' }], 'a repeat of an earlier row\'s id or unique value is not staged')
    await books.create({ title: 'Stored', author: 'B', isbn: '9780306406157', published_year: null })
    await books.create({ title: 'Stored too', author: 'B', isbn: null, published_year: null }, undefined, { id: id(5) })
    t.same(await imports.conflicts('import-1', 'books'), [{ line: 3, field: 'unique' }, { line: 5, field: 'id' }])
    await imports.unstage('import-1', [3, 5])
    t.same((await imports.staged('import-1', 1, 2)).map(row => row.line), [2, 4], 'after a line, in line order')
    const problems = Array.from({ length: 1001 }, (_, i) => ({ line: i + 1, type: '/problems/validation-error' as const, detail: 'is required' }))
    const updated = await imports.update('import-1', { read: 8, refused: 3, bytes: 100, problems, state: 'running', startedAt: new Date(now).toISOString(), writtenTo: 2, cancelRequested: true }, { runner: 'node-a', until: now + 60_000 }, 'digest')
    t.match(updated, { state: 'running', cancel_requested: true, rows: { read: 8, written: 0, refused: 3 }, bytes: 100, problems_omitted: 1, fingerprint: 'digest', writtenTo: 2 })
    t.equal(updated.problems.length, 1000)
    t.match(await imports.update('import-1', { written: 2, releaseKey: true }), { rows: { written: 2 }, idempotencyKey: null })
    t.equal(await imports.start({ ...started, import_id: 'import-3' }, 'node-a', now + 60_000), null, 'a released key may start another import')
    await imports.start({ ...started, import_id: 'import-4', keyId: 'key-2', collection: 'students', idempotencyKey: null }, 'node-b', now - 1)
    t.same((await imports.list('key-1', 10)).map(job => job.import_id).sort(), ['import-1', 'import-3'])
    t.equal((await imports.list(null, 10)).length, 3)
    t.equal(await imports.get('none'), null)
    await students.createMany([{ values: { name: 'Ada', email: 'Ada@Example.org', enrollment_year: null, status: 'active' }, given: { id: id(10) } }])
    t.same((await exportedRows(await students.export(creationOrder, ndjson))).map(row => row[0]), [id(10)])
    t.same(await imports.stage('import-4', [{ line: 1, recordId: id(9), unique: 'ada@example.org', record: '{}' }]), [])
    t.same(await imports.conflicts('import-4', 'students'), [{ line: 1, field: 'unique' }], 'an email held in another letter case')
    // Only import-4's lease has run out: of two nodes claiming at once, one gets it.
    const claims = await Promise.all([imports.claim('node-c', now, now + 60_000), imports.claim('node-d', now, now + 60_000)])
    t.same(claims.map(claim => claim?.import_id ?? null).sort(), ['import-4', null].sort())
    t.equal(await imports.claim('node-c', now, now + 60_000), null, 'nothing left to claim')
    await imports.unstage('import-1')
    t.same(await imports.staged('import-1', 0, 10), [])
    // A refused upload leaves nothing: neither the import nor its staged rows (nor its key, held by the row).
    await imports.stage('import-4', [{ line: 2, recordId: id(11), unique: null, record: '{}' }])
    await imports.discard('import-4')
    t.equal(await imports.get('import-4'), null, 'discarded')
    t.same(await imports.staged('import-4', 0, 10), [], 'with its staged rows')
    t.same((await imports.list(null, 10)).map(job => job.import_id).sort(), ['import-1', 'import-3'])
  })

  t.test('imports: a runner renews its lease at every batch, so that another node sweeping while it writes for longer than a lease takes nothing: every row written and counted once', async t => {
    const { imports, books, students, events } = await opened(t)
    const [leaseMs, batch, count, batchMs] = [1000, 10, 100, 400]
    let now = Date.now()
    const started = now
    // The other node, sweeping for imports whose lease ran out, at every batch the first one writes.
    const other = new ImportRunner({ imports, stores: { books, students }, node: 'node-b', leaseMs, batch, sweepMs: 3_600_000, clock: () => now, onError: error => t.error(error), onResume: taken => t.fail(`node-b took ${taken.import_id} up while node-a held it`) })
    t.teardown(() => other.close())
    let sweeps = 0
    // Each batch takes 400 ms of this clock: the import outlasts its first lease four times, no batch outlasts one.
    const slowBooks = new Proxy(books, {
      get (target, name) {
        const value = Reflect.get(target, name) as unknown
        if (name !== 'createMany') return typeof value === 'function' ? value.bind(target) : value
        return async (...args: Parameters<typeof books.createMany>) => {
          now += batchMs
          await other.sweep()
          sweeps++
          return target.createMany(...args)
        }
      }
    })
    const writer = new ImportRunner({ imports, stores: { books: slowBooks, students }, node: 'node-a', leaseMs, batch, sweepMs: 3_600_000, clock: () => now, onError: error => t.error(error), onResume: () => {} })
    t.teardown(() => writer.close())
    await imports.start({ import_id: 'leased', keyId: 'key-1', collection: 'books', mode: 'valid', format: 'csv', created_at: new Date(now).toISOString(), idempotencyKey: null }, 'node-a', now + leaseMs)
    const id = (n: number) => `01a21d0c-0000-7000-8000-${String(n).padStart(12, '0')}`
    await imports.stage('leased', Array.from({ length: count }, (_, i) => ({ line: i + 1, recordId: id(i + 1), unique: null, record: JSON.stringify(book({ title: `Row ${i + 1}` })) })))
    const position = await events.head()
    await imports.update('leased', { state: 'running', read: count }, { runner: 'node-a', until: now + leaseMs })
    writer.run('leased')
    const ended = await eventually(async () => (await imports.get('leased'))!, job => job.state !== 'running', 'the import ended')
    t.match(ended, { state: 'succeeded', rows: { read: count, written: count, refused: 0 } }, 'every row counted once')
    t.equal(sweeps, count / batch, 'the other node looked at every batch')
    t.ok(now - started > 3 * leaseMs, `the import took ${now - started} ms of a ${leaseMs} ms lease`)
    t.equal(await imports.claim('node-c', now, now + leaseMs), null, 'an import that ended is claimed by no one')
    const created = await eventually(async () => (await events.read(position, ['book.created'], 1000)).events, seen => seen.length >= count, 'the import\'s events')
    t.same(created.map(e => (JSON.parse(e.envelope) as { subject: string }).subject).sort(), Array.from({ length: count }, (_, i) => `/books/${id(i + 1)}`), 'each record written once, with one event')
  })

  t.test('createMany: every record written as given, each refusal in its place, with the others written', async t => {
    const { books } = await opened(t)
    const outcomes = await books.createMany([
      { values: book({ title: 'One', isbn: '9780306406157' }), given: { id: '01a21d0c-0000-7000-8000-000000000011', createdAt: '2020-01-01T00:00:00.000Z' } },
      { values: book({ title: 'Two', isbn: '9780306406157' }), given: { id: '01a21d0c-0000-7000-8000-000000000012' } },
      { values: book({ title: 'Three' }), given: { id: '01a21d0c-0000-7000-8000-000000000013', createdAt: '2020-01-01T00:00:00.000Z', updatedAt: '2021-01-01T00:00:00.000Z' } }
    ])
    t.match(outcomes, [{ record: { title: 'One', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:00:00.000Z' } }, { name: 'ValueTakenError', field: 'isbn', message: 'Another book already has this isbn' }, { record: { updated_at: '2021-01-01T00:00:00.000Z' } }])
    t.equal(outcomes[1] instanceof ValueTakenError, true)
    t.equal((await books.get('01a21d0c-0000-7000-8000-000000000013'))?.record.updated_at, '2021-01-01T00:00:00.000Z')
    t.equal(await books.get('01a21d0c-0000-7000-8000-000000000012'), null)
  })

  t.test('events of createMany go on the imported lane, every other write\'s on the live one; a read without a lane has both', async t => {
    const { books, events } = await opened(t)
    const start = await events.head()
    const live = await books.create(book({ title: 'Live' }))
    const [imported] = await books.createMany([{ values: book({ title: 'Imported' }), given: { id: '01a21d0c-0000-7000-8000-000000000021' } }])
    await books.replace(live.record.book_id, book({ title: 'Live, changed' }), null)
    const types = ['book.created', 'book.replaced']
    const subjects = async (lane?: EventLane) => (await events.read(start, types, 10, lane)).events.map(e => `${e.type} ${(JSON.parse(e.envelope) as { subject: string }).subject}`)
    const all = await eventually(async () => subjects(), seen => seen.length === 3, 'the three events')
    t.same(all, [`book.created /books/${live.record.book_id}`, `book.created /books/${(imported as Versioned<{ book_id: string }>).record.book_id}`, `book.replaced /books/${live.record.book_id}`])
    t.same(await subjects('live'), [all[0], all[2]])
    t.same(await subjects('imported'), [all[1]])
  })

  t.test('webhook lanes: a lane holds at most max deliveries; claims take the oldest of every lane before any lane\'s second', async t => {
    const { webhooks } = await opened(t)
    const endpoint = async () => (await webhooks.create({ endpointId: crypto.randomUUID(), url: 'https://hooks.example.org/', types: ['book.created'], description: null, keyId: 'admin', secret: 's', createdAt: '2026-11-24T00:00:00.000Z', position: '0' }, 10))!.endpointId
    const [busy, quiet] = [await endpoint(), await endpoint()]
    const deliveries = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ position: `p${from + i}`, body: `{"n":${from + i}}` }))
    t.ok(await webhooks.enqueue({ endpointId: busy, lane: 'imported', from: '0', to: '1', events: deliveries(0, 30), now: 10, max: 30 }))
    t.notOk(await webhooks.enqueue({ endpointId: busy, lane: 'imported', from: '1', to: '2', events: deliveries(30, 1), now: 10, max: 30 }), 'full: nothing queued')
    t.match(await webhooks.get(busy, null), { positions: { live: '0', imported: '1' } }, 'and its cursor stays')
    t.ok(await webhooks.enqueue({ endpointId: busy, lane: 'live', from: '0', to: '1', events: deliveries(100, 2), now: 20, max: 30 }), 'the live lane has room of its own')
    t.ok(await webhooks.enqueue({ endpointId: quiet, lane: 'live', from: '0', to: '1', events: deliveries(200, 1), now: 30, max: 30 }))
    const claimed = await webhooks.claim(100, 200, 4)
    t.same(claimed.map(d => d.body), ['{"n":0}', '{"n":100}', '{"n":200}', '{"n":1}'], 'the first of each lane, oldest first, then the oldest second')
    t.equal((await webhooks.claim(100, 200, 100)).length, 29, 'the rest, later')
  })
}
