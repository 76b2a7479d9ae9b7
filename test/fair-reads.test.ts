// A burst of anonymous searches beside keyed ones: the reader threads take callers in turn, so the keyed searches are read early, not after the burst (issue 38, L3).
import { EventEmitter } from 'node:events'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Worker } from 'node:worker_threads'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import t, { type Test } from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import type { ListReply, ListRequest, ReaderReady } from '../src/storage/sqlite/read-pool.js'
import { tracedRepositories } from '../src/storage/traced.js'
import type { Repositories } from '../src/storage/types.js'
import { build, tempDatabase } from './helper.js'

/**
 * A reader thread the test drives: it records each page it is given and answers only when told, so
 * which page the pool hands it next is seen at once (the pool hands it out as the answer arrives).
 */
class HeldReader extends EventEmitter {
  readonly requests: ListRequest[] = []
  #answered = 0

  constructor () {
    super()
    setImmediate(() => this.emit('message', { ready: true } satisfies ReaderReady))
  }

  postMessage (request: ListRequest): void {
    this.requests.push(request)
  }

  /** Answers the page being read with an empty page; false when none is. */
  answer (): boolean {
    const request = this.requests[this.#answered]
    if (request === undefined) return false
    this.#answered++
    this.emit('message', { id: request.id, page: { items: [], after: null } } satisfies ListReply)
    return true
  }

  async terminate (): Promise<number> {
    this.emit('exit', 0)
    return 0
  }
}

const perCaller = 8
const heavy = (i: number) => `/books?limit=100&q=${encodeURIComponent(`al* an* OR el* be* OR ma* lo* -zq${i}`)}`
const keyedSearch = (i: number) => `/books?q=${encodeURIComponent(`war peace${i}`)}`
/** Whose page a reader was given: the burst's (its queries exclude zq…) or the keyed caller's. */
const whose = (request: ListRequest) => JSON.stringify(request.query.search).includes('peace') ? 'keyed' : 'anonymous'

/** An app on a file database whose one reader thread the test drives; counts the list pages handed to storage. */
async function heldApp (t: Test, traced = false) {
  const reader = new HeldReader()
  const opened = openSqliteRepositories(tempDatabase(t), { readers: 1, listBudgetMs: 600_000, listQueuePerCaller: perCaller, startReader: () => reader as unknown as Worker })
  const repositories: Repositories = traced ? tracedRepositories(opened, new BasicTracerProvider().getTracer('test')) : opened
  let listed = 0
  const list = repositories.books.list.bind(repositories.books)
  repositories.books.list = async (...args) => {
    const page = list(...args)
    listed++
    return page
  }
  const api = await build(t, {}, { repositories })
  /** Waits until `count` list pages reached storage, and every page among them that waits for the reader is queued. */
  const listedAtLeast = async (count: number) => {
    for (;;) {
      await nextTurn()
      if (listed >= count) return
    }
  }
  /** Answers page after page until none is left to read; whose each page was, in the order read. */
  const readAll = () => {
    while (reader.answer());
    return reader.requests.map(whose)
  }
  return { ...api, reader, listedAtLeast, readAll }
}

for (const traced of [false, true]) {
  t.test(`GET /books: keyed searches sent during a burst of 40 anonymous searches from one address are read ahead of it; the address's pages beyond ${perCaller} waiting are refused at once${traced ? ' (storage traced)' : ''}`, async t => {
    const { request, listedAtLeast, readAll } = await heldApp(t, traced)
    const burst = Array.from({ length: 40 }, async (_, i) => request({ url: heavy(i), key: null, remoteAddress: '203.0.113.9' }))
    await listedAtLeast(40)
    const keyed = Array.from({ length: 5 }, async (_, i) => request({ url: keyedSearch(i) }))
    await listedAtLeast(45)
    const read = readAll()
    const lastKeyed = read.lastIndexOf('keyed')
    t.ok(lastKeyed >= 0 && read.slice(0, lastKeyed).filter(kind => kind === 'anonymous').length <= 2,
      `at most two of the burst's pages were read before the last keyed search (read: ${read.join(' ')})`)
    t.same((await Promise.all(keyed)).map(res => res.statusCode), [200, 200, 200, 200, 200], 'every keyed search is answered')
    const answers = await Promise.all(burst)
    const refused = answers.filter(res => res.statusCode === 503)
    t.equal(answers.filter(res => res.statusCode === 200).length, 1 + perCaller, `the page being read and the ${perCaller} waiting are answered`)
    t.equal(refused.length, 40 - 1 - perCaller, 'the rest are refused')
    t.ok(refused.length > 0 && refused.every(res => res.headers['retry-after'] === '1' && res.json().type === '/problems/list-busy' && res.json().detail.includes(`${perCaller} of your searches`)),
      '503 list-busy with Retry-After, saying why')
    t.equal(read.length, 1 + perCaller + 5, 'a refused page is never read')
  })
}

t.test('GET /books: 40 addresses with one anonymous search each still leave the keyed searches ahead, and every search is answered', async t => {
  const { request, listedAtLeast, readAll } = await heldApp(t)
  const burst = Array.from({ length: 40 }, async (_, i) => request({ url: heavy(i), key: null, remoteAddress: `198.51.100.${i + 1}` }))
  await listedAtLeast(40)
  const keyed = Array.from({ length: 5 }, async (_, i) => request({ url: keyedSearch(i) }))
  await listedAtLeast(45)
  const read = readAll()
  t.ok(read.slice(0, read.lastIndexOf('keyed')).filter(kind => kind === 'anonymous').length <= 2, `keyed searches ahead of the burst (read: ${read.join(' ')})`)
  t.same((await Promise.all(keyed)).map(res => res.statusCode), [200, 200, 200, 200, 200])
  t.ok((await Promise.all(burst)).every(res => res.statusCode === 200), 'no address is over its bound: every anonymous search is answered')
})

t.test('GET /books: another address\'s anonymous search is read next to a burst from one address, not after it', async t => {
  const { request, listedAtLeast, reader } = await heldApp(t)
  const burst = Array.from({ length: 20 }, async (_, i) => request({ url: heavy(i), key: null, remoteAddress: '203.0.113.9' }))
  await listedAtLeast(20)
  const other = request({ url: heavy(999), key: null, remoteAddress: '203.0.113.10' })
  await listedAtLeast(21)
  while (reader.answer());
  const at = reader.requests.findIndex(request => JSON.stringify(request.query.search).includes('zq999'))
  t.ok(at >= 0 && at <= 2, `read third at the latest: one page of the burst being read, then one each (read at position ${at + 1} of ${reader.requests.length})`)
  t.equal((await other).statusCode, 200)
  t.equal((await Promise.all(burst)).filter(res => res.statusCode === 200).length, 1 + perCaller)
})
