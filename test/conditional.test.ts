// Conditional requests: ETags on single records, 304 on If-None-Match, 412 on a stale If-Match, no lost update.
import fc from 'fast-check'
import t from 'tap'
import { replaceRecord } from '../src/handlers/conditional.js'
import type { Book } from '../src/contract/api-types.js'
import type { BookValues, RecordStore, Versioned } from '../src/storage/types.js'
import { build, ada, dune } from './helper.js'

const unknownId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

t.test('GET, POST and PUT /books carry a strong ETag that changes on every write, even within one millisecond', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const url = created.headers.location as string
  const tag = created.headers.etag as string
  t.match(tag, /^"\d+-[\w-]+"$/, 'strong, quoted')
  const got = await request({ method: 'GET', url })
  t.equal(got.headers.etag, tag, 'GET answers the tag POST gave')
  const tags = new Set([tag])
  // Identical bodies back to back: the content barely changes, the tag must still change each time.
  for (let i = 0; i < 5; i++) {
    const put = await request({ method: 'PUT', url, payload: dune })
    t.equal(put.statusCode, 200)
    tags.add(put.headers.etag as string)
    t.equal((await request({ method: 'GET', url })).headers.etag, put.headers.etag)
  }
  t.equal(tags.size, 6, 'six writes, six tags')
  const other = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null } })
  t.not(other.headers.etag, tag, 'two records at the same revision have different tags')
})

t.test('GET /books/{book_id} answers 304 without a body when If-None-Match names the current tag', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const url = created.headers.location as string
  const tag = created.headers.etag as string
  for (const ifNoneMatch of [tag, `"x", ${tag}`, `W/${tag}`, '*']) {
    const res = await request({ method: 'GET', url, headers: { 'if-none-match': ifNoneMatch } })
    t.equal(res.statusCode, 304, ifNoneMatch)
    t.equal(res.payload, '')
    t.equal(res.headers.etag, tag)
  }
  const head = await request({ method: 'HEAD', url, headers: { 'if-none-match': tag } })
  t.equal(head.statusCode, 304, 'HEAD too')
  const stale = await request({ method: 'GET', url, headers: { 'if-none-match': '"0-old", W/"1-older"' } })
  t.equal(stale.statusCode, 200, 'another tag gets the record')
  const junk = await request({ method: 'GET', url, headers: { 'if-none-match': '"0-old", junk' } })
  t.equal(junk.statusCode, 400, 'a value that is not quoted tags is malformed')
  t.same(stale.json(), created.json())
  await request({ method: 'PUT', url, payload: dune })
  const changed = await request({ method: 'GET', url, headers: { 'if-none-match': tag } })
  t.equal(changed.statusCode, 200, 'after a change the old tag no longer matches')
  const missing = await request({ method: 'GET', url: `/books/${unknownId}`, headers: { 'if-none-match': '*' } })
  t.equal(missing.statusCode, 404)
})

t.test('GET /api/students/{student_id} answers 304 for the current tag', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/api/students', payload: ada })
  const url = created.headers.location as string
  const res = await request({ method: 'GET', url, headers: { 'if-none-match': created.headers.etag as string } })
  t.equal(res.statusCode, 304)
  t.equal((await request({ method: 'GET', url: `/api/students/${unknownId}`, headers: { 'if-none-match': '*' } })).statusCode, 404)
})

t.test('PUT /books/{book_id} with a stale If-Match is 412 and changes nothing; the current tag or * proceeds', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const url = created.headers.location as string
  const first = created.headers.etag as string
  const second = await request({ method: 'PUT', url, headers: { 'if-match': first }, payload: { ...dune, title: 'Dune I' } })
  t.equal(second.statusCode, 200)
  t.equal(second.json().title, 'Dune I')

  const stale = await request({ method: 'PUT', url, headers: { 'if-match': first }, payload: { ...dune, title: 'lost update' } })
  t.equal(stale.statusCode, 412)
  t.match(stale.json(), { type: '/problems/precondition-failed', status: 412, detail: 'The book has changed since the ETag in If-Match was issued' })
  const after = await request({ method: 'GET', url })
  t.equal(after.json().title, 'Dune I', 'nothing changed')
  t.equal(after.headers.etag, second.headers.etag)

  // A tag of another record, a weak tag and garbage never match (strong comparison).
  const other = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null } })
  const otherTag = other.headers.etag as string
  for (const ifMatch of [otherTag, `W/${second.headers.etag}`, '"abc"']) {
    t.equal((await request({ method: 'PUT', url, headers: { 'if-match': ifMatch }, payload: dune })).statusCode, 412, ifMatch)
  }
  // An unquoted tag is malformed, never a false "has changed": 400 says how to send it.
  const bare = (second.headers.etag as string).replace(/"/g, '')
  for (const ifMatch of [bare, 'nonsense', `${second.headers.etag}, junk`]) {
    const malformed = await request({ method: 'PUT', url, headers: { 'if-match': ifMatch }, payload: dune })
    t.equal(malformed.statusCode, 400, ifMatch)
    t.match(malformed.json().errors, [{ parameter: 'if-match', detail: /double quotes/ }])
  }
  const listed = await request({ method: 'PUT', url, headers: { 'if-match': `${first}, ${second.headers.etag}` }, payload: dune })
  t.equal(listed.statusCode, 200, 'a list holding the current tag proceeds')
  t.equal((await request({ method: 'PUT', url, headers: { 'if-match': '*' }, payload: dune })).statusCode, 200, '* proceeds')
  t.equal((await request({ method: 'PUT', url: `/books/${unknownId}`, headers: { 'if-match': '*' }, payload: dune })).statusCode, 404,
    'an unknown id is 404 whatever the precondition')
})

t.test('PUT /api/students/{student_id} honours If-Match', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/api/students', payload: ada })
  const url = created.headers.location as string
  const tag = created.headers.etag as string
  t.equal((await request({ method: 'PUT', url, headers: { 'if-match': tag }, payload: { ...ada, status: 'graduated' } })).statusCode, 200)
  const stale = await request({ method: 'PUT', url, headers: { 'if-match': tag }, payload: { ...ada, status: 'withdrawn' } })
  t.equal(stale.statusCode, 412)
  t.equal(stale.json().detail, 'The student has changed since the ETag in If-Match was issued')
  t.equal((await request({ method: 'GET', url })).json().status, 'graduated')
})

t.test('DELETE /books/{book_id} with a stale If-Match is 412 and keeps the book; the current tag deletes it', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const url = created.headers.location as string
  const updated = await request({ method: 'PUT', url, payload: dune })
  t.equal((await request({ method: 'DELETE', url, headers: { 'if-match': created.headers.etag as string } })).statusCode, 412)
  t.equal((await request({ method: 'GET', url })).statusCode, 200, 'still there')
  t.equal((await request({ method: 'DELETE', url, headers: { 'if-match': updated.headers.etag as string } })).statusCode, 204)
  t.equal((await request({ method: 'DELETE', url, headers: { 'if-match': '*' } })).statusCode, 404)
})

t.test('of concurrent PUTs holding the same tag exactly one succeeds; the others get 412', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const url = created.headers.location as string
  const tag = created.headers.etag as string
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    request({ method: 'PUT', url, headers: { 'if-match': tag }, payload: { ...dune, title: `writer ${i}` } })))
  const winners = results.filter(r => r.statusCode === 200)
  t.equal(winners.length, 1, 'one winner')
  t.equal(results.filter(r => r.statusCode === 412).length, 9, 'nine 412s')
  const stored = await request({ method: 'GET', url })
  t.equal(stored.json().title, winners[0]!.json().title, 'the winner’s write is the stored one')
})

t.test('a stale read-modify-write (GET, change a field, PUT all of it back with If-Match) is a 412, before the body is looked at', async t => {
  const { request } = await build(t)
  for (const { path, payload, change, idField, kind } of [
    { path: '/books', payload: dune, change: { title: 'Dune (mine)' }, idField: 'book_id', kind: 'book' },
    { path: '/api/students', payload: ada, change: { status: 'graduated' }, idField: 'student_id', kind: 'student' }
  ]) {
    const url = (await request({ method: 'POST', url: path, payload })).headers.location as string
    const read = await request({ method: 'GET', url })
    const theirs = await request({ method: 'PUT', url, payload: { ...read.json() as object, ...change } })
    t.equal(theirs.statusCode, 200, 'someone else changes the record')
    const mine = await request({ method: 'PUT', url, headers: { 'if-match': read.headers.etag as string }, payload: { ...read.json() as object, ...change } })
    t.equal(mine.statusCode, 412, `${kind}: the precondition decides, not the old updated_at in the body`)
    t.equal(mine.json().detail, `The ${kind} has changed since the ETag in If-Match was issued`)
    t.notOk(mine.payload.includes(theirs.json().updated_at), 'and the newer updated_at is not given away')
    // Even an id that is not the path's is looked at only after the precondition.
    const wrongId = await request({ method: 'PUT', url, headers: { 'if-match': read.headers.etag as string }, payload: { ...read.json() as object, [idField]: unknownId } })
    t.equal(wrongId.statusCode, 412, 'a body that is wrong as well is still a 412 first')
    t.equal((await request({ method: 'GET', url })).headers.etag, theirs.headers.etag, 'nothing was written')
    // Without a precondition the write is unconditional: the old timestamps in the body are ignored.
    const blind = await request({ method: 'PUT', url, payload: { ...read.json() as object, ...change } })
    t.equal(blind.statusCode, 200, `${kind}: without If-Match the old updated_at in the body refuses nothing`)
    t.equal(blind.json().created_at, read.json().created_at, 'the record keeps its own created_at')
    t.ok(blind.json().updated_at >= theirs.json().updated_at, 'and an updated_at from the server, not the older one sent')
    // The current read, sent back whole with its tag, goes through.
    const again = await request({ method: 'GET', url })
    const redone = await request({ method: 'PUT', url, headers: { 'if-match': again.headers.etag as string }, payload: { ...again.json() as object, ...change } })
    t.equal(redone.statusCode, 200, 'read again, redo the change: 200')
  }
  // The id alone sent back: checked after the precondition too, and the write keeps If-Match's own check.
  const created = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null } })
  const own = { ...dune, isbn: null, book_id: created.json().book_id }
  const stale = await request({ method: 'PUT', url: created.headers.location as string, headers: { 'if-match': '"9-2d5c8e1a4b60"' }, payload: { ...own, book_id: unknownId } })
  t.equal(stale.statusCode, 412, 'a tag that does not match, then a wrong id: 412')
  const idOnly = await request({ method: 'PUT', url: created.headers.location as string, headers: { 'if-match': created.headers.etag as string }, payload: own })
  t.equal(idOnly.statusCode, 200, 'its own id with the current tag: 200')
  for (const bookId of [unknownId, created.json().book_id]) {
    const missing = await request({ method: 'PUT', url: `/books/${unknownId}`, headers: { 'if-match': '"1-2d5c8e1a4b60"' }, payload: { ...dune, book_id: bookId, updated_at: '2026-11-21T09:30:00.000Z' } })
    t.equal(missing.statusCode, 404, 'no record: 404 before the precondition (RFC 9110 §13.2.1), and before an id that is not the path\'s')
  }
})

t.test('a tag this service never gave the record says that it does not match, not that the record changed', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const url = created.headers.location as string
  const id = url.split('/').pop()!
  const first = created.headers.etag as string
  const current = await request({ method: 'PUT', url, payload: dune })
  const other = (await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null } })).headers.etag as string
  const neutral = 'The ETag in If-Match does not match the book\'s current one, nor any it had before: GET the book for its current ETag'
  const changed = 'The book has changed since the ETag in If-Match was issued'
  // Well-formed tags in any form but this record's: other records', weak ones, ones from elsewhere.
  const foreign = fc.oneof(
    fc.constantFrom('"zzz"', other, `W/${current.headers.etag as string}`, `W/${first}`, `"9-${id.slice(-12)}"`),
    fc.stringMatching(/^[\x21\x23-\x7e]{0,20}$/).filter(tag => !tag.endsWith(id.slice(-12))).map(tag => `"${tag}"`)
  )
  const bodies = [dune, { ...current.json() as object, title: 'x' }]
  await fc.assert(fc.asyncProperty(foreign, fc.constantFrom(...bodies), async (ifMatch, payload) => {
    const put = await request({ method: 'PUT', url, headers: { 'if-match': ifMatch }, payload })
    const del = await request({ method: 'DELETE', url, headers: { 'if-match': ifMatch } })
    return put.statusCode === 412 && put.json().detail === neutral && del.statusCode === 412 && del.json().detail === neutral
  }), { numRuns: 30 })
  for (const ifMatch of [first, `"zzz", ${first}`]) {
    t.equal((await request({ method: 'PUT', url, headers: { 'if-match': ifMatch }, payload: dune })).json().detail, changed, `${ifMatch}: an earlier tag of the book`)
    t.equal((await request({ method: 'PUT', url, headers: { 'if-match': ifMatch }, payload: current.json() })).json().detail, changed, 'with the read-only fields too')
    t.equal((await request({ method: 'DELETE', url, headers: { 'if-match': ifMatch } })).json().detail, changed, 'and on DELETE')
  }
})

t.test('a replacement\'s timestamps are never compared: only an id other than the path\'s reads the record before the write', async t => {
  const record = { book_id: '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', ...dune, isbn: null, created_at: '2026-11-21T09:30:00.000Z', updated_at: '2026-11-21T09:30:00.000Z' }
  const written: Versioned<Book> = { record: { ...record, updated_at: '2026-11-22T10:00:00.000Z' }, revision: 2 }
  const reads: string[] = []
  const writes: (readonly number[] | null)[] = []
  const store = {
    get: async (id: string) => { reads.push(id); return { record, revision: 1 } },
    replace: async (_id: string, _values: BookValues, expected: readonly number[] | null) => { writes.push(expected); return written }
  } as unknown as RecordStore<Book, BookValues>
  const values = { title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null }
  const replacement = { kind: 'book', idField: 'book_id', id: record.book_id, values, ifMatch: undefined }
  // Timestamps of another record, in another notation, of another century: none of them is looked at.
  for (const body of [{ ...record, created_at: '1999-12-31t23:59:60z', updated_at: '2026-11-21T10:30:00+01:00' }, { ...record, book_id: record.book_id.toUpperCase() }, { ...dune }]) {
    t.equal(await replaceRecord(store, { ...replacement, body }), written)
  }
  t.same(await replaceRecord(store, { ...replacement, body: record, ifMatch: '"1-2d5c8e1a4b60"' }), written)
  t.same(reads, [], 'the record was not read first')
  t.same(writes, [null, null, null, [1]], 'storage got If-Match\'s revisions to check in the write')
  await t.rejects(replaceRecord(store, { ...replacement, body: { ...record, book_id: '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61' }, ifMatch: '"1-2d5c8e1a4b60"' }), { statusCode: 400, errors: [{ pointer: '#/book_id' }] })
  t.same(reads, [record.book_id], 'another id is refused after reading the record (404 and 412 come first)')
  t.equal(writes.length, 4, 'and nothing is written')
})
