// /metrics: every request counted under its route template, domain counters, storage use, and no label a client can grow.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import t from 'tap'
import type { Test } from 'tap'
import { type Config, defaults } from '../src/config/index.js'
import type { AppDependencies } from '../src/app.js'
import { buildOpsApp } from '../src/ops/routes.js'
import { ada, build, dune, eventually, testEngine } from './helper.js'
import { receiver } from './webhook-helpers.js'

/** The service's series (process_ and nodejs_ ones aside) and their values, from the exposition text. */
function parse (text: string): Map<string, number> {
  const series = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || /^(process|nodejs)_/.test(line)) continue
    const at = line.lastIndexOf(' ')
    series.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return series
}

async function setUp (t: Test, overrides: Partial<Config> = {}, dependencies: Partial<AppDependencies> = {}) {
  const api = await build(t, overrides, dependencies)
  const ops = await buildOpsApp(api.app.operations, api.app.log, defaults)
  t.teardown(() => ops.close())
  const scrape = async () => {
    const res = await ops.inject({ url: '/metrics' })
    t.equal(res.statusCode, 200)
    return { text: res.body, series: parse(res.body) }
  }
  return { api, scrape }
}

const count = (series: Map<string, number>, method: string, route: string, statusClass: string) =>
  series.get(`http_request_duration_seconds_count{method="${method}",route="${route}",status_class="${statusClass}"}`) ?? 0

t.test('the request histogram counts each request once under method, route template and status class', async t => {
  const { api, scrape } = await setUp(t)
  const created = await api.request({ method: 'POST', url: '/books', payload: dune })
  const id = created.json<{ book_id: string }>().book_id
  for (let i = 0; i < 7; i++) await api.request({ url: `/books/${id}` })
  for (let i = 0; i < 3; i++) await api.request({ url: `/books/${randomUUID()}` })
  await api.request({ url: '/nowhere' })
  await api.request({ method: 'DELETE', url: '/elsewhere' })
  await api.app.inject({ method: 'PROPFIND' as 'GET', url: '/nowhere' })
  await api.request({ url: '/api/students' })
  const { series, text } = await scrape()
  t.equal(count(series, 'POST', '/books', '2xx'), 1)
  t.equal(count(series, 'GET', '/books/:book_id', '2xx'), 7)
  t.equal(count(series, 'GET', '/books/:book_id', '4xx'), 3)
  t.equal(count(series, 'GET', 'unmatched', '4xx'), 1, 'unrouted paths share one series per method')
  t.equal(count(series, 'DELETE', 'unmatched', '4xx'), 1)
  t.equal(count(series, 'other', 'unmatched', '4xx'), 1, 'a method the service knows nothing of is counted as other')
  t.equal(count(series, 'GET', '/api/students', '2xx'), 1)
  // Fine buckets at the bottom, so that sub-millisecond routes are told apart.
  t.match(text, /http_request_duration_seconds_bucket\{le="0\.0001",method="GET",route="\/books\/:book_id",status_class="2xx"\}/)
  t.match(text, /http_request_duration_seconds_bucket\{le="0\.00025",/)
  t.equal(series.get('http_requests_in_flight'), 0, 'nothing in flight once every response is sent')
})

t.test('records created, replaced and deleted by resource; replays, 412s and 429s by limit', async t => {
  const { api, scrape } = await setUp(t, { rateLimitAnonymous: { requests: 2, seconds: 60 } })
  const headers = { 'idempotency-key': randomUUID() }
  const book = await api.request({ method: 'POST', url: '/books', payload: dune, headers })
  t.equal(book.statusCode, 201)
  t.equal((await api.request({ method: 'POST', url: '/books', payload: dune, headers })).headers['idempotent-replayed'], 'true')
  const { book_id: bookId, created_at: _c, updated_at: _u, ...values } = book.json<{ book_id: string, created_at: string, updated_at: string }>()
  const replaced = await api.request({ method: 'PUT', url: `/books/${bookId}`, payload: { ...values, title: 'Dune Messiah' } })
  t.equal(replaced.statusCode, 200)
  const stale = await api.request({ method: 'PUT', url: `/books/${bookId}`, payload: { ...values, title: 'Children of Dune' }, headers: { 'if-match': book.headers.etag! } })
  t.equal(stale.statusCode, 412)
  t.equal((await api.request({ method: 'DELETE', url: `/books/${bookId}` })).statusCode, 204)
  const student = await api.request({ method: 'POST', url: '/api/students', payload: ada })
  const { student_id: studentId, created_at: _sc, updated_at: _su, ...studentValues } = student.json<{ student_id: string, created_at: string, updated_at: string }>()
  t.equal((await api.request({ method: 'PUT', url: `/api/students/${studentId}`, payload: { ...studentValues, status: 'graduated' } })).statusCode, 200)
  for (let i = 0; i < 4; i++) await api.request({ url: '/books', key: null })

  const { series } = await scrape()
  t.equal(series.get('bsa_records_changed_total{resource="book",change="created"}'), 1, 'the replay is not a second creation')
  t.equal(series.get('bsa_records_changed_total{resource="book",change="replaced"}'), 1, 'the refused PUT replaced nothing')
  t.equal(series.get('bsa_records_changed_total{resource="book",change="deleted"}'), 1)
  t.equal(series.get('bsa_records_changed_total{resource="student",change="created"}'), 1)
  t.equal(series.get('bsa_records_changed_total{resource="student",change="replaced"}'), 1)
  t.equal(series.get('bsa_idempotent_replays_total{resource="book"}'), 1)
  t.equal(series.get('bsa_precondition_failed_total{resource="book"}'), 1)
  t.equal(series.get('bsa_rate_limited_total{limit="anonymous"}'), 2, 'two of four anonymous reads over a quota of two')
  t.equal(series.get('bsa_rate_limited_total{limit="keyed"}'), undefined)
})

t.test('group-commit batches and database connections', async t => {
  // No webhook worker: its background queries (50 ms after each commit) are no request's, and would be in flight here.
  const { api, scrape } = await setUp(t, { pgPoolMax: 3, webhookPollInterval: 0 })
  const created = await Promise.all(Array.from({ length: 10 }, (_, i) => api.request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null, title: `Book ${i}` } })))
  t.same(created.map(res => res.statusCode), Array(10).fill(201))
  const { series } = await scrape()
  t.equal(series.get('bsa_group_commit_batch_size_sum'), 10, 'every write was in a batch')
  t.ok(series.get('bsa_group_commit_batch_size_count')! < 10, 'writes that arrived together were committed together')
  if (testEngine === 'postgres') {
    t.equal(series.get('bsa_db_connections_max'), 5, 'PG_POOL_MAX pipelined connections, group commit\'s and the listener\'s')
    t.ok(series.get('bsa_db_connections_open')! >= 2)
  } else {
    t.equal(series.get('bsa_db_connections_max'), 1)
    t.equal(series.get('bsa_db_connections_open'), 1)
  }
  // Back to none once the writes are answered. Background work queries now and then (the import runner's
  // sweep, the pruning of idempotency keys and events): on a busy machine one of those may be in flight at
  // any one scrape (CI, PostgreSQL), so the gauge is read until it is down.
  await eventually(async () => (await scrape()).series.get('bsa_db_queries_in_flight'), inFlight => inFlight === 0, 'no query in flight once the writes are answered', { withinMs: 10_000 })
  t.pass('no query in flight once the writes are answered')
})

t.test('in-flight requests are counted while they wait', async t => {
  let release = () => {}
  const waiting = new Promise<void>(resolve => { release = resolve })
  // Told when both requests wait in their quota lookup: the gauge is read then, not after a guessed time.
  let bothWait = () => {}
  const bothWaiting = new Promise<void>(resolve => { bothWait = resolve })
  let lookups = 0
  // A quota lookup that waits holds requests between their arrival and their response.
  const { api, scrape } = await setUp(t, {}, {
    rateLimitStore: new (class {
      async hit () {
        if (++lookups === 2) bothWait()
        await waiting
        return { count: 1, resetAt: Date.now() + 60_000 }
      }

      async probe () {}
      async close () {}
    })()
  })
  const pending = Promise.all([api.request({ url: '/books' }), api.request({ url: '/books' })])
  await bothWaiting
  t.equal((await scrape()).series.get('http_requests_in_flight'), 2)
  release()
  await pending
  t.equal((await scrape()).series.get('http_requests_in_flight'), 0)
})

t.test('a failing shared rate-limit store is counted', async t => {
  const { scrape, api } = await setUp(t, { redisUrl: 'redis://127.0.0.1:1', redisTimeout: 50 })
  await api.request({ url: '/books' })
  t.ok((await scrape()).series.get('bsa_rate_limit_store_errors_total')! >= 1)
})

t.test('webhook deliveries by outcome and endpoints disabled by reason, every series there from the start', async t => {
  const hook = await receiver(t, () => ({ status: 410 }))
  const { api, scrape } = await setUp(t, { webhookPollInterval: 20, webhookAllowedAddresses: ['127.0.0.1'] })
  const deliveries = (series: Map<string, number>, outcome: string) => series.get(`bsa_webhook_deliveries_total{outcome="${outcome}"}`)
  const { series } = await scrape()
  for (const outcome of ['delivered', 'failed', 'refused']) t.equal(deliveries(series, outcome), 0, outcome)
  for (const reason of ['gone', 'failing', 'key_revoked']) t.equal(series.get(`bsa_webhook_endpoints_disabled_total{reason="${reason}"}`), 0, reason)
  t.equal((await api.request({ method: 'POST', url: '/webhook-endpoints', payload: { url: hook.url, types: ['book.created'] } })).statusCode, 201)
  await api.app.ready()
  await api.request({ method: 'POST', url: '/books', payload: dune })
  // The attempt is counted as soon as it is answered; the endpoint once the database has disabled it.
  const disabled = (scraped: Map<string, number>) => scraped.get('bsa_webhook_endpoints_disabled_total{reason="gone"}')
  const after = await eventually(async () => (await scrape()).series, scraped => disabled(scraped) === 1, 'the endpoint disabled')
  t.equal(deliveries(after, 'failed'), 1, 'the attempt counted once: its 410 disabled the endpoint')
  t.equal(deliveries(after, 'delivered'), 0)
})

t.test('the process\'s own metrics are there: CPU, memory, event-loop lag', async t => {
  const { scrape } = await setUp(t)
  const { text } = await scrape()
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes']) {
    t.match(text, new RegExp(`^${name} `, 'm'), name)
  }
})

t.test('no label grows with traffic: a thousand ids, random paths and methods add no series once each route has been seen', async t => {
  const { api, scrape } = await setUp(t, { rateLimit: { requests: 1_000_000, seconds: 60 }, rateLimitAnonymous: { requests: 1_000_000, seconds: 60 } })
  const created = await api.request({ method: 'POST', url: '/books', payload: dune })
  const id = created.json<{ book_id: string }>().book_id
  // PROPFIND: a method Node parses that the service knows nothing of.
  const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND']
  // One of each kind first, so that every series these requests can reach exists.
  await api.request({ url: `/books/${id}` })
  await api.request({ url: `/books/${randomUUID()}` })
  for (const method of methods) await api.app.inject({ method: method as 'GET', url: '/x/warm-up' })
  const before = (await scrape()).series

  const sent: string[] = []
  for (let i = 0; i < 1000; i++) {
    const bookId = i % 2 === 0 ? randomUUID() : `x${i}`
    sent.push(bookId)
    await api.request({ url: `/books/${bookId}` })
  }
  // Under /x nothing is routed: random paths of every shape, with any method.
  const requests = fc.sample(fc.tuple(fc.webPath({ size: 'medium' }), fc.constantFrom(...methods)), { numRuns: 300, seed: 42 })
  for (const [path, method] of requests) {
    sent.push(`/x${path}`)
    await api.app.inject({ method: method as 'GET', url: `/x${path}` })
  }
  const after = await scrape()
  t.same([...after.series.keys()].filter(key => !before.has(key)), [], `no new series (${before.size} before, ${after.series.size} after)`)
  const values = [...after.text.matchAll(/="([^"]*)"/g)].map(match => match[1]!)
  t.same(values.filter(value => value.length > 8 && sent.some(s => s.includes(value) && !['/books/:book_id', 'unmatched'].includes(value))), [], 'no label holds an id or a path that was sent')
})

t.test("docs/operating.md's metrics table lists every series the service exposes", async t => {
  const { scrape } = await setUp(t)
  const names = [...(await scrape()).text.matchAll(/^# TYPE (\S+) /gm)].map(match => match[1]!).filter(name => !/^(process|nodejs)_/.test(name))
  t.ok(names.includes('bsa_event_streams_open'), 'streams are observed by every app')
  const guide = readFileSync(new URL('../docs/operating.md', import.meta.url), 'utf8')
  const table = guide.slice(guide.indexOf('| metric | type | labels | what |'))
  const rows = table.slice(0, table.indexOf('\n\n'))
  for (const name of names) t.match(rows, new RegExp(`^\\| [^|]*\`${name}\``, 'm'), `${name} has a row`)
})
