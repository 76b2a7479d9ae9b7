// The book operations through the real app: every outcome the contract declares.
import t from 'tap'
import { build, dune } from './helper.js'

const unknownId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

t.test('POST /books creates a book with a UUIDv7, the ISBN-13 form and a Location', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/books', payload: dune })
  t.equal(res.statusCode, 201)
  const book = res.json()
  t.match(book.book_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.equal(res.headers.location, `/books/${book.book_id}`)
  t.same({ ...book, book_id: 'x', created_at: 'x', updated_at: 'x' },
    { book_id: 'x', title: 'Dune', author: 'Frank Herbert', isbn: '9780441013593', published_year: 1965, created_at: 'x', updated_at: 'x' })
  t.equal(book.created_at, book.updated_at)
  t.ok(Date.parse(book.created_at) <= Date.now())
  const fetched = await request({ method: 'GET', url: res.headers.location as string })
  t.same(fetched.json(), book)
})

t.test('POST /books accepts an ISBN-10 and leaves optional fields null', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/books', payload: { title: 'Dune', author: 'F. H.', isbn: '0 441 01359 7' } })
  t.equal(res.statusCode, 201)
  t.equal(res.json().isbn, '9780441013593')
  t.equal(res.json().published_year, null)
  const tenWithX = await request({ method: 'POST', url: '/books', payload: { title: 'T', author: 'A', isbn: '0-8044-2957-X' } })
  t.equal(tenWithX.json().isbn, '9780804429573')
})

t.test('POST /books rejects a wrong check digit (format: isbn) and a year beyond the contract\'s bound, listing both', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: '978-0-441-01359-4', published_year: 10_000 } })
  t.equal(res.statusCode, 400)
  t.same(res.json().errors, [
    { detail: 'is not a valid ISBN-10 or ISBN-13: its check digit is wrong', pointer: '#/isbn' },
    { detail: 'must be 9999 or less', pointer: '#/published_year' }
  ])
  const tenBad = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: '0441013598' } })
  t.equal(tenBad.statusCode, 400)
  // The bound is the contract's fixed one, never the calendar: an announced book may carry a future year.
  const ok = await request({ method: 'POST', url: '/books', payload: { ...dune, published_year: 9999 } })
  t.equal(ok.statusCode, 201)
  const list = await request({ method: 'GET', url: '/books' })
  t.equal(list.json().items.length, 1, 'only the valid book was stored')
})

t.test('POST /books rejects unknown fields, server fields, wrong types and missing fields with every problem listed', async t => {
  const { request } = await build(t)
  const res = await request({
    method: 'POST',
    url: '/books',
    payload: { title: 7, published_year: '1965', book_id: unknownId, rating: 5 }
  })
  t.equal(res.statusCode, 400)
  t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
  const problem = res.json()
  t.match(problem, { type: '/problems/validation-error', title: 'Request validation failed', status: 400, instance: '/books' })
  t.same(new Set(problem.errors.map((e: { pointer: string }) => e.pointer)),
    new Set(['#/author', '#/book_id', '#/rating', '#/title', '#/published_year']))
  const list = await request({ method: 'GET', url: '/books' })
  t.same(list.json().items, [], 'nothing was stored')
})

t.test('POST /books rejects empty and over-long strings', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'POST', url: '/books', payload: { title: '', author: 'a'.repeat(301) } })
  t.equal(res.statusCode, 400)
  t.same(res.json().errors.map((e: { pointer: string }) => e.pointer).sort(), ['#/author', '#/title'])
})

t.test('POST /books answers 409 for an ISBN another book holds, in either form', async t => {
  const { request } = await build(t)
  t.equal((await request({ method: 'POST', url: '/books', payload: dune })).statusCode, 201)
  const res = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: '0441013597' } })
  t.equal(res.statusCode, 409)
  t.match(res.json(), { type: '/problems/already-exists', status: 409, detail: 'Another book already has this isbn' })
})

t.test('GET /books/{book_id} answers 404 for an unknown id and 400 for a malformed one', async t => {
  const { request } = await build(t)
  const missing = await request({ method: 'GET', url: `/books/${unknownId}` })
  t.equal(missing.statusCode, 404)
  t.match(missing.json(), { type: 'about:blank', title: 'Not Found', status: 404, detail: `No book has the id ${unknownId}` })
  const malformed = await request({ method: 'GET', url: '/books/42' })
  t.equal(malformed.statusCode, 400)
  t.same(malformed.json().errors, [{ detail: 'must be an id such as 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60, as returned when the record was created', parameter: 'book_id' }])
})

t.test('HEAD /books/{book_id} answers like GET without a body', async t => {
  const { request } = await build(t)
  const created = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  const res = await request({ method: 'HEAD', url: `/books/${created.book_id}` })
  t.equal(res.statusCode, 200)
  t.equal(res.payload, '')
})

t.test('PUT /books/{book_id} replaces every writable field and clears omitted ones', async t => {
  const { request } = await build(t)
  const created = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  await new Promise(resolve => setTimeout(resolve, 5))
  const res = await request({ method: 'PUT', url: `/books/${created.book_id}`, payload: { title: 'Dune Messiah', author: 'Frank Herbert' } })
  t.equal(res.statusCode, 200)
  const updated = res.json()
  t.match(updated, { book_id: created.book_id, title: 'Dune Messiah', isbn: null, published_year: null, created_at: created.created_at })
  t.ok(updated.updated_at > created.updated_at, 'updated_at moves forward')
  t.same((await request({ method: 'GET', url: `/books/${created.book_id}` })).json(), updated)
})

t.test('PUT /books/{book_id} never creates, and rejects bad bodies and taken ISBNs', async t => {
  const { request } = await build(t)
  const missing = await request({ method: 'PUT', url: `/books/${unknownId}`, payload: dune })
  t.equal(missing.statusCode, 404)
  t.same((await request({ method: 'GET', url: '/books' })).json().items, [])

  const first = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  const second = (await request({ method: 'POST', url: '/books', payload: { title: 'Emma', author: 'Jane Austen' } })).json()
  const taken = await request({ method: 'PUT', url: `/books/${second.book_id}`, payload: { title: 'Emma', author: 'Jane Austen', isbn: dune.isbn } })
  t.equal(taken.statusCode, 409)
  const bad = await request({ method: 'PUT', url: `/books/${first.book_id}`, payload: { title: 'x', author: 'y', created_at: 'now' } })
  t.equal(bad.statusCode, 400)
  t.same((await request({ method: 'GET', url: `/books/${first.book_id}` })).json(), first, 'the failed PUT changed nothing')
  t.same((await request({ method: 'GET', url: `/books/${second.book_id}` })).json(), second)
})

t.test('DELETE /books/{book_id} deletes once, then answers 404', async t => {
  const { request } = await build(t)
  const created = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  const res = await request({ method: 'DELETE', url: `/books/${created.book_id}` })
  t.equal(res.statusCode, 204)
  t.equal(res.payload, '')
  t.equal((await request({ method: 'GET', url: `/books/${created.book_id}` })).statusCode, 404)
  t.equal((await request({ method: 'DELETE', url: `/books/${created.book_id}` })).statusCode, 404)
  const again = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  t.not(again.book_id, created.book_id, 'a new book gets a new id; the ISBN is free again')
})

t.test('PUT takes back the book as GET returned it, one field changed; its id must be the book\'s own, its timestamps are ignored', async t => {
  const { request } = await build(t)
  const book = (await request({ method: 'POST', url: '/books', payload: dune })).json()
  const url = `/books/${book.book_id}`
  const read = await request({ method: 'GET', url })
  const changed = await request({ method: 'PUT', url, headers: { 'if-match': read.headers.etag as string }, payload: { ...read.json() as object, published_year: 1966 } })
  t.equal(changed.statusCode, 200, 'the round trip works')
  t.equal(changed.json().published_year, 1966)
  t.equal(changed.json().created_at, book.created_at)
  const otherId = await request({ method: 'PUT', url, payload: { ...read.json() as object, book_id: '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', title: 'Other' } })
  t.equal(otherId.statusCode, 400)
  t.same(otherId.json().errors, [{ detail: `must be the id in the path, ${book.book_id}, or be left out`, pointer: '#/book_id' }], 'a changed id is named, the old updated_at beside it is not')
  t.equal((await request({ method: 'GET', url })).json().title, 'Dune', 'nothing was written')
  // Any timestamps the schema allows, the book's own or not: ignored, never stored.
  const before = new Date().toISOString()
  const moved = await request({ method: 'PUT', url, payload: { ...read.json() as object, book_id: book.book_id.toUpperCase(), title: 'Dune Messiah', created_at: '1969-07-20t20:17:40+00:00', updated_at: '2999-12-31T23:59:60.5Z' } })
  t.equal(moved.statusCode, 200, 'the id in upper case and timestamps of another time, in other notations: 200')
  t.match(moved.json(), { book_id: book.book_id, title: 'Dune Messiah', created_at: book.created_at })
  t.ok(moved.json().updated_at >= before && moved.json().updated_at <= new Date().toISOString(), 'updated_at is the server\'s')
  t.same((await request({ method: 'GET', url })).json(), moved.json(), 'and that is what was stored')
  const created = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null, book_id: book.book_id } })
  t.same(created.json().errors, [{ detail: 'is not a field of this resource', pointer: '#/book_id' }], 'a create takes no server-set field')
  t.equal((await request({ method: 'PUT', url: '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', payload: { ...dune, updated_at: book.updated_at } })).statusCode, 404, 'an unknown book is a 404 still')
})

t.test('text refuses only NUL (U+0000), on every engine; any other character is stored as sent', async t => {
  const { request } = await build(t)
  const refused = await request({ method: 'POST', url: '/books', payload: { title: 'Du\u0000ne', author: 'A\u0000' } })
  t.equal(refused.statusCode, 400)
  t.same(refused.json().errors.map((e: { pointer: string, detail: string }) => [e.pointer, e.detail]), [
    ['#/title', 'must not contain the NUL character (U+0000)'],
    ['#/author', 'must not contain the NUL character (U+0000)']
  ])
  const student = await request({ method: 'POST', url: '/api/students', payload: { name: '\u0000', email: 'nul@example.org' } })
  t.equal(student.statusCode, 400)
  const odd = { title: '\u0001\u001f\u007f\ud83d\ude00 \u202e\ufeff', author: '\\ \' " \u2028' }
  const stored = await request({ method: 'POST', url: '/books', payload: odd })
  t.equal(stored.statusCode, 201)
  t.match(stored.json(), odd)
  t.match((await request({ method: 'GET', url: stored.headers.location as string })).json(), odd, 'read back as sent')
  t.equal((await request({ method: 'GET', url: '/books' })).json().items.length, 1, 'the refused writes stored nothing')
})

t.test('an id in upper case names the same book (UUIDs ignore case), on every engine', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune })
  const id: string = created.json().book_id
  const upper = `/books/${id.toUpperCase()}`
  const got = await request({ method: 'GET', url: upper })
  t.equal(got.statusCode, 200)
  t.equal(got.json().book_id, id, 'answered with the id as the service wrote it')
  t.equal(got.headers.etag, created.headers.etag)
  const put = await request({ method: 'PUT', url: upper, payload: { ...dune, title: 'Dune!' }, headers: { 'if-match': created.headers.etag as string } })
  t.equal(put.statusCode, 200)
  t.equal((await request({ method: 'DELETE', url: upper })).statusCode, 204)
  t.equal((await request({ method: 'GET', url: `/books/${id}` })).statusCode, 404)
})
