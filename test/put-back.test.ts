// The read-change-PUT of docs/safe-writes.md as a validating proxy sees it: Prism accepts the body a GET returned, sent back changed.
import t from 'tap'
import { prismChecker } from './prism.js'
import { ada, build, dune } from './helper.js'

t.test('Prism, validating requests as a proxy would, lets through a record PUT back as read, and its 200 or 412, or 200 without If-Match', async t => {
  const { app, request } = await build(t)
  const check = await prismChecker((await app.inject({ method: 'GET', url: '/docs/json' })).json())
  for (const { path, payload, change } of [
    { path: '/books', payload: dune, change: { published_year: 1966 } },
    { path: '/api/students', payload: ada, change: { status: 'graduated' } }
  ]) {
    const url = (await request({ method: 'POST', url: path, payload })).headers.location as string
    const read = await request({ method: 'GET', url })
    const put = { method: 'PUT', url, headers: { 'content-type': 'application/json', 'if-match': read.headers.etag as string }, payload: JSON.stringify({ ...read.json() as object, ...change }) }
    const replaced = await request(put)
    t.equal(replaced.statusCode, 200, `${path}: the record as read, one field changed, is replaced`)
    t.same(check(put, replaced, true), [], 'Prism finds nothing to refuse in the request or its answer')
    const stale = await request(put)
    t.equal(stale.statusCode, 412, 'the same PUT again holds a stale tag')
    t.same(check(put, stale, true), [], 'and Prism finds nothing wrong with that exchange either')
    const { 'if-match': _, ...unconditional } = put.headers
    const blind = { ...put, headers: unconditional }
    const overwritten = await request(blind)
    t.equal(overwritten.statusCode, 200, 'without If-Match, the body read before the change is written: its old timestamps are ignored')
    t.equal(overwritten.json().created_at, read.json().created_at, 'the record keeps its created_at')
    t.same(check(blind, overwritten, true), [], 'Prism agrees')
  }
})
