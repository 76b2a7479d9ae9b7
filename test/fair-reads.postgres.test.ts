// PostgreSQL: a burst of anonymous searches beside keyed ones; costly pages take turns per caller, so the keyed searches are not queued behind the burst on the connections (issue 38, L3).
import pg from 'pg'
import t from 'tap'
import { parseSearch } from '../src/domain/search/query.js'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import type { ListQuery } from '../src/storage/types.js'
import { build } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'

const perCaller = 8
const heavy = (i: number) => `/books?limit=100&q=${encodeURIComponent(`al* an* OR el* be* OR ma* lo* -zq${i}`)}`
const keyedSearch = (i: number) => `/books?q=${encodeURIComponent(`war peace${i}`)}`

await withPostgres(t, async t => {
  t.test('GET /books: keyed searches sent during a burst of anonymous searches from one address are read ahead of it; the address\'s pages beyond its bound are refused at once', async t => {
    const url = await testDatabase(t)
    // One connection, and a statement timeout (lock waits: half of it) no test run reaches.
    const repositories = await openPostgresRepositories({ url, connections: 1, connectTimeout: 2000, statementTimeout: 600_000 }, { listQueuePerCaller: perCaller })
    // The order in which search pages are read: each settles once its statements are answered, before the next one's can be sent.
    const read: string[] = []
    let listed = 0
    const list = repositories.books.list.bind(repositories.books)
    repositories.books.list = async (...args) => {
      const page = list(...args)
      listed++
      const { search } = args[0] as ListQuery
      // The searches' pages, the burst's or the keyed caller's; a plain page is read beside them.
      if (search !== null) page.then(() => read.push(JSON.stringify(search).includes('peace') ? 'keyed' : 'anonymous'), () => {})
      return page
    }
    const { request } = await build(t, {}, { repositories })
    const listedAtLeast = async (count: number) => {
      for (;;) {
        await new Promise(resolve => setImmediate(resolve))
        if (listed >= count) return
      }
    }

    // The books table locked: the first page's statement waits for it, holding the connection's turn.
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    t.teardown(() => locker.end())
    await locker.query('BEGIN')
    await locker.query('LOCK TABLE books IN ACCESS EXCLUSIVE MODE')
    const burst = Array.from({ length: 20 }, async (_, i) => request({ url: heavy(i), key: null, remoteAddress: '203.0.113.9' }))
    await listedAtLeast(20)
    const keyed = Array.from({ length: 5 }, async (_, i) => request({ url: keyedSearch(i) }))
    await listedAtLeast(25)
    for (;;) {
      const { rows } = await locker.query(`SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`)
      if (rows.length > 0) break
    }
    // The address has as many pages waiting as it may: a page that is one seek takes no turn, so it is not refused.
    const plain = request({ url: '/books?limit=5', key: null, remoteAddress: '203.0.113.9' })
    await listedAtLeast(26)
    await locker.query('ROLLBACK')

    t.same((await Promise.all(keyed)).map(res => res.statusCode), [200, 200, 200, 200, 200], 'every keyed search is answered')
    const answers = await Promise.all(burst)
    const lastKeyed = read.lastIndexOf('keyed')
    t.ok(lastKeyed >= 0 && read.slice(0, lastKeyed).filter(kind => kind === 'anonymous').length <= 2,
      `at most two of the burst's pages were read before the last keyed search (read: ${read.join(' ')})`)
    const refused = answers.filter(res => res.statusCode === 503)
    t.equal(answers.filter(res => res.statusCode === 200).length, 1 + perCaller, `the page being read and the ${perCaller} waiting are answered`)
    t.equal(refused.length, 20 - 1 - perCaller, 'the rest are refused at once')
    t.ok(refused.length > 0 && refused.every(res => res.headers['retry-after'] === '1' && res.json().type === '/problems/list-busy'), '503 list-busy with Retry-After')
    t.equal((await plain).statusCode, 200, 'a plain page of the same address is answered')
  })

  t.test('a costly page that waits on PostgreSQL holds up no read by id nor plain page: they go to a connection with no costly statement', async t => {
    const url = await testDatabase(t)
    // Two connections, so costly pages get one at a time. Lock waits give up after 10 s, far beyond what a read here takes.
    const repositories = await openPostgresRepositories({ url, connections: 2, connectTimeout: 2000, statementTimeout: 20_000 })
    t.teardown(() => repositories.close())
    const { record } = await repositories.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
    const locker = new pg.Client({ connectionString: url })
    await locker.connect()
    t.teardown(() => locker.end())
    await locker.query('BEGIN')
    await locker.query('LOCK TABLE students IN ACCESS EXCLUSIVE MODE')
    let settled = false
    const search: ListQuery = { equals: [], ranges: [], search: parseSearch('ada'), sort: { key: 'relevance', descending: false } }
    const costly = repositories.students.list(search, 10, null, false, { id: '203.0.113.9', anonymous: true })
    costly.then(() => { settled = true }, () => { settled = true })
    for (;;) {
      const { rows } = await locker.query(`SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`)
      if (rows.length > 0) break
    }
    const reads = await Promise.all(Array.from({ length: 6 }, async () => repositories.books.get(record.book_id)))
    t.ok(reads.every(read => read?.record.title === 'Dune'), 'six reads by id answered')
    const plain = await repositories.books.list({ equals: [], ranges: [], search: null, sort: { key: 'created_at', descending: false } }, 10, null)
    t.equal(plain.items.length, 1, 'a plain page answered')
    t.notOk(settled, 'all while the costly page still waits for its lock')
    await locker.query('ROLLBACK')
    t.same((await costly).items, [], 'which is read once the lock is gone')
  })
})
