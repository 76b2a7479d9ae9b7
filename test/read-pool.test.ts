// SQLite's reader threads: pages read off the event loop, a time budget answered with a problem, and threads that die replaced.
import { Worker } from 'node:worker_threads'
import t, { type Test } from 'tap'
import { parseSearch } from '../src/domain/search/query.js'
import { defaultListLimits, ListTimeoutError } from '../src/storage/list-sql.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { anonymousBurstMs } from '../src/storage/fair-queue.js'
import { ReadPool, type StartReader } from '../src/storage/sqlite/read-pool.js'
import type { ListQuery } from '../src/storage/types.js'
import { adminKey, build, silentReader as silent, stubReader, tempDatabase, within } from './helper.js'

const byRelevance = (q: string): ListQuery => ({ equals: [], ranges: [], search: parseSearch(q), sort: { key: 'relevance', descending: false } })

/** Threads that say they are ready, then take requests and leave, or fail them, or answer late; or fail to start. */
const exitsOnRequest = stubReader('process.exit(1)')
const answersFailure = stubReader("parentPort.postMessage({ id, failed: 'disk I/O error' })")
const readyLate = stubReader('parentPort.postMessage({ id, page: { items: [], after: null } })', 300)
const failsToStart = () => new Worker("throw new Error('cannot open the database')", { eval: true })

/** A database of the service with a few books, and its path. */
async function seeded (t: Test): Promise<string> {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path, { readers: 0 })
  for (const title of ['Dune Messiah', 'Dune', 'Children of Dune']) await repositories.books.create({ title, author: 'Frank Herbert', isbn: null, published_year: null })
  await repositories.close()
  return path
}

t.test('a reader that dies while reading is replaced, and the page is read by the new one', async t => {
  const path = await seeded(t)
  let started = 0
  // The first thread leaves as it takes its first request; the ones started after it are the service's own.
  const start: StartReader = data => ++started === 1 ? exitsOnRequest(data) : new Worker(new URL('../src/storage/sqlite/list-worker.js', import.meta.url), { workerData: data })
  // A budget long enough for a thread to start on a loaded machine, short enough that a reader never
  // replaced fails this test in seconds (the page's ListTimeoutError), not at tap's timeout.
  const pool = new ReadPool({ path, limits: defaultListLimits }, { threads: 1, budgetMs: 10_000, perCaller: 16, start })
  t.teardown(() => pool.close())
  const page = await pool.page<{ title: string }>('books', byRelevance('dune'), 10, null)
  t.same(page.items.map(book => book.title), ['Dune', 'Children of Dune', 'Dune Messiah'], 'the page, in relevance order, from the thread that replaced it')
  t.equal(started, 2, 'one thread started in its place')
  t.equal(pool.threads, 1, 'the pool is at its size again')
  const again = await pool.page<{ title: string }>('books', byRelevance('messiah'), 10, null)
  t.same(again.items.map(book => book.title), ['Dune Messiah'], 'and it reads the next pages')
})

t.test('a page whose reader dies twice fails alone; readers that keep dying are not started for ever', async t => {
  const path = await seeded(t)
  const twice = new ReadPool({ path, limits: defaultListLimits }, { threads: 1, budgetMs: 60_000, perCaller: 16, start: exitsOnRequest })
  t.teardown(() => twice.close())
  // Bounded here: a pool that never replaces its threads would leave these pages waiting, and the file's later tests unrun.
  await t.rejects(within(twice.page('books', byRelevance('dune'), 10, null), 10_000, 'the page whose reader died twice'), /died twice/)

  let starts = 0
  const broken = new ReadPool({ path, limits: defaultListLimits }, { threads: 3, budgetMs: 60_000, perCaller: 30, start: () => { starts++; return failsToStart() } })
  t.teardown(() => broken.close())
  const outcomes = await Promise.allSettled(Array.from({ length: 30 }, async () => within(broken.page('books', byRelevance('dune'), 10, null), 10_000, 'a page of a pool whose readers keep dying')))
  t.ok(outcomes.every(o => o.status === 'rejected' && /died twice|keep dying/.test(String(o.reason))), 'every page fails with what happened')
  t.ok(outcomes.some(o => o.status === 'rejected' && /keep dying/.test(String(o.reason))), 'the pages still waiting are refused once the threads are given up')
  t.ok(starts <= 3 + 9, `${starts} threads started, not an endless loop`)
  await t.rejects(broken.page('books', byRelevance('dune'), 10, null), /keep dying/, 'and a page asked for later fails at once')
})

t.test('a page not read within the budget is refused with ListTimeoutError, waiting ones too; a reader\'s failure is the page\'s', async t => {
  const path = await seeded(t)
  const pool = new ReadPool({ path, limits: defaultListLimits }, { threads: 1, budgetMs: 50, perCaller: 16, start: silent })
  t.teardown(() => pool.close())
  const [running, waiting] = await Promise.allSettled([pool.page('books', byRelevance('dune'), 10, null), pool.page('books', byRelevance('dune'), 10, null)])
  for (const outcome of [running, waiting]) t.ok(outcome.status === 'rejected' && outcome.reason instanceof ListTimeoutError && outcome.reason.budgetMs === 50)
  const failing = new ReadPool({ path, limits: defaultListLimits }, { threads: 1, budgetMs: 60_000, perCaller: 16, start: answersFailure })
  t.teardown(() => failing.close())
  await t.rejects(failing.page('books', byRelevance('dune'), 10, null), { message: 'disk I/O error' })
  const closing = new ReadPool({ path, limits: defaultListLimits }, { threads: 1, budgetMs: 60_000, perCaller: 16, start: silent })
  const pending = [closing.page('books', byRelevance('dune'), 10, null), closing.page('books', byRelevance('dune'), 10, null)]
  const outcomes = Promise.allSettled(pending)
  await closing.close()
  for (const outcome of await outcomes) t.ok(outcome.status === 'rejected' && /closing/.test(String(outcome.reason)), 'a page being read or waiting when the service closes is refused')
})

t.test('a search too broad for its sort, read on a reader, is refused as on the event loop', async t => {
  const pool = new ReadPool({ path: await seeded(t), limits: { cap: 1 } }, { threads: 1, budgetMs: 60_000, perCaller: 16 })
  t.teardown(() => pool.close())
  await t.rejects(pool.page('books', { ...byRelevance('dune'), sort: { key: 'title', descending: false } }, 10, null), { name: 'SearchTooBroadError', cap: 1 })
})

t.test('the budget starts once a reader is ready, not while the service starts', async t => {
  const pool = new ReadPool({ path: await seeded(t), limits: defaultListLimits }, { threads: 1, budgetMs: 50, perCaller: 16, start: readyLate })
  t.teardown(() => pool.close())
  t.same(await pool.page('books', byRelevance('dune'), 10, null), { items: [], after: null }, 'read by the reader ready 300 ms later, with a budget of 50 ms')
})

t.test('an anonymous page beyond its callers\' share of the readers\' time waits for the credit, then is read; keyed pages do not wait', async t => {
  let now = 0
  const answers = stubReader('parentPort.postMessage({ id, page: { items: [], after: null } })')
  const pool = new ReadPool({ path: await seeded(t), limits: defaultListLimits }, { threads: 1, budgetMs: 600_000, perCaller: 16, start: answers, clock: () => now })
  t.teardown(() => pool.close())
  const keyed = { id: 'key', anonymous: false }
  const anonymous = { id: '192.0.2.10', anonymous: true }
  await pool.page('books', byRelevance('dune'), 10, null, keyed)
  // Handed to the ready reader at once; it takes a little more than the whole credit of this clock.
  const long = pool.page('books', byRelevance('dune'), 10, null, anonymous)
  now += anonymousBurstMs + 2
  await long
  let read = false
  const waiting = pool.page('books', byRelevance('dune'), 10, null, anonymous).then(page => { read = true; return page })
  t.same(await pool.page('books', byRelevance('dune'), 10, null, keyed), { items: [], after: null }, 'a keyed page is read meanwhile')
  t.notOk(read, 'the anonymous one waits: time stands still on this clock')
  now += 100
  t.same(await within(waiting, 10_000, 'the anonymous page once the credit is back'), { items: [], after: null }, 'and is read once the credit is back')
})

// The budget is the guarantee: a test of it must fail in seconds when it is not kept, not hang the file.
t.test('a page asked once a reader is ready has its budget too: a reader that stops answering is a ListTimeoutError within it', { timeout: 15_000 }, async t => {
  const answersFirstOnly = stubReader('if (id === 1) parentPort.postMessage({ id, page: { items: [], after: null } })')
  const pool = new ReadPool({ path: await seeded(t), limits: defaultListLimits }, { threads: 1, budgetMs: 50, perCaller: 16, start: answersFirstOnly })
  t.teardown(() => pool.close())
  t.same(await pool.page('books', byRelevance('dune'), 10, null), { items: [], after: null }, 'the first page, read once the reader is ready')
  await t.rejects(pool.page('books', byRelevance('dune'), 10, null), { name: 'ListTimeoutError', budgetMs: 50 }, 'the next one, asked of a ready pool, runs out of its budget')
})

t.test('GET /books answers 503 list-busy with Retry-After when its page misses the budget; a plain page and GET by id still answer', { timeout: 20_000 }, async t => {
  const path = await seeded(t)
  const repositories = openSqliteRepositories(path, { readers: 1, listBudgetMs: 50, startReader: silent })
  const { app } = await build(t, {}, { repositories })
  const busy = await app.inject({ method: 'GET', url: '/books?q=dune', headers: { authorization: `Bearer ${adminKey}` } })
  t.equal(busy.statusCode, 503)
  t.equal(busy.headers['retry-after'], '1')
  t.match(busy.headers['content-type'], /^application\/problem\+json/)
  t.match(busy.json(), { type: '/problems/list-busy', status: 503, title: 'Service Unavailable', detail: /within 50 ms/ })
  const plain = await app.inject({ method: 'GET', url: '/books', headers: { authorization: `Bearer ${adminKey}` } })
  t.equal(plain.statusCode, 200, 'a page that is one seek is read on the event loop')
  t.equal(plain.json().items.length, 3)
})
