// Idempotent creates: a retried POST with the same Idempotency-Key replays the first response and creates nothing.
import t, { type Test } from 'tap'
import type { Config } from '../src/config/index.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import type { Repositories } from '../src/storage/types.js'
import { createKey } from '../src/access/api-keys.js'
import { build, ada, dune, tempDatabase } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'
import { creationOrder } from '../src/storage/list-sql.js'

t.test('POST /books retried with the same key and body replays the first 201 and creates nothing', async t => {
  const { request } = await build(t)
  const headers = { 'idempotency-key': '"8e03978e-40d5-43e8-bc93-6894a57f9324"' }
  const first = await request({ method: 'POST', url: '/books', headers, payload: dune })
  t.equal(first.statusCode, 201)
  t.notOk(first.headers['idempotent-replayed'])
  const retry = await request({ method: 'POST', url: '/books', headers, payload: dune })
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.headers.location, first.headers.location)
  t.equal(retry.headers.etag, first.headers.etag)
  t.match(retry.headers['content-type'], /^application\/json/)
  t.same(retry.json(), first.json())
  // The same meaning in another spelling (ISBN-10, bare key) is the same request.
  const respelled = await request({ method: 'POST', url: '/books', headers: { 'idempotency-key': '8e03978e-40d5-43e8-bc93-6894a57f9324' }, payload: { ...dune, isbn: '0-441-01359-7' } })
  t.equal(respelled.statusCode, 201)
  t.same(respelled.json(), first.json())
  const list = await request({ method: 'GET', url: '/books' })
  t.equal(list.json().items.length, 1, 'one book')
})

t.test('the replay is the first response even after the record changed', async t => {
  const { request } = await build(t)
  const headers = { 'idempotency-key': 'k1' }
  const first = await request({ method: 'POST', url: '/api/students', headers, payload: ada })
  await request({ method: 'PUT', url: first.headers.location as string, payload: { ...ada, status: 'graduated' } })
  const retry = await request({ method: 'POST', url: '/api/students', headers, payload: ada })
  t.equal(retry.statusCode, 201)
  t.same(retry.json(), first.json(), 'what the first caller was told, not the current state')
})

t.test('the same key with a different body is 422 and creates nothing', async t => {
  const { request } = await build(t)
  const headers = { 'idempotency-key': 'k1' }
  t.equal((await request({ method: 'POST', url: '/books', headers, payload: dune })).statusCode, 201)
  const reused = await request({ method: 'POST', url: '/books', headers, payload: { ...dune, title: 'Dune Messiah', isbn: null } })
  t.equal(reused.statusCode, 422)
  t.match(reused.json(), { type: '/problems/idempotency-key-reused', status: 422 })
  t.equal((await request({ method: 'GET', url: '/books' })).json().items.length, 1)
})

t.test('keys are scoped to the operation, and requests without a key are never deduplicated', async t => {
  const { request } = await build(t)
  const headers = { 'idempotency-key': 'shared' }
  t.equal((await request({ method: 'POST', url: '/books', headers, payload: dune })).statusCode, 201)
  const student = await request({ method: 'POST', url: '/api/students', headers, payload: ada })
  t.equal(student.statusCode, 201, 'the same key on another operation is a new request')
  t.notOk(student.headers['idempotent-replayed'])
  const a = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null } })
  const b = await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null } })
  t.not(a.json().book_id, b.json().book_id)
})

t.test('a failed first attempt is not stored: the retry is handled afresh', async t => {
  const { request } = await build(t)
  const taken = await request({ method: 'POST', url: '/books', payload: dune })
  const headers = { 'idempotency-key': 'k2' }
  t.equal((await request({ method: 'POST', url: '/books', headers, payload: dune })).statusCode, 409)
  await request({ method: 'DELETE', url: taken.headers.location as string })
  t.equal((await request({ method: 'POST', url: '/books', headers, payload: dune })).statusCode, 201)
})

t.test('an Idempotency-Key over 255 characters or with control characters is 400', async t => {
  const { request } = await build(t)
  for (const key of ['x'.repeat(256), '"' + 'x'.repeat(256) + '"', 'a\tb', '']) {
    const res = await request({ method: 'POST', url: '/books', headers: { 'idempotency-key': key }, payload: dune })
    t.equal(res.statusCode, 400, JSON.stringify(key).slice(0, 20))
    t.same(res.json().errors[0].parameter, 'idempotency-key')
  }
  t.equal((await request({ method: 'POST', url: '/books', headers: { 'idempotency-key': 'x'.repeat(255) }, payload: dune })).statusCode, 201)
})

t.test('keys expire after IDEMPOTENCY_TTL_SECONDS; an expired key creates anew', async t => {
  // A TTL of zero (only reachable through overrides) expires entries at once.
  const { request } = await build(t, { idempotencyTtlSeconds: 0 })
  const headers = { 'idempotency-key': 'k3' }
  const first = await request({ method: 'POST', url: '/books', headers, payload: { ...dune, isbn: null } })
  const again = await request({ method: 'POST', url: '/books', headers, payload: { ...dune, isbn: null } })
  t.equal(again.statusCode, 201)
  t.notOk(again.headers['idempotent-replayed'])
  t.not(again.json().book_id, first.json().book_id)
})

t.test('a retry while the first request is still in flight is 409; afterwards it replays', async t => {
  const storage = openSqliteRepositories(':memory:')
  // Holds the first create until released, as a slow disk or a remote database would.
  let release!: () => void
  const held = new Promise<void>(resolve => { release = resolve })
  const repositories: Repositories = {
    ...storage,
    books: {
      ...storage.books,
      list: storage.books.list.bind(storage.books),
      create: async (values, remember) => { await held; return storage.books.create(values, remember) }
    }
  }
  const { request } = await build(t, {}, { repositories })
  const headers = { 'idempotency-key': 'slow' }
  const first = request({ method: 'POST', url: '/books', headers, payload: dune })
  const during = await request({ method: 'POST', url: '/books', headers, payload: dune })
  t.equal(during.statusCode, 409)
  t.match(during.json(), { type: '/problems/idempotency-key-in-use', status: 409 })
  release()
  t.equal((await first).statusCode, 201)
  const after = await request({ method: 'POST', url: '/books', headers, payload: dune })
  t.equal(after.headers['idempotent-replayed'], 'true')
  t.same(after.json(), (await first).json())
})

t.test('the key is stored in the transaction of its record: a failed write stores neither', async t => {
  const storage = openSqliteRepositories(':memory:')
  t.teardown(() => storage.close())
  const remember = () => { throw new Error('disk full') }
  await t.rejects(storage.books.create({ title: 'T', author: 'A', isbn: null, published_year: null }, remember), { message: 'disk full' })
  t.same((await storage.books.list(creationOrder, 10, null)).items, [], 'no record without its key')
})

t.test('keys are scoped to the caller: two API keys may use the same Idempotency-Key without meeting', async t => {
  const repositories = openSqliteRepositories(':memory:')
  const { request } = await build(t, {}, { repositories })
  const other = (await createKey(repositories.apiKeys, 'second client', ['books:write', 'books:read'])).key
  const headers = { 'idempotency-key': '"shared-key"' }
  const mine = await request({ method: 'POST', url: '/books', headers, payload: dune })
  const theirs = await request({ method: 'POST', url: '/books', headers, payload: { ...dune, isbn: null }, key: other })
  t.equal(mine.statusCode, 201)
  t.equal(theirs.statusCode, 201)
  t.notOk(theirs.headers['idempotent-replayed'], 'the other caller got its own create, not a replay')
  t.not(theirs.json().book_id, mine.json().book_id)
  const again = await request({ method: 'POST', url: '/books', headers, payload: { ...dune, isbn: null }, key: other })
  t.equal(again.json().book_id, theirs.json().book_id, 'each caller replays its own first response')
})

/** Two nodes on one database send the same key at the same moment: one record, and both answer its 201. */
async function sameKeyOnTwoNodes (t: Test, storage: Partial<Config>): Promise<void> {
  const [a, b] = [await build(t, storage), await build(t, storage)]
  const headers = { 'idempotency-key': 'two-nodes-1' }
  const answers = await Promise.all([a, b].map(node => node.request({ method: 'POST', url: '/books', headers, payload: dune })))
  t.same(answers.map(res => res.statusCode), [201, 201])
  t.same(answers.map(res => res.headers['idempotent-replayed'] ?? 'first').sort(), ['first', 'true'], 'one created, the other replayed it')
  t.same(answers[0]!.json(), answers[1]!.json())
  t.equal((await a.request({ method: 'GET', url: '/books' })).json().items.length, 1, 'one book')
  const other = await b.request({ method: 'POST', url: '/books', headers, payload: { ...dune, title: 'Other' } })
  t.equal(other.statusCode, 422, 'the key stays bound to its first body on every node')
}

t.test('the same key on two SQLite processes at once (one file) creates one record', async t => {
  await sameKeyOnTwoNodes(t, { databasePath: tempDatabase(t) })
})

await withPostgres(t, t => {
  t.test('the same key on two PostgreSQL nodes at once creates one record', async t => {
    await sameKeyOnTwoNodes(t, { postgresUrl: await testDatabase(t), recordCacheSize: 0 })
  })
})
