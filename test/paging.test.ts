// Cursor paging of both lists: creation order, limits, Link headers, forged and foreign cursors.
import t from 'tap'
import { CursorCodec } from '../src/http/cursor.js'
import { bookList } from '../src/handlers/books.js'
import { signCursor } from '../src/handlers/paging.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { build } from './helper.js'

t.test('GET /books pages through every book in creation order with next_cursor and Link', async t => {
  const { request } = await build(t)
  const titles = Array.from({ length: 7 }, (_, i) => `Book ${i}`)
  for (const title of titles) await request({ method: 'POST', url: '/books', payload: { title, author: 'A' } })

  const seen: string[] = []
  let url: string | null = '/books?limit=3'
  const links: string[] = []
  while (url !== null) {
    const res = await request({ method: 'GET', url })
    t.equal(res.statusCode, 200)
    const page = res.json()
    seen.push(...page.items.map((b: { title: string }) => b.title))
    const next = page.next_cursor === null ? null : `/books?limit=3&sort=created_at&cursor=${page.next_cursor}`
    t.equal(res.headers.link, next === null ? undefined : `<${next}>; rel="next"`, 'Link mirrors next_cursor')
    if (res.headers.link !== undefined) links.push(String(res.headers.link))
    url = next
  }
  t.same(seen, titles)
  t.equal(links.length, 2)
})

t.test('GET /books defaults to 20 items and enforces limit 1..100', async t => {
  const { request } = await build(t)
  for (let i = 0; i < 21; i++) await request({ method: 'POST', url: '/books', payload: { title: `B${i}`, author: 'A' } })
  const first = await request({ method: 'GET', url: '/books' })
  t.equal(first.json().items.length, 20)
  t.type(first.json().next_cursor, 'string')
  for (const limit of ['0', '101', 'abc', '1.5']) {
    const res = await request({ method: 'GET', url: `/books?limit=${limit}` })
    t.equal(res.statusCode, 400, `limit=${limit}`)
    t.equal(res.json().errors[0].parameter, 'limit')
  }
  t.equal((await request({ method: 'GET', url: '/books?limit=100' })).json().items.length, 21)
})

t.test('GET /books and GET /api/students refuse forged, tampered and foreign cursors', async t => {
  const { request } = await build(t)
  for (let i = 0; i < 2; i++) {
    await request({ method: 'POST', url: '/books', payload: { title: `B${i}`, author: 'A' } })
    await request({ method: 'POST', url: '/api/students', payload: { name: `S${i}`, email: `s${i}@example.org` } })
  }
  const bookCursor = (await request({ method: 'GET', url: '/books?limit=1' })).json().next_cursor
  const studentCursor = (await request({ method: 'GET', url: '/api/students?limit=1' })).json().next_cursor
  t.equal((await request({ method: 'GET', url: `/api/students?cursor=${studentCursor}` })).json().items.length, 1)

  const forged = Buffer.from('0').toString('base64url') + '.' + bookCursor.split('.')[1]
  const cases: [string, string][] = [
    [`/api/students?cursor=${bookCursor}`, 'a books cursor on students'],
    [`/books?cursor=${studentCursor}`, 'a students cursor on books'],
    [`/books?cursor=${forged}`, 'a forged position'],
    ['/books?cursor=abc.def', 'garbage'],
    ['/books?cursor=a.b.c', 'too many parts']
  ]
  for (const [url, what] of cases) {
    const res = await request({ method: 'GET', url })
    t.equal(res.statusCode, 400, what)
    t.equal(res.json().errors[0].parameter, 'cursor', what)
  }
})

t.test('GET /books keeps its place when earlier books are deleted', async t => {
  const { request } = await build(t)
  const ids: string[] = []
  for (let i = 0; i < 4; i++) ids.push((await request({ method: 'POST', url: '/books', payload: { title: `B${i}`, author: 'A' } })).json().book_id)
  const first = (await request({ method: 'GET', url: '/books?limit=2' })).json()
  await request({ method: 'DELETE', url: `/books/${ids[0]}` })
  await request({ method: 'DELETE', url: `/books/${ids[1]}` })
  const second = (await request({ method: 'GET', url: `/books?limit=2&cursor=${first.next_cursor}` })).json()
  t.same(second.items.map((b: { book_id: string }) => b.book_id), ids.slice(2))
  t.equal(second.next_cursor, null)
})

t.test('signCursor makes the cursor the list itself would issue for a position of a query', async t => {
  const repositories = openSqliteRepositories(':memory:')
  const { request } = await build(t, {}, { repositories })
  for (const title of ['Dune', 'Emma', 'Ulysses']) await request({ method: 'POST', url: '/books', payload: { title, author: 'A' } })
  const codec = new CursorCodec(await repositories.cursorSecret())
  const afterFirst = signCursor(codec, bookList, { sort: 'title' }, JSON.stringify({ k: ['dune', '1'] }))
  const page = (await request({ method: 'GET', url: `/books?sort=title&cursor=${afterFirst}` })).json()
  t.same(page.items.map((b: { title: string }) => b.title), ['Emma', 'Ulysses'], 'the page continues after the signed position')
  t.equal((await request({ method: 'GET', url: `/books?sort=-title&cursor=${afterFirst}` })).statusCode, 400, 'bound to its query')
})

t.test('a leap second passes the date-time format but names no instant the service can compare: a 400 naming the parameter', async t => {
  const { request } = await build(t)
  const res = await request({ method: 'GET', url: '/books?updated_since=2016-12-31T23:59:60Z' })
  t.equal(res.statusCode, 400)
  t.same(res.json().errors, [{ detail: 'is not a valid instant', parameter: 'updated_since' }])
})
