// Exports over HTTP: the formats, what they refuse, what they hold, and the node's bound on exports running at once.
import type { AddressInfo } from 'node:net'
import { parse as parseCsv } from 'csv-parse/sync'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { unescapeFormula } from '../src/formats/csv.js'
import { exportChunks, LoopSlice, SnapshotsHeldError } from '../src/storage/export.js'
import { Exports } from '../src/handlers/export.js'
import type { RecordExport, Repositories } from '../src/storage/types.js'
import { createKey } from '../src/access/api-keys.js'
import type { Config } from '../src/config/index.js'
import { ListTimeoutError } from '../src/storage/list-sql.js'
import { adminKey, build, dune, eventually, openTestRepositories, testStorage, type TestApi, within } from './helper.js'

type Json = Record<string, unknown>

// The export operations of each list (contract 2.10.0): the format is the path's.
const booksCsv = '/books/export.csv'
const booksNdjson = '/books/export.ndjson'

/** Every item of a JSON list, page after page. */
async function listed (api: TestApi, path: string, query = ''): Promise<Json[]> {
  const items: Json[] = []
  for (let url: string | null = `${path}?limit=100${query}`; url !== null;) {
    const res = await api.request({ url })
    const body = res.json() as { items: Json[], next_cursor: string | null }
    items.push(...body.items)
    url = body.next_cursor === null ? null : `${path}?limit=100${query}&cursor=${body.next_cursor}`
  }
  return items
}

const ndjsonRecords = (payload: string): Json[] => payload.split('\n').slice(0, -1).map(line => JSON.parse(line) as Json)

/** A CSV export's rows as records: empty cells null, numbers read back, escaped formulas as they were. */
function csvRecords (payload: string, numeric: string[]): Json[] {
  const [header, ...rows] = parseCsv(payload, { bom: true }) as string[][]
  return rows.map(row => Object.fromEntries(header!.map((field, i) => {
    const cell = row[i]!
    return [field, cell === '' ? null : numeric.includes(field) ? Number(cell) : unescapeFormula(cell)]
  })))
}

// Text as people write it, and text a spreadsheet would run as a formula, or that looks escaped already.
const cellText = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
  fc.tuple(fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", "'=", "''+", '"', ',', '\r\n', ' '), fc.string({ unit: 'grapheme', maxLength: 20 })).map(([start, rest]) => start + rest)
).filter(s => !s.includes('\u0000'))

t.test('CSV and NDJSON hold exactly what the JSON list holds, whatever the text, in the list\'s order', async t => {
  const api = await build(t)
  const bookArb = fc.record({ title: cellText, author: cellText, published_year: fc.option(fc.integer({ min: -5000, max: 9999 }), { nil: null }) })
  let created = 0
  await fc.assert(fc.asyncProperty(bookArb, async book => {
    const res = await api.request({ method: 'POST', url: '/books', payload: book })
    if (res.statusCode === 201) created++
    else t.equal(res.statusCode, 400, `${JSON.stringify(book)}: refused as invalid, if at all`)
  }), { seed: 20261127, numRuns: 150 })
  t.ok(created > 120, `${created} books created`)
  await fc.assert(fc.asyncProperty(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), async student => {
    await api.request({ method: 'POST', url: '/api/students', payload: { name: student, email: `s${Math.random().toString(36).slice(2)}@example.org` } })
  }), { seed: 20261127, numRuns: 40 })
  for (const [path, query, numeric] of [
    ['/books', '', ['published_year']],
    ['/books', '&sort=-title', ['published_year']],
    ['/books', '&published_year_min=0&sort=published_year', ['published_year']],
    ['/api/students', '&sort=name', ['enrollment_year']]
  ] as const) {
    const items = await listed(api, path, query)
    const [ndjsonUrl, csvUrl] = [`${path}/export.ndjson?${query.slice(1)}`, `${path}/export.csv?${query.slice(1)}`]
    t.same(ndjsonRecords((await api.request({ url: ndjsonUrl })).payload), items, `NDJSON ${ndjsonUrl}`)
    t.same(csvRecords((await api.request({ url: csvUrl })).payload, [...numeric]), items, `CSV ${csvUrl}`)
  }
})

t.test('formats, headers and what an export refuses', async t => {
  const api = await build(t)
  await api.request({ method: 'POST', url: '/books', payload: { ...dune, title: '=HYPERLINK("http://x","y")' } })
  const res = await api.request({ url: booksCsv })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/csv; charset=utf-8; header=present')
  t.equal(res.headers['content-disposition'], 'attachment; filename="books.csv"')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers['events-cursor'], /\S/, 'the snapshot\'s feed position, to a key')
  t.match(res.payload, /^book_id,title,author,isbn,published_year,created_at,updated_at\r\n[0-9a-f-]{36},"'=HYPERLINK\(""http:\/\/x"",""y""\)",Frank Herbert,9780441013593,1965,/, 'a formula is escaped and quoted')
  t.notOk(res.payload.startsWith('\uFEFF'), 'no byte order mark unless asked for')
  t.ok((await api.request({ url: `${booksCsv}?bom=true` })).payload.startsWith('\uFEFF'), 'bom=true starts with one')
  t.equal((await api.request({ url: booksCsv, key: null })).headers['events-cursor'], undefined, 'no position to an anonymous caller')
  // The path names the format: Accept only decides between it and a 406.
  for (const accept of ['*/*', 'text/*', 'text/csv;q=0.1, application/json']) {
    const any = await api.request({ url: booksCsv, headers: { accept } })
    t.equal(any.headers['content-type'], 'text/csv; charset=utf-8; header=present', `CSV whatever Accept: ${accept} says`)
    t.equal(any.payload, res.payload)
  }
  t.equal((await api.request({ url: booksNdjson, headers: { accept: 'application/problem+json' } })).headers['content-type'], 'application/x-ndjson', 'a client that only names problems gets the file')
  for (const [url, accept] of [[booksCsv, 'application/json'], [booksCsv, 'application/x-ndjson'], [booksNdjson, 'text/csv'], [booksNdjson, 'text/html']]) {
    const refused = await api.request({ url, headers: { accept } })
    t.equal(refused.statusCode, 406, `${url} with Accept: ${accept}`)
    t.equal(refused.headers['content-type'], 'application/problem+json; charset=utf-8')
  }
  t.equal((await api.request({ url: '/books', headers: { accept: 'text/html' } })).statusCode, 406, 'the list, too, to a type it never answers')
  const head = await api.request({ method: 'HEAD', url: '/api/students/export.ndjson' })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-disposition'], 'attachment; filename="students.ndjson"')
  t.equal(head.payload, '')
  // An export has no page to size or resume, and NDJSON no byte order mark: each is a parameter the operation does not take.
  for (const [url, parameter] of [
    [`${booksCsv}?limit=20`, 'limit'], [`${booksNdjson}?limit=20`, 'limit'], [`${booksNdjson}?cursor=a.b`, 'cursor'], [`${booksNdjson}?bom=true`, 'bom'], ['/api/students/export.ndjson?bom=false', 'bom']
  ] as const) {
    const refused = await api.request({ url })
    t.equal(refused.statusCode, 400, url)
    t.match(refused.json(), { type: '/problems/validation-error', errors: [{ parameter, detail: 'is not a known parameter' }] }, `${url} names ${parameter}`)
  }
})

/** The headers of an answer of the deprecated exports by Accept; `operation` is the list's, whose docs the Link names. */
function announcesDeprecation (t: Test, res: { headers: Record<string, unknown> }, operation: string, what: string): void {
  t.equal(res.headers['deprecation'], '@1796169600', `${what}: Deprecation, 2026-12-02T00:00:00Z`)
  t.equal(res.headers['sunset'], 'Wed, 02 Jun 2027 00:00:00 GMT', `${what}: Sunset`)
  t.equal(res.headers['link'], `</docs#/${operation}>; rel="deprecation"; type="text/html"`, `${what}: Link rel="deprecation"`)
}

t.test('deprecated until 2027-06-02: a list still answers Accept: text/csv or application/x-ndjson with its export, as before, each answer saying so in Deprecation, Sunset and Link', async t => {
  const api = await build(t, { corsOrigins: ['https://app.example.org'] })
  await api.request({ method: 'POST', url: '/books', payload: { ...dune, title: '=HYPERLINK("http://x","y")' } })
  // The served contract no longer declares these answers (generated clients type a list as a page), so
  // they are asked for outside the helper's conformance check.
  const asked = async (url: string, accept: string, { method = 'GET', key = adminKey as string | null } = {}) =>
    api.app.inject({ method: method as 'GET', url, headers: { accept, ...key !== null && { authorization: `Bearer ${key}` } } })
  const csvFile = (await api.request({ url: booksCsv })).payload
  const ndjsonFile = (await api.request({ url: booksNdjson })).payload

  const page = await api.request({ url: '/books', headers: { origin: 'https://app.example.org' } })
  t.equal(page.headers['vary'], 'Origin, Accept', 'beside CORS\'s Vary')
  t.equal(page.headers['deprecation'], undefined, 'a JSON page of the list is not deprecated')
  t.equal(page.headers['sunset'], undefined)
  t.equal(page.headers['link'], undefined)

  const res = await asked('/books', 'text/csv')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/csv; charset=utf-8; header=present')
  t.equal(res.headers['content-disposition'], 'attachment; filename="books.csv"')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers['vary'], /\bAccept\b/, 'a cache keeps the formats apart')
  t.match(res.headers['events-cursor'], /\S/, 'the snapshot\'s feed position, to a key')
  t.equal(res.payload, csvFile, 'the file GET /books/export.csv gives')
  announcesDeprecation(t, res, 'books/listBooks', 'Accept: text/csv')
  const bom = await asked('/books?bom=true', 'text/csv')
  t.equal(bom.payload, `\uFEFF${csvFile}`, 'bom=true starts with a byte order mark')
  announcesDeprecation(t, bom, 'books/listBooks', 'bom=true')
  const anonymous = await asked('/books', 'text/csv', { key: null })
  t.equal(anonymous.headers['events-cursor'], undefined, 'no position to an anonymous caller')
  announcesDeprecation(t, anonymous, 'books/listBooks', 'anonymous')

  for (const [accept, type, file] of [
    ['application/x-ndjson', 'application/x-ndjson', ndjsonFile],
    ['text/csv;q=0.5, application/x-ndjson', 'application/x-ndjson', ndjsonFile],
    ['text/*', 'text/csv; charset=utf-8; header=present', csvFile]
  ] as const) {
    const exported = await asked('/books', accept)
    t.equal(exported.headers['content-type'], type, `Accept: ${accept}`)
    t.equal(exported.payload, file)
    announcesDeprecation(t, exported, 'books/listBooks', `Accept: ${accept}`)
  }
  for (const [accept, what] of [['application/json, text/csv', 'JSON when it is as welcome'], ['application/problem+json', 'a page to a client that names none of the formats']] as const) {
    const json = await api.request({ url: '/books', headers: { accept } })
    t.equal(json.headers['content-type'], 'application/json; charset=utf-8', what)
    t.equal(json.headers['deprecation'], undefined, `${what}: not deprecated`)
  }
  const head = await asked('/api/students', 'application/x-ndjson', { method: 'HEAD' })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-disposition'], 'attachment; filename="students.ndjson"')
  t.equal(head.payload, '')
  announcesDeprecation(t, head, 'students/listStudents', 'HEAD /api/students')

  // A page's parameters do not combine with an export, nor bom with anything but CSV (refusals the contract declares).
  for (const [url, accept, parameter] of [
    ['/books?limit=20', 'text/csv', 'limit'], ['/books?cursor=a.b', 'application/x-ndjson', 'cursor'], ['/books?bom=true', 'application/x-ndjson', 'bom'], ['/books?bom=false', undefined, 'bom']
  ] as const) {
    const refused = await api.request({ url, headers: accept === undefined ? {} : { accept } })
    t.equal(refused.statusCode, 400, url)
    t.match(refused.json(), { type: '/problems/unsupported-combination', errors: [{ parameter }] }, `${url} names ${parameter}`)
  }
})

t.test('export chunks: a read that fails closes the snapshot once, and the failure reaches the reader', async t => {
  let closed = 0
  const chunks = exportChunks(async () => { throw new Error('the disk went away') }, () => { closed++ })
  await t.rejects(chunks.next(), { message: 'the disk went away' })
  t.same(await chunks.next(), { done: true, value: undefined }, 'and nothing more')
  t.same(await chunks.return!(), { done: true, value: undefined })
  t.equal(closed, 1)
})

/** An export whose first chunk is `row`'s line and whose end waits for release(); counts its closes. */
function heldExport (position: string, fields: string[], row: unknown[]) {
  let release = () => {}
  const released = new Promise<void>(resolve => { release = resolve })
  let sent = false
  const held = { closed: 0, release, fail: false }
  const exported: RecordExport = {
    position,
    fields,
    chunks: exportChunks(async () => {
      if (sent) {
        await released
        if (held.fail) throw new Error('the database went away')
        return null
      }
      sent = true
      return JSON.stringify(Object.fromEntries(fields.map((field, i) => [field, row[i]]))) + '\n'
    }, () => { held.closed++ })
  }
  return { exported, held }
}

/** The app on real sockets, its books' export replaced by `exports` (one call each), EXPORTS_MAX 1 unless `overrides` say otherwise. */
async function withExports (t: Test, exports: (() => Promise<RecordExport>)[], overrides: Partial<Config> = {}): Promise<{ api: TestApi, url: string, repositories: Repositories }> {
  const repositories = await openTestRepositories(t, await testStorage(t))
  const books = repositories.books
  const stubbed: Repositories = {
    ...repositories,
    books: {
      list: books.list.bind(books),
      get: books.get.bind(books),
      create: books.create.bind(books),
      createMany: books.createMany.bind(books),
      replace: books.replace.bind(books),
      delete: books.delete.bind(books),
      export: async () => exports.shift()!()
    }
  }
  const api = await build(t, { exportsMax: 1, opsPort: 'off', ...overrides } as never, { repositories: stubbed })
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  return { api, url: `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`, repositories }
}

t.test('EXPORTS_MAX: an export beyond it is a 503 at once; a slot comes back when an export ends, fails or its client goes away', async t => {
  const repositories = await openTestRepositories(t)
  const book = (await repositories.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })).record
  const fields = Object.keys(book)
  const row = Object.values(book)
  const position = await repositories.events.head()
  const [first, second, third] = [heldExport(position, fields, row), heldExport(position, fields, row), heldExport(position, fields, row)]
  const { api, url } = await withExports(t, [
    async () => first.exported,
    async () => second.exported,
    async () => { throw new Error('cannot open a snapshot') },
    async () => third.exported
  ])
  const headers = { authorization: `Bearer ${adminKey}` }

  // The first runs, held after its first row: the second is refused at once.
  const running = await fetch(`${url}${booksNdjson}`, { headers })
  const reader = running.body!.getReader()
  t.match(new TextDecoder().decode((await reader.read()).value), /"title":"Dune"/, 'the first batch arrives before the export ends')
  const busy = await api.request({ url: booksNdjson })
  t.equal(busy.statusCode, 503)
  t.equal(busy.headers['retry-after'], '1')
  t.match(busy.json(), { type: '/problems/list-busy', detail: /1 exports are running on this node/ })
  t.equal((await api.request({ url: '/books' })).statusCode, 200, 'pages are not held back by it')
  first.held.release()
  t.equal((await reader.read()).done, true, 'ended')
  t.equal(first.held.closed, 1, 'its snapshot closed once')

  // The second: its client goes away midway.
  const abort = new AbortController()
  const cut = await fetch(`${url}${booksNdjson}`, { headers, signal: abort.signal })
  await cut.body!.getReader().read()
  abort.abort()
  // Released as the client goes: a release that never comes fails here in seconds, not at the helper's 120.
  await eventually(async () => second.held.closed, closed => closed === 1, 'the snapshot closed once its client went away', { withinMs: 10_000 })
  // The read it was waiting on ends after the body is gone: nothing more is sent.
  second.held.release()

  // The third fails to open: a 500, and its slot is back.
  const failed = await eventually(() => api.request({ url: booksNdjson }), res => res.statusCode !== 503, 'the slot given back')
  t.equal(failed.statusCode, 500)

  // The fourth fails midway: the body ends without its last chunk, which a client sees as an error.
  const broken = await fetch(`${url}${booksNdjson}`, { headers })
  const brokenReader = broken.body!.getReader()
  await brokenReader.read()
  third.held.fail = true
  third.held.release()
  await t.rejects(brokenReader.read(), 'the client sees the export fail')
  t.equal(third.held.closed, 1)
})

const fields = ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at']

/** An export that selects nothing (a header only); counts its closes in `closes`. */
function emptyExport (closes: { count: number }): RecordExport {
  return { position: null, fields, chunks: exportChunks<string>(async () => null, () => { closes.count++ }) }
}

/** An export of `chunk` after `chunk` for ever (the client has to stop it); counts its closes. */
function endlessExport (chunk: string, closes: { count: number }): RecordExport {
  return { position: null, fields, chunks: exportChunks(async () => chunk, () => { closes.count++ }) }
}

/** A refusal of an export: its status, problem type and detail, Retry-After, and no file to save. */
function refused (t: Test, res: { statusCode: number, headers: Record<string, unknown>, json: () => unknown }, status: number, type: string, detail: RegExp): void {
  t.equal(res.statusCode, status, `${status} ${type}`)
  t.match(res.json(), { type, detail })
  t.equal(res.headers['retry-after'], '1')
  t.equal(res.headers['content-disposition'], undefined, 'no Content-Disposition on a problem')
}

/** An export held open over a real socket (its first chunk read), until abort(). */
async function holdOpen (url: string, key: string | null): Promise<{ abort: () => void, reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const abort = new AbortController()
  const res = await fetch(`${url}${booksNdjson}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` }, signal: abort.signal })
  if (res.status !== 200) throw new Error(`the export to hold answered ${res.status}`)
  const reader = res.body!.getReader()
  await reader.read()
  return { abort: () => abort.abort(), reader }
}

t.test('exports per caller: a key at EXPORTS_PER_KEY, or an address without a key running one, is a 429; the anonymous share or the node full, a 503; keys keep room anonymous callers cannot take', async t => {
  const book = { book_id: '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: 1965, created_at: '2026-11-21T09:30:00.000Z', updated_at: '2026-11-21T09:30:00.000Z' }
  const holds = [heldExport('', fields, Object.values(book)), heldExport('', fields, Object.values(book)), heldExport('', fields, Object.values(book))]
  const quick = { count: 0 }
  const { api, url, repositories } = await withExports(t, [
    ...holds.map(({ exported }) => async () => exported),
    ...Array.from({ length: 10 }, () => async () => emptyExport(quick))
  ], { exportsMax: 3, exportsPerKey: 1, exportsAnonymous: 1 })
  const other = (await createKey(repositories.apiKeys, 'other', ['books:read'])).key
  const third = (await createKey(repositories.apiKeys, 'third', ['books:read'])).key

  // Held from 127.0.0.1 without a key, and by the admin key.
  const anonymous = await holdOpen(url, null)
  const admin = await holdOpen(url, adminKey)
  refused(t, await api.request({ url: booksNdjson, key: null, remoteAddress: '127.0.0.1' }), 429, '/problems/too-many-exports', /^An export from this address is running on this node/)
  refused(t, await api.request({ url: booksNdjson, key: null, remoteAddress: '192.0.2.7' }), 503, '/problems/list-busy', /^1 exports by callers without an API key are running on this node/)
  refused(t, await api.request({ url: booksNdjson }), 429, '/problems/too-many-exports', /^This API key runs 1 exports on this node/)
  // The anonymous share is full, and another key still finds room: the node's last.
  const keyed = await holdOpen(url, other)
  refused(t, await api.request({ url: booksNdjson, key: third }), 503, '/problems/list-busy', /^3 exports are running on this node/)
  t.equal((await api.request({ url: '/books', key: null })).statusCode, 200, 'pages are not held back')
  t.equal(quick.count, 0, 'no refused export opened a snapshot')

  // Each given back as its export ends: the address, the key, the node.
  anonymous.abort()
  await eventually(async () => holds[0]!.held.closed, closed => closed === 1, 'the anonymous export closed', { withinMs: 10_000 })
  t.equal((await api.request({ url: booksNdjson, key: null, remoteAddress: '192.0.2.7' })).statusCode, 200, 'another address may export now')
  admin.abort()
  keyed.abort()
  await eventually(async () => holds[1]!.held.closed + holds[2]!.held.closed, closed => closed === 2, 'the keyed exports closed', { withinMs: 10_000 })
  t.equal((await api.request({ url: booksNdjson })).statusCode, 200)
  t.equal((await api.request({ url: booksNdjson, key: third })).statusCode, 200)
  t.equal(quick.count, 3, 'each export admitted closed its snapshot')
})

t.test('an export whose first rows are not read within the budget, or that would hold a WAL grown too long, is a 503 list-busy before any byte; a later read beyond the budget ends the body unfinished', async t => {
  const closes = { count: 0 }
  let reads = 0
  const budgetOver = () => ({
    position: null,
    fields,
    chunks: exportChunks(async () => {
      if (++reads === 2) return '{}\n'
      throw new ListTimeoutError(50)
    }, () => { closes.count++ })
  })
  const { api, url } = await withExports(t, [async () => budgetOver(), async () => budgetOver(), async () => { throw new ListTimeoutError(50) }, async () => { throw new SnapshotsHeldError('held') }])
  refused(t, await api.request({ url: booksCsv, key: null }), 503, '/problems/list-busy', /^The export's first rows were not read within 50 ms/)
  t.equal(closes.count, 1, 'its snapshot released')
  const later = await fetch(`${url}${booksNdjson}`)
  t.equal(later.status, 200)
  const reader = later.body!.getReader()
  t.equal(new TextDecoder().decode((await reader.read()).value), '{}\n')
  await t.rejects(within(reader.read(), 10_000, 'the body cut'), { name: 'TypeError' }, 'the client sees the export fail')
  t.equal(closes.count, 2)
  refused(t, await api.request({ url: booksCsv }), 503, '/problems/list-busy', /^The export's first rows were not read within 50 ms/)
  refused(t, await api.request({ url: booksCsv }), 503, '/problems/list-busy', /^Exports wait for the ones running to end: they hold the database's write-ahead log/)
})

t.test('EXPORT_STALL_MS: a client that leaves what was sent unread is cut off, and the snapshot released', async t => {
  const closes = { count: 0 }
  const { url } = await withExports(t, [async () => endlessExport(`${'x'.repeat(1 << 18)}\n`, closes)], { exportStallMs: 300 })
  const res = await fetch(`${url}${booksNdjson}`)
  t.equal(res.status, 200)
  // Nothing read: the socket's buffers fill, then the export waits on the client.
  await within(eventually(async () => closes.count, count => count === 1, 'the stalled export closed'), 20_000, 'the stall deadline')
  await t.rejects(within(res.arrayBuffer(), 20_000, 'the body cut'), 'the client sees an unfinished body')
})

t.test('EXPORT_MAX_DURATION_MS: an export still running is cut off, and the snapshot released', async t => {
  const { exported, held } = heldExport('', fields, fields.map(() => null))
  const { url } = await withExports(t, [async () => exported], { exportMaxDurationMs: 300 })
  const res = await fetch(`${url}${booksNdjson}`)
  const reader = res.body!.getReader()
  await reader.read()
  await t.rejects(within(reader.read(), 20_000, 'the body cut'), 'the client sees an unfinished body')
  t.equal(held.closed, 1)
})

t.test('closing the service cuts the exports running, and releases their snapshots', async t => {
  const { exported, held } = heldExport('', fields, fields.map(() => null))
  const { api, url } = await withExports(t, [async () => exported])
  const res = await fetch(`${url}${booksNdjson}`)
  const reader = res.body!.getReader()
  await reader.read()
  await within(api.app.close(), 20_000, 'the close')
  await t.rejects(reader.read(), 'the client sees an unfinished body')
  t.equal(held.closed, 1)
})

t.test('exports are counted per holder: each one ended gives its room back, once', async t => {
  const exports = new Exports({ max: 3, perKey: 2, anonymous: 1, stallMs: 1000, maxDurationMs: 1000 })
  const [a, b] = [exports.admit({ key: 'k' }), exports.admit({ key: 'k' })]
  t.throws(() => exports.admit({ key: 'k' }), { statusCode: 429, message: /^This API key runs 2 exports/ })
  a.release()
  a.release()
  t.equal(exports.size, 1)
  const c = exports.admit({ key: 'k' })
  t.throws(() => exports.admit({ key: 'k' }), { statusCode: 429, message: /^This API key runs 2 exports/ }, 'at its limit again')
  b.release()
  c.release()
  t.equal(exports.size, 0)
})

t.test('an export admitted as the service begins to close is cut once its body exists', async t => {
  const exports = new Exports({ max: 1, perKey: 1, anonymous: 1, stallMs: 1000, maxDurationMs: 1000 })
  const admission = exports.admit({ key: 'k' })
  exports.closeAll()
  let cut = 0
  admission.onCut(() => { cut++ })
  t.equal(cut, 1)
  admission.release()
  admission.release()
  t.equal(exports.size, 0, 'given back once')
})

t.test('rows written on the event loop yield to other callbacks every few ms of work, however few or many the rows', async t => {
  let now = 0
  const rows = Array.from({ length: 20 }, (_, i) => [i])
  let turns = 0
  let spinning = true
  const spin = () => {
    if (!spinning) return
    turns++
    setImmediate(spin)
  }
  setImmediate(spin)
  // Each row costs 1 ms of the (fake) clock: a turn for the others every 4 rows.
  const text = await new LoopSlice(4, () => now).write(rows, row => {
    now++
    return `${String(row[0])}\n`
  })
  spinning = false
  t.equal(text, rows.map(row => `${String(row[0])}\n`).join(''))
  t.ok(turns >= 4 && turns <= 6, `${turns} turns of other callbacks while 20 ms of rows were written`)
  // Cheap rows: the clock stands still, and a thousand are written in one go.
  turns = 0
  spinning = true
  setImmediate(spin)
  const still = 0
  await new LoopSlice(4, () => still).write(Array.from({ length: 1000 }, () => [1]), () => '')
  spinning = false
  t.equal(turns, 0, 'no turn given up while no time passes')
})
