// Imports over HTTP on the test engine: an export imports back unchanged, rows are judged as creates are, modes, limits, keys, scopes, cancellation, the feed.
import { EventEmitter, once } from 'node:events'
import { PassThrough, Readable } from 'node:stream'
import { setImmediate } from 'node:timers/promises'
import fc from 'fast-check'
import t from 'tap'
import type { Config } from '../src/config/index.js'
import type { ImportStore } from '../src/storage/types.js'
import { readContract } from '../src/contract/openapi-document.js'
import { importHandlers } from '../src/handlers/imports.js'
import type { ImportRunner } from '../src/imports/runner.js'
import { createKey } from '../src/access/api-keys.js'
import type { Scope } from '../src/domain/api-key-types.js'
import { adminKey, build, eventually, openTestRepositories, type TestApi, within } from './helper.js'

type Json = Record<string, any>

const csv = { 'content-type': 'text/csv' }
const ndjson = { 'content-type': 'application/x-ndjson' }
const unlimited = { rateLimit: { requests: 1e9, seconds: 60 }, rateLimitAnonymous: { requests: 1e9, seconds: 60 } }

async function service (t: Test, overrides: Partial<Config> = {}): Promise<TestApi> {
  return build(t, { ...unlimited, ...overrides })
}
type Test = Parameters<typeof build>[0]

/** Starts an import and waits for its end; the 202's body and the ended import. */
async function imported (api: TestApi, query: string, headers: Record<string, string>, payload: string): Promise<{ started: Json, ended: Json }> {
  const res = await api.request({ method: 'POST', url: `/imports?${query}`, headers, payload })
  if (res.statusCode !== 202) throw new Error(`POST /imports?${query} → ${res.statusCode} ${res.payload}`)
  const location = res.headers['location'] as string
  const ended = await eventually(async () => (await api.request({ method: 'GET', url: location })).json(), job => !['receiving', 'running'].includes(job.state), `${location} ended`)
  return { started: res.json(), ended }
}

/** An export's file: `path` is a list's, `format` names its export (`<list>/export.csv`, `…/export.ndjson`), `query` its filters. */
const exported = async (api: TestApi, path: string, format: 'csv' | 'ndjson', query = '') => (await api.request({ url: `${path}/export.${format}${query}` })).payload

// Text as people write it, text a spreadsheet would run, text that looks escaped already, quotes, commas, line ends.
const text = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.tuple(fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", "'=", "''+", '"', ',', '\r\n', '\n', ' '), fc.string({ unit: 'grapheme', maxLength: 20 })).map(([start, rest]) => start + rest)
).filter(s => !s.includes('\u0000'))
const isbn13 = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 9, maxLength: 9 }).map(digits => {
  const base = `978${digits.join('')}`
  const sum = [...base].reduce((total, d, i) => total + Number(d) * (i % 2 === 0 ? 1 : 3), 0)
  return base + String((10 - sum % 10) % 10)
})
const bookArb = fc.record({ title: text, author: text, isbn: fc.option(isbn13, { nil: null }), published_year: fc.option(fc.integer({ min: -5000, max: 9999 }), { nil: null }) })
const studentArb = fc.record({
  name: text,
  email: fc.emailAddress().filter(e => e.length <= 254),
  enrollment_year: fc.option(fc.integer({ min: 1800, max: 9999 }), { nil: null }),
  status: fc.constantFrom('active', 'graduated', 'withdrawn')
})

t.test('an export imports back unchanged, into another deployment, from either format', async t => {
  const source = await service(t)
  await fc.assert(fc.asyncProperty(fc.array(bookArb, { minLength: 1, maxLength: 40 }), fc.array(studentArb, { maxLength: 15 }), async (books, students) => {
    for (const book of books) await source.request({ method: 'POST', url: '/books', payload: book })
    for (const student of students) await source.request({ method: 'POST', url: '/api/students', payload: student })
  }), { seed: 20261127, numRuns: 4 })
  for (const [format, headers] of [['csv', csv], ['ndjson', ndjson]] as const) {
    const target = await service(t)
    for (const [path, query, collection] of [['/books', '?sort=title', 'books'], ['/api/students', '', 'students']] as const) {
      const file = await exported(source, path, format, query)
      const { ended } = await imported(target, `collection=${collection}`, headers, file)
      t.equal(ended.state, 'succeeded', `${format} ${collection}: ${JSON.stringify(ended.problems.slice(0, 3))}`)
      t.equal(await exported(target, path, format, query), file, `${format}: ${path}/export.${format}${query} exports the same bytes from the deployment it was imported into`)
    }
  }
})

t.test('each row is judged as a create of the same body is: the same problems, in the same words', async t => {
  const api = await service(t)
  // Rows near the contract's rules: some valid, most breaking one or several.
  const field = fc.oneof(text, fc.constant(''), fc.integer(), fc.constant(null), fc.string({ minLength: 501, maxLength: 520 }), fc.constantFrom('978-0-441-01359-3', '978-0-441-01359-4', '0-441-01359-X', 'not an isbn'))
  const rowArb = fc.record({ title: field, author: field, isbn: field, published_year: fc.oneof(field, fc.integer({ min: -6000, max: 10_000 })), extra: field }, { requiredKeys: [] })
  const rows = fc.sample(rowArb, { seed: 20261128, numRuns: 120 })
  const { ended } = await imported(api, 'collection=books&mode=valid', ndjson, rows.map(row => JSON.stringify(row)).join('\n') + '\n')
  for (const [i, row] of rows.entries()) {
    const single = await api.request({ method: 'POST', url: '/books', payload: row })
    const problems = ended.problems.filter((p: Json) => p.line === i + 1)
    if (single.statusCode === 400) {
      t.same(problems.map((p: Json) => ({ detail: p.detail, pointer: p.pointer })), single.json().errors, `line ${i + 1}: the create's errors`)
    } else {
      // A valid row: written by the import (or, its ISBN taken by an earlier row, refused as the create now is).
      t.ok(problems.every((p: Json) => p.type === '/problems/already-exists'), `line ${i + 1} (${single.statusCode}): ${JSON.stringify(problems)}`)
    }
  }
  t.equal(ended.rows.read, rows.length)
  t.equal(ended.rows.written + ended.rows.refused, rows.length, 'every row written or refused')
})

t.test('mode=all writes nothing if a row is refused; mode=valid writes the rest; repeats and stored values are refused by line', async t => {
  const api = await service(t)
  await api.request({ method: 'POST', url: '/books', payload: { title: 'Stored', author: 'A', isbn: '978-0-441-01359-3' } })
  const file = [
    'title,author,isbn,published_year',
    'Dune,Frank Herbert,,1965',
    ',No title,,',
    '"Quoted, with a comma",Someone,9780306406157,',
    'Repeat,Someone else,978-0-306-40615-7,',
    'Taken,Another,9780441013593,',
    'Cells,Too,Many,1,2'
  ].join('\r\n') + '\r\n'
  const all = await imported(api, 'collection=books', csv, file)
  t.match(all.ended, { state: 'failed', mode: 'all', rows: { read: 6, written: 0, refused: 4 }, detail: /4 of 6 rows were refused/ })
  t.same(all.ended.problems.map((p: Json) => [p.line, p.type, p.pointer ?? null]), [
    [3, '/problems/validation-error', '#/title'],
    [5, '/problems/already-exists', '#/isbn'],
    [6, '/problems/already-exists', '#/isbn'],
    [7, '/problems/invalid-import', null]
  ])
  t.match(all.ended.problems[1].detail, 'repeats the isbn of line 4')
  t.equal((await api.request({ url: '/books' })).json().items.length, 1, 'nothing written')
  const valid = await imported(api, 'collection=books&mode=valid', csv, file)
  t.match(valid.ended, { state: 'succeeded', rows: { read: 6, written: 2, refused: 4 } })
  t.same((await api.request({ url: '/books?sort=title' })).json().items.map((b: Json) => b.title), ['Dune', 'Quoted, with a comma', 'Stored'])
})

t.test('every record an import writes is in the change feed, one event each', async t => {
  const api = await service(t)
  const position = (await api.request({ url: '/books' })).headers['events-cursor'] as string
  const rows = Array.from({ length: 1200 }, (_, i) => JSON.stringify({ title: `Book ${i}`, author: 'A' })).join('\n')
  const { ended } = await imported(api, 'collection=books', ndjson, rows)
  t.equal(ended.rows.written, 1200)
  const ids = new Set<string>()
  await eventually(async () => {
    for (let after = position, more = true; more;) {
      const page = (await api.request({ url: `/events?types=book.created&limit=500&after=${after}` })).json()
      for (const event of page.items) ids.add(event.data.id)
      more = page.items.length > 0
      after = page.next_cursor
    }
    return ids.size
  }, size => size === 1200, 'an event per record')
  t.equal(ids.size, 1200)
})

t.test('what an upload refuses before any row: limits, a header, a media type, a scope', async t => {
  const api = await service(t, { importMaxBytes: 200, importMaxRows: 3 })
  const rows = (n: number) => 'title,author\r\n' + 'Dune,Frank Herbert\r\n'.repeat(n)
  const tooMany = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: rows(4) })
  t.match(tooMany.json(), { status: 413, type: '/problems/import-too-large', detail: /3 rows.*IMPORT_MAX_ROWS/ })
  const tooBig = await api.request({ method: 'POST', url: '/imports?collection=books&mode=valid', headers: ndjson, payload: JSON.stringify({ title: 'x'.repeat(300), author: 'A' }) })
  t.match(tooBig.json(), { status: 413, detail: /200 bytes.*IMPORT_MAX_BYTES/ })
  t.equal((await api.request({ url: '/books' })).json().items.length, 0, 'nothing written')
  t.same((await api.request({ url: '/imports' })).json().items, [], 'a refused upload leaves no import: its caller got a problem, never an id')
  t.match((await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: 'title,title,author\r\n' })).json(), { status: 400, type: '/problems/invalid-import', errors: [{ parameter: 'title', detail: 'is named twice' }] })
  t.match((await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: '' })).json(), { status: 400, errors: [{ parameter: 'header' }] })
  t.match((await api.request({ method: 'POST', url: '/imports?collection=books', payload: { title: 'Dune' } })).json(), { status: 415, detail: 'The request body must be text/csv or application/x-ndjson' })
  t.match((await api.request({ method: 'POST', url: '/books', headers: csv, payload: 'title\r\nDune\r\n' })).json(), { status: 415, detail: 'The request body must be application/json' })
})

t.test('ndjson: a line that is not a JSON object is refused by its number; blank lines and a byte order mark are passed over', async t => {
  const api = await service(t)
  const { ended } = await imported(api, 'collection=students&mode=valid', ndjson, '\uFEFF{"name":"Ada","email":"ada@example.org"}\n\n[1]\n{"name":\n{"name":"Grace","email":"ADA@example.org"}\n')
  t.same(ended.problems.map((p: Json) => [p.line, p.detail]), [[3, 'is not a JSON object'], [4, 'is not JSON'], [5, 'repeats the email of line 1']])
  t.match(ended, { rows: { read: 4, written: 1, refused: 3 } })
})

t.test('csv: a byte order mark (as Excel writes one) is not part of the first header cell', async t => {
  const api = await service(t)
  const { ended } = await imported(api, 'collection=books', csv, '\uFEFFtitle,author\r\nDune,Frank Herbert\r\n')
  t.match(ended, { state: 'succeeded', rows: { read: 1, written: 1, refused: 0 } })
  t.same((await api.request({ url: '/books' })).json().items.map((book: Json) => [book.title, book.author]), [['Dune', 'Frank Herbert']], 'the first column read as title')
  // An export written for Excel (bom=true) imports back the same way.
  const { ended: again } = await imported(await service(t), 'collection=books', csv, await exported(api, '/books', 'csv', '?bom=true'))
  t.match(again, { state: 'succeeded', rows: { written: 1 } })
})

t.test('Idempotency-Key: a retried upload answers the first import; another file with the key is a 422', async t => {
  const api = await service(t)
  const headers = { ...csv, 'idempotency-key': '"import-1"' }
  const file = 'title,author\r\nDune,Frank Herbert\r\n'
  const first = await api.request({ method: 'POST', url: '/imports?collection=books', headers, payload: file })
  const again = await api.request({ method: 'POST', url: '/imports?collection=books', headers, payload: file })
  t.equal(again.statusCode, 202)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.headers['location'], first.headers['location'], 'the same import')
  t.equal((await api.request({ method: 'POST', url: '/imports?collection=books', headers, payload: file + 'Emma,Jane Austen\r\n' })).statusCode, 422)
  await eventually(async () => (await api.request({ url: first.headers['location'] as string })).json().state, state => state === 'succeeded', 'the import ended')
  t.equal((await api.request({ url: '/books' })).json().items.length, 1, 'one import, one record')
})

t.test('Idempotency-Key: a replay is the same request: the same file into another collection, with another mode or format, is a 422', async t => {
  const api = await service(t)
  const headers = { ...csv, 'idempotency-key': '"import-2"' }
  const file = 'title,author\r\nDune,Frank Herbert\r\n'
  const first = await api.request({ method: 'POST', url: '/imports?collection=books', headers, payload: file })
  t.equal(first.statusCode, 202)
  for (const [url, changed] of [['/imports?collection=students', headers], ['/imports?collection=books&mode=valid', headers], ['/imports?collection=books', { ...headers, ...ndjson }]] as const) {
    const again = await api.request({ method: 'POST', url, headers: changed, payload: file })
    t.match(again.json(), { status: 422, type: '/problems/idempotency-key-reused', detail: 'This Idempotency-Key was used for another import (CSV into books, mode=all)' }, `${url} ${changed['content-type']}`)
    t.equal(again.headers['idempotent-replayed'], undefined)
  }
  t.equal((await api.request({ method: 'POST', url: '/imports?collection=books&mode=all', headers, payload: file })).headers['idempotent-replayed'], 'true', 'the same request, its mode spelt out, is a replay')
  const lines = { ...ndjson, 'idempotency-key': '"import-3"' }
  t.equal((await api.request({ method: 'POST', url: '/imports?collection=students&mode=valid', headers: lines, payload: '{"name":"Ada","email":"ada@example.org"}\n' })).statusCode, 202)
  t.match((await api.request({ method: 'POST', url: '/imports?collection=books&mode=valid', headers: lines, payload: '{"name":"Ada","email":"ada@example.org"}\n' })).json(), { status: 422, detail: 'This Idempotency-Key was used for another import (NDJSON into students, mode=valid)' })
  t.equal((await api.request({ url: '/imports' })).json().items.length, 2, 'one import per key')
})

t.test('the media type is read as the contract names it: in any case, with parameters', async t => {
  const api = await service(t)
  for (const type of ['Text/CSV', 'text/csv; charset=utf-8', 'TEXT/CSV;header=present']) {
    const { started, ended } = await imported(api, 'collection=books', { 'content-type': type }, `title,author\r\n${type},A\r\n`)
    t.match(started, { format: 'csv' }, type)
    t.match(ended, { state: 'succeeded', rows: { written: 1 } }, type)
  }
  const { started } = await imported(api, 'collection=books', { 'content-type': 'Application/X-NDJSON; charset=utf-8' }, '{"title":"Emma","author":"Jane Austen"}\n')
  t.equal(started.format, 'ndjson')
})

t.test('a CSV header of 500,000 columns the import cannot take is a small 400: one problem per name, at most 100', async t => {
  const api = await service(t)
  const same = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: 'x,'.repeat(499_999) + 'x\r\nDune\r\n' })
  t.match(same.json(), { status: 400, type: '/problems/invalid-import', detail: 'The CSV header has 500000 columns the import cannot take', errors: [{ parameter: 'x', detail: /; 500000 columns have this name$/ }] })
  t.equal(same.json().errors.length, 1)
  const distinct = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: Array.from({ length: 120_000 }, (_, i) => `c${i}`).join(',') + '\r\n' })
  t.match(distinct.json(), { status: 400, detail: 'The CSV header has 120000 columns the import cannot take; the first 100 names refused are listed' })
  t.equal(distinct.json().errors.length, 100)
  t.ok(distinct.payload.length < 40_000, `${distinct.payload.length} bytes`)
})

t.test('an import is its key\'s: another key neither sees nor cancels it, and starting one needs the collection\'s write scope', async t => {
  const repositories = await openTestRepositories(t)
  const api = await build(t, unlimited, { repositories })
  const key = async (...scopes: Scope[]) => (await createKey(repositories.apiKeys, 'test', scopes)).key
  const [booksKey, studentsKey] = [await key('books:write'), await key('students:write')]
  const payload = 'title,author\r\nDune,Frank Herbert\r\n'
  const started = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload, key: booksKey })
  t.equal(started.statusCode, 202)
  t.match((await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload, key: studentsKey })).json(), { status: 403, type: '/problems/missing-scope', detail: /books:write/ })
  const location = started.headers['location'] as string
  t.equal((await api.request({ url: location, key: studentsKey })).statusCode, 404)
  t.equal((await api.request({ method: 'DELETE', url: location, key: studentsKey })).statusCode, 404)
  t.same((await api.request({ url: '/imports', key: studentsKey })).json().items, [])
  t.equal((await api.request({ url: '/imports', key: booksKey })).json().items.length, 1)
  t.equal((await api.request({ url: location })).statusCode, 200, 'an admin key sees every import')
})

t.test('cancelling: while the file arrives nothing is written; while rows are written, the rest is not', async t => {
  const api = await service(t)
  const upload = new PassThrough()
  upload.write('title,author\r\n' + 'Dune,Frank Herbert\r\n'.repeat(600))
  const first = api.app.inject({ method: 'POST', url: '/imports?collection=books', headers: { ...csv, authorization: `Bearer ${adminKey}` }, payload: upload })
  const receiving = await eventually(async () => (await api.request({ url: '/imports' })).json().items[0], job => job?.rows.read >= 500, 'the first batch received')
  t.equal((await api.request({ method: 'DELETE', url: `/imports/${receiving.import_id}` })).statusCode, 202)
  upload.end('Emma,Jane Austen\r\n'.repeat(600))
  const answer = (await first).json()
  t.match(answer, { state: 'cancelled', rows: { written: 0 } })
  t.equal((await api.request({ url: '/books' })).json().items.length, 0, 'nothing written')

  const file = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ title: `Book ${i}`, author: 'A' })).join('\n')
  const all = await api.request({ method: 'POST', url: '/imports?collection=books', headers: ndjson, payload: file })
  const refused = await api.request({ method: 'DELETE', url: all.headers['location'] as string })
  t.match(refused.json(), { status: 409, detail: /mode=all.*half written/ }, 'mode=all runs to its end once writing')
  await eventually(async () => (await api.request({ url: all.headers['location'] as string })).json().state, state => state === 'succeeded', 'the mode=all import ended')
  const started = await api.request({ method: 'POST', url: '/imports?collection=books&mode=valid', headers: ndjson, payload: file })
  const location = started.headers['location'] as string
  const cancelled = await api.request({ method: 'DELETE', url: location })
  t.equal(cancelled.statusCode, 202)
  t.equal(cancelled.json().cancel_requested, true)
  const ended = await eventually(async () => (await api.request({ url: location })).json(), job => job.state !== 'running', 'the import stopped')
  t.equal(ended.state, 'cancelled')
  t.ok(ended.rows.written < 20_000, `${ended.rows.written} written before it stopped`)
  t.equal((await api.request({ method: 'DELETE', url: location })).statusCode, 409, 'nothing left to cancel')
})

t.test('an import followed live: a frame every second, the last when it ends, then the stream closes', async t => {
  const api = await service(t)
  const started = await api.request({ method: 'POST', url: '/imports?collection=books', headers: ndjson, payload: Array.from({ length: 3000 }, (_, i) => JSON.stringify({ title: `Book ${i}`, author: 'A' })).join('\n') })
  const location = started.headers['location'] as string
  const head = await api.request({ method: 'HEAD', url: location, headers: { accept: 'text/event-stream' } })
  t.equal(head.headers['content-type'], 'text/event-stream; charset=utf-8')
  // Answered once the stream ends, which is when the import does.
  const streamed = await api.app.inject({ method: 'GET', url: location, headers: { accept: 'text/event-stream', authorization: `Bearer ${adminKey}` } })
  const frames = streamed.payload.split('\n\n').filter(frame => frame !== '').map(frame => {
    const [event, data] = frame.split('\n')
    t.equal(event, 'event: import')
    return JSON.parse(data!.slice('data: '.length)) as Json
  })
  t.ok(frames.length >= 1, `${frames.length} frames`)
  t.equal(frames.at(-1)!.state, 'succeeded')
  t.equal(frames.at(-1)!.rows.written, 3000)
  t.ok(frames.every((frame, i) => i === 0 || frame.rows.written >= frames[i - 1]!.rows.written), 'counts only grow')
  const again = await api.app.inject({ method: 'GET', url: location, headers: { accept: 'text/event-stream', authorization: `Bearer ${adminKey}` } })
  t.equal(again.payload.split('\n\n').filter(frame => frame !== '').length, 1, 'an ended import: one frame, and the end')
})

t.test('an export imported into the deployment it came from: every row refused by its id (and its unique value), nothing written twice', async t => {
  const api = await service(t)
  for (const title of ['Dune', 'Emma']) await api.request({ method: 'POST', url: '/books', payload: { title, author: 'A', isbn: title === 'Dune' ? '978-0-441-01359-3' : null } })
  const file = await exported(api, '/books', 'ndjson')
  const { ended } = await imported(api, 'collection=books&mode=valid', ndjson, file + file)
  t.match(ended, { state: 'succeeded', rows: { read: 4, written: 0, refused: 4 } })
  t.same(ended.problems.map((p: Json) => [p.line, p.pointer, p.detail]), [
    [1, '#/book_id', 'Another book already has this book_id'],
    [1, '#/isbn', 'Another book already has this isbn'],
    [2, '#/book_id', 'Another book already has this book_id'],
    [3, '#/book_id', 'repeats the book_id of line 1'],
    [4, '#/book_id', 'repeats the book_id of line 2']
  ])
  const notUtf8 = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: Buffer.concat([Buffer.from('title,author\r\nD'), Buffer.from([0xff]), Buffer.from(',A\r\n')]) })
  t.match(notUtf8.json(), { status: 400, type: '/problems/invalid-import', detail: /not valid UTF-8/ })
})

/** The test engine's repositories with some of the import store's methods replaced (a database failing there). */
async function importsWith (t: Test, replaced: (imports: ImportStore) => Partial<ImportStore>) {
  const repositories = await openTestRepositories(t)
  const { imports } = repositories
  const bound = Object.fromEntries((['start', 'stage', 'conflicts', 'staged', 'unstage', 'update', 'get', 'list', 'claim'] as const)
    .map(name => [name, (imports[name] as (...args: unknown[]) => unknown).bind(imports)])) as unknown as ImportStore
  return { ...repositories, imports: { ...bound, ...replaced(imports) } }
}

t.test('a database failure while a file is checked is a 500; the import is left to its lease, which ends it failed', async t => {
  const failing = await importsWith(t, () => ({ conflicts: async () => { throw new Error('the database went away') } }))
  const api = await build(t, { ...unlimited, importLeaseMs: 1000 }, { repositories: failing })
  const res = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: 'title,author\r\nDune,A\r\n' })
  t.equal(res.statusCode, 500)
  const ended = await eventually(async () => (await api.request({ url: '/imports' })).json().items[0], job => job.state !== 'receiving', 'ended by the sweep once its lease ran out')
  t.match(ended, { state: 'failed', detail: /cut off after 1 rows/ })
})

t.test('an import followed live while its file arrives: a frame every second, from whichever node holds it', async t => {
  const api = await service(t)
  const upload = new PassThrough()
  upload.write('title,author\r\n' + 'Dune,Frank Herbert\r\n'.repeat(500))
  const posted = api.app.inject({ method: 'POST', url: '/imports?collection=books', headers: { ...csv, authorization: `Bearer ${adminKey}` }, payload: upload })
  const job = await eventually(async () => (await api.request({ url: '/imports' })).json().items[0], found => found !== undefined, 'the import begun')
  const streamed = api.app.inject({ method: 'GET', url: `/imports/${job.import_id}`, headers: { accept: 'text/event-stream', authorization: `Bearer ${adminKey}` } })
  // Held for over a second: the stream's poll reads it meanwhile.
  await new Promise(resolve => setTimeout(resolve, 1500))
  upload.end('Emma,Jane Austen\r\n')
  t.equal((await posted).statusCode, 202)
  const frames = (await streamed).payload.split('\n\n').filter(frame => frame !== '').map(frame => JSON.parse(frame.split('\n')[1]!.slice('data: '.length)) as Json)
  t.ok(frames.filter(frame => frame.state === 'receiving').length >= 2, `${frames.length} frames, polled while receiving`)
  t.equal(frames.at(-1)!.state, 'succeeded')
})

t.test('the rate limit counts an import by its rows: one request and one per thousand rows; a file that spends the quota stops with nothing written', async t => {
  const api = await build(t, { rateLimit: { requests: 6, seconds: 60 } })
  const file = (rows: number) => 'title,author\r\n' + Array.from({ length: rows }, (_, i) => `Book ${i},A\r\n`).join('')
  const first = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: file(4500) })
  t.equal(first.statusCode, 202)
  t.match(first.headers['ratelimit'], /r=1;/, 'one request and four thousands of rows counted')
  const spent = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: file(2000) })
  t.equal(spent.statusCode, 429)
  t.match(spent.json(), { type: 'https://iana.org/assignments/http-problem-types#quota-exceeded', detail: /^Request quota exceeded by this import/ })
  t.ok(Number(spent.headers['retry-after']) > 0)
})

t.test('the rate limit counts an upload by the pieces it arrives in when they outnumber its rows: 20-byte chunks cost their sender, not the service', async t => {
  const repositories = await openTestRepositories(t)
  const api = await build(t, { rateLimit: { requests: 8, seconds: 60 } }, { repositories })
  /** One record that never ends, sent in `pieces` chunks of 20 bytes. */
  const pieces = (count: number) => Readable.from(['title\r\n', ...Array.from({ length: count - 1 }, () => 'a'.repeat(20))], { objectMode: false })
  const first = await api.request({ method: 'POST', url: '/imports?collection=books&mode=valid', headers: csv, payload: pieces(4200) })
  t.equal(first.statusCode, 202)
  t.match(first.headers['ratelimit'], /r=3;/, 'one request, and four more for 4,200 pieces')
  const spent = await api.request({ method: 'POST', url: '/imports?collection=books&mode=valid', headers: csv, payload: pieces(5000) })
  t.equal(spent.statusCode, 429)
  t.match(spent.json(), { type: 'https://iana.org/assignments/http-problem-types#quota-exceeded', detail: /^Request quota exceeded by this import \(its rows, or the pieces its body arrived in\)/ })
  t.same((await repositories.imports.list(null, 10)).map(job => job.import_id), [first.json().import_id], 'the refused upload left no import, and nothing written')
})

t.test('an upload cut midway: the import ends failed, saying so, with nothing written; a body on an operation that takes none is a 415', async t => {
  const api = await service(t)
  const upload = new PassThrough()
  upload.write('title,author\r\n' + 'Dune,Frank Herbert\r\n'.repeat(700))
  const posted = api.app.inject({ method: 'POST', url: '/imports?collection=books', headers: { ...csv, authorization: `Bearer ${adminKey}` }, payload: upload })
  await eventually(async () => (await api.request({ url: '/imports' })).json().items[0], job => job?.rows.read >= 500, 'the first batch received')
  upload.destroy(new Error('the connection was reset'))
  await posted.catch(() => null)
  const job = await eventually(async () => (await api.request({ url: '/imports' })).json().items[0], found => found.state !== 'receiving', 'the import ended')
  t.match(job, { state: 'failed', detail: /stopped before the end of the file; nothing was written/ })
  t.equal((await api.request({ url: '/books' })).json().items.length, 0)
  const deleted = await api.request({ method: 'DELETE', url: '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', headers: { 'content-type': 'text/xml' }, payload: '<book/>' })
  t.match(deleted.json(), { status: 415, detail: 'This operation takes no request body' })
})

t.test('a runner that fails (the database, say) leaves the import to its lease: it is taken up again and finished', async t => {
  let failures = 1
  const failing = await importsWith(t, imports => ({
    staged: async (importId: string, after: number, limit: number) => {
      if (failures-- > 0) throw new Error('the database went away')
      return imports.staged(importId, after, limit)
    }
  }))
  const api = await build(t, { ...unlimited, importLeaseMs: 1000 }, { repositories: failing })
  const started = await api.request({ method: 'POST', url: '/imports?collection=books', headers: csv, payload: 'title,author\r\nDune,A\r\n' })
  const ended = await eventually(async () => (await api.request({ url: started.headers['location'] as string })).json(), job => job.state !== 'running', 'taken up again')
  t.match(ended, { state: 'succeeded', rows: { written: 1 } })
})

t.test('a file of 100,000 rows: every row written, one event each, exported back whole', async t => {
  const api = await service(t)
  const rows = 100_000
  const position = (await api.request({ url: '/books' })).headers['events-cursor'] as string
  const { ended } = await imported(api, 'collection=books', csv, 'title,author,published_year\r\n' + Array.from({ length: rows }, (_, i) => `Book ${i},Author ${i % 100},${1900 + i % 100}\r\n`).join(''))
  t.match(ended, { state: 'succeeded', rows: { read: rows, written: rows, refused: 0 } })
  const lines = (await exported(api, '/books', 'csv', '?published_year_min=1950')).split('\r\n')
  t.equal(lines.length - 2, rows / 2, 'the export of half of them')
  const events = await eventually(async () => {
    let count = 0
    for (let after = position, more = true; more;) {
      const page = (await api.request({ url: `/events?types=book.created&limit=500&after=${after}` })).json()
      count += page.items.length
      more = page.items.length > 0
      after = page.next_cursor
    }
    return count
  }, count => count === rows, 'an event per record')
  t.equal(events, rows)
})

t.test('a progress stream ended by the node closing while the read for its next frame is in flight: that frame is dropped, the stream stays ended', async t => {
  const { imports } = await openTestRepositories(t)
  await imports.start({ import_id: 'streamed', keyId: 'key-1', collection: 'books', mode: 'valid', format: 'csv', created_at: new Date().toISOString(), idempotencyKey: null }, 'elsewhere', Date.now() + 60_000)
  await imports.update('streamed', { state: 'running', startedAt: new Date().toISOString() })
  // The first read (the request's) answers; the next (the stream's poll, a second later) waits for the test.
  let reads = 0
  let polled!: () => void
  const polling = new Promise<void>(resolve => { polled = resolve })
  let answer!: () => void
  const answered = new Promise<void>(resolve => { answer = resolve })
  const held: ImportStore = Object.assign(Object.create(null) as ImportStore, {
    get: async (id: string) => {
      if (++reads === 2) {
        polled()
        await answered
      }
      return imports.get(id)
    }
  })
  const closing = new AbortController()
  const handlers = importHandlers({ imports: held, runner: {} as ImportRunner, document: readContract(), limits: { maxBytes: 1 << 20, maxRows: 100 }, batch: 10, clock: Date.now, closing: closing.signal })
  const request = { params: { import_id: 'streamed' }, caller: { kind: 'key', keyId: 'key-1', scopes: [] }, method: 'GET', raw: new EventEmitter(), accepts: () => ({ type: () => 'text/event-stream' }) }
  const reply = { type: () => reply, header: () => reply, send: (stream: PassThrough) => stream }
  const stream = await handlers.getImport(request as never, reply as never) as unknown as PassThrough
  let text = ''
  stream.on('data', chunk => { text += chunk })
  const end = once(stream, 'end')
  await within(polling, 10_000, 'the stream polled for its next frame')
  closing.abort()
  answer()
  await within(end, 10_000, 'the stream ended')
  await eventually(async () => reads, count => count === 2, 'the poll answered')
  await setImmediate()
  t.equal(text.split('\n\n').filter(frame => frame !== '').length, 1, 'one frame: the one before the close')
  t.equal(stream.errored, null, 'ended, not failed (no write after its end)')
})
