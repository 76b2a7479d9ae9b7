// The read cache (RECORD_CACHE_SIZE): never a stale answer, whoever wrote to the file.
import t, { type Test } from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { adminKey, ada, build, dune, tempDatabase } from './helper.js'

/** The service on a real port, and a GET over a socket, as a client after another process's write would send it. */
async function serve (t: Test, recordCacheSize: number) {
  const databasePath = tempDatabase(t)
  const api = await build(t, { databasePath, recordCacheSize })
  const origin = await api.app.listen({ port: 0, host: '127.0.0.1' })
  const get = async (path: string) => {
    const res = await fetch(origin + path, { headers: { authorization: `Bearer ${adminKey}` } })
    const body = res.status === 200 ? await res.json() as { title?: string, name?: string, items?: { title: string, book_id: string }[] } : null
    return { status: res.status, etag: res.headers.get('etag'), body }
  }
  // Another connection to the same file, as the keys CLI, sqlite3 or another process would open.
  const other = openSqliteRepositories(databasePath)
  t.teardown(() => other.close())
  return { ...api, get, other }
}

for (const recordCacheSize of [10_000, 1, 0]) {
  t.test(`RECORD_CACHE_SIZE=${recordCacheSize}: a write by another process shows in the next answer`, async t => {
    const { request, get, other } = await serve(t, recordCacheSize)
    const book = (await request({ method: 'POST', url: '/books', payload: dune })).json()
    const student = (await request({ method: 'POST', url: '/api/students', payload: ada })).json()
    const first = await get(`/books/${book.book_id}`)
    t.equal(first.body?.title, 'Dune')
    t.equal((await get('/books')).body?.items?.[0]?.title, 'Dune')
    t.equal((await get(`/api/students/${student.student_id}`)).body?.name, 'Ada Lovelace')

    await other.books.replace(book.book_id, { ...dune, title: 'Dune Messiah' }, null)
    await other.students.replace(student.student_id, { ...ada, status: 'active', name: 'Ada King' }, null)
    const after = await get(`/books/${book.book_id}`)
    t.equal(after.body?.title, 'Dune Messiah', 'the record is read again')
    t.not(after.etag, first.etag, 'with its new ETag')
    t.equal((await get('/books')).body?.items?.[0]?.title, 'Dune Messiah', 'and so is the list page')
    t.equal((await get(`/api/students/${student.student_id}`)).body?.name, 'Ada King')

    const added = await other.books.create({ title: 'Children of Dune', author: 'Frank Herbert', isbn: null, published_year: 1976 })
    t.same((await get('/books')).body?.items?.map(b => b.book_id), [book.book_id, added.record.book_id])

    t.ok(await other.books.delete(book.book_id, null))
    t.equal((await get(`/books/${book.book_id}`)).status, 404, 'a book deleted elsewhere is gone')
    t.equal((await get('/books')).body?.items?.length, 1)
  })

  t.test(`RECORD_CACHE_SIZE=${recordCacheSize}: the service's own writes show in its next answer`, async t => {
    const { request } = await serve(t, recordCacheSize)
    const ids: string[] = []
    for (const title of ['A', 'B', 'C']) ids.push((await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null, title } })).json().book_id)
    t.same((await request({ url: '/books?limit=2' })).json().items.map((b: { title: string }) => b.title), ['A', 'B'])
    t.equal((await request({ url: `/books/${ids[0]}` })).json().title, 'A')

    await request({ method: 'PUT', url: `/books/${ids[0]}`, payload: { ...dune, isbn: null, title: 'A2' } })
    t.equal((await request({ url: `/books/${ids[0]}` })).json().title, 'A2')
    t.same((await request({ url: '/books?limit=2' })).json().items.map((b: { title: string }) => b.title), ['A2', 'B'])

    // A refused write (412) changes nothing, and the record is still answered right.
    t.equal((await request({ method: 'PUT', url: `/books/${ids[0]}`, headers: { 'if-match': '"1-000000000000"' }, payload: dune })).statusCode, 412)
    t.equal((await request({ url: `/books/${ids[0]}` })).json().title, 'A2')

    await request({ method: 'DELETE', url: `/books/${ids[1]}` })
    t.equal((await request({ url: `/books/${ids[1]}` })).statusCode, 404)
    t.same((await request({ url: '/books?limit=2' })).json().items.map((b: { title: string }) => b.title), ['A2', 'C'])
  })
}

t.test('the cache holds at most RECORD_CACHE_SIZE records and still answers every one', async t => {
  const { request } = await serve(t, 2)
  const ids: string[] = []
  for (const title of ['A', 'B', 'C', 'D']) ids.push((await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null, title } })).json().book_id)
  for (let round = 0; round < 2; round++) {
    t.same(await Promise.all(ids.map(async id => (await request({ url: `/books/${id}` })).json().title)), ['A', 'B', 'C', 'D'])
  }
})
