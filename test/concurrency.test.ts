// Concurrent creates: every acknowledged create is a distinct listed record; a unique value is won exactly once.
import t from 'tap'
import { build, ada, dune } from './helper.js'

t.test('50 concurrent POST /books give 50 distinct ids, all listed afterwards', async t => {
  const { request } = await build(t)
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
    request({ method: 'POST', url: '/books', payload: { ...dune, title: `Book ${i}`, isbn: null } })))
  t.same(results.map(r => r.statusCode), Array(50).fill(201))
  const ids = new Set(results.map(r => r.json().book_id))
  t.equal(ids.size, 50)
  const list = await request({ method: 'GET', url: '/books?limit=100' })
  t.same(new Set(list.json().items.map((b: { book_id: string }) => b.book_id)), ids)
})

t.test('concurrent creates with one isbn, or one email in any letter case, give exactly one 201 and 409 for the rest', async t => {
  const { request } = await build(t)
  const books = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    request({ method: 'POST', url: '/books', payload: { ...dune, title: `Copy ${i}` } })))
  t.equal(books.filter(r => r.statusCode === 201).length, 1)
  t.equal(books.filter(r => r.statusCode === 409).length, 19)
  const students = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    request({ method: 'POST', url: '/api/students', payload: { ...ada, email: i % 2 === 0 ? 'ada@example.org' : 'ADA@example.org' } })))
  t.equal(students.filter(r => r.statusCode === 201).length, 1)
  t.equal(students.filter(r => r.statusCode === 409).length, 19)
  t.equal((await request({ method: 'GET', url: '/books' })).json().items.length, 1)
  t.equal((await request({ method: 'GET', url: '/api/students' })).json().items.length, 1)
})
