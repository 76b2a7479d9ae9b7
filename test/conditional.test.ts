// Conditional requests: ETags on single records, 304 on If-None-Match, 412 on a stale If-Match, no lost update.
import t from 'tap'
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
