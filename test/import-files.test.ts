// Reading an import's file (limits, encodings, what is not a row) and writing its staged rows (a runner's batches, taken up again), below HTTP.
import { Readable } from 'node:stream'
import { setImmediate } from 'node:timers/promises'
import fc from 'fast-check'
import t from 'tap'
import { readContract } from '../src/contract/openapi-document.js'
import { arriving as bodyOf } from '../src/http/body.js'
import { rowChecker } from '../src/imports/check.js'
import { pacer } from '../src/imports/pacer.js'
import { type FileRow, fileRows, type ImportFormat, type InvalidHeaderError, lines, rowsPerLook } from '../src/imports/rows.js'
import { ImportRunner } from '../src/imports/runner.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { eventually } from './helper.js'

const shape = rowChecker(readContract(), 'books').shape

/** Every row of `bytes` (given in these chunks), or the error that ended the file. */
async function rowsOf (chunks: (string | Buffer)[], format: ImportFormat, limits = { maxBytes: 1 << 30, maxRows: 1000 }): Promise<FileRow[] | Error> {
  const rows: FileRow[] = []
  try {
    for await (const row of fileRows(bodyOf(Readable.from(chunks.map(c => Buffer.from(c)))), format, shape, limits, () => {})) rows.push(row)
    return rows
  } catch (error) {
    return error as Error
  }
}

t.test('what a file cannot be: not UTF-8 (within it, or cut inside a character), a header naming unknown fields, too many bytes', async t => {
  t.match(await rowsOf(['title,author\r\nDune,', Buffer.from([0xff, 0x41]), '\r\n'], 'csv'), { name: 'NotUtf8Error', message: 'The file is not valid UTF-8 at byte 19 (counting from 0)' })
  t.match(await rowsOf([Buffer.from('title,author\r\n\uFFFDé,A\r\nDune,\uFFFD'), Buffer.from([0xe9, 0x41])], 'csv'), { message: 'The file is not valid UTF-8 at byte 31 (counting from 0)' }, 'a U+FFFD the file holds is not the bad byte')
  t.match(await rowsOf([Buffer.from('title\r\nna\uFFFDme,'), Buffer.from([0x41, 0xff]), Buffer.from('\r\n')], 'csv'), { message: 'The file is not valid UTF-8 at byte 16 (counting from 0)' }, 'the bad byte in the second piece')
  t.match(await rowsOf(['title\r\nD', Buffer.from([0xc3]), 'A\r\n'], 'csv'), { message: 'The file is not valid UTF-8 at byte 8 (counting from 0)' }, 'a character begun and not ended: where it begins')
  // The file is read 64 KiB at a time: a character begun at the end of one and not ended by the next is told where the next begins.
  t.match(await rowsOf(['title\r\n' + 'a'.repeat(65535 - 7), Buffer.from([0xc3]), 'A\r\n'], 'csv'), { message: 'The file is not valid UTF-8 at byte 65536 (counting from 0)' })
  t.match(await rowsOf(['{"title":"D', Buffer.from([0xc3])], 'ndjson'), { name: 'NotUtf8Error', message: 'The file is not valid UTF-8: it ends inside a character (at byte 12, counting from 0)' })
  t.match(await rowsOf(['titel,autor\r\n'], 'csv'), { name: 'InvalidHeaderError', message: 'The CSV header has 2 columns the import cannot take', columns: [{ parameter: 'titel' }, { parameter: 'autor' }] })
  t.match(await rowsOf(['title,author\r\n', 'x'.repeat(50)], 'csv', { maxBytes: 40, maxRows: 10 }), { name: 'ImportTooLargeError', limit: 'IMPORT_MAX_BYTES' })
  const failing = new Readable({ read () { this.destroy(new Error('the client went away')) } })
  await t.rejects(async () => { for await (const row of fileRows(bodyOf(failing), 'ndjson', shape, { maxBytes: 100, maxRows: 10 }, () => {})) t.fail(JSON.stringify(row)) }, { message: 'the client went away' })
})

t.test('lines that are not rows are refused by their number, and reading goes on', async t => {
  const csv = await rowsOf(['title,author\r\n"Dune,Frank\r\nEmma,Jane Austen\r\n'], 'csv') as FileRow[]
  t.same(csv.map(row => [row.line, 'problem' in row ? row.problem.detail.split(' ').slice(0, 4).join(' ') : row.fields]), [[2, 'opens a quoted cell']])
  const long = 'x'.repeat((1 << 20) + 1)
  const ndjson = await rowsOf(['{"title":"Dune","author":"A"}\r\n', `"${long}"\n`, long, long, 'x\n{"title":', '"Emma","author":"B"}'], 'ndjson') as FileRow[]
  t.same(ndjson.map(row => [row.line, 'problem' in row ? row.problem.detail : (row.fields as { title: string }).title]), [
    [1, 'Dune'],
    [2, 'is longer than 1048576 characters'],
    // Not held whole: refused once, the rest of it passed over.
    [3, 'is longer than 1048576 characters'],
    [4, 'Emma']
  ])
})

t.test('a runner writes staged rows: a record its import stored before its node stopped counts as written, a value taken meanwhile is refused', async t => {
  const repositories = openSqliteRepositories(':memory:')
  t.teardown(() => repositories.close())
  const { imports, books } = repositories
  const runner = new ImportRunner({ imports, stores: { books, students: repositories.students }, node: 'test', leaseMs: 60_000, batch: 2, sweepMs: 60_000, clock: Date.now, onError: error => t.error(error), onResume: () => {} })
  t.teardown(() => runner.close())
  await imports.start({ import_id: 'i1', keyId: 'admin', collection: 'books', mode: 'valid', format: 'ndjson', created_at: new Date().toISOString(), idempotencyKey: null }, 'test', Date.now() + 60_000)
  const ids = ['01a21d0c-0000-7000-8000-000000000001', '01a21d0c-0000-7000-8000-000000000002', '01a21d0c-0000-7000-8000-000000000003']
  const record = (title: string, isbn: string | null) => JSON.stringify({ title, author: 'A', isbn, published_year: null })
  await imports.stage('i1', [
    { line: 1, recordId: ids[0]!, unique: null, record: record('Written before the stop', null) },
    { line: 2, recordId: ids[1]!, unique: '9780306406157', record: record('Taken meanwhile', '9780306406157') },
    { line: 3, recordId: ids[2]!, unique: null, record: record('Fresh', null) }
  ])
  await books.create({ title: 'Written before the stop', author: 'A', isbn: null, published_year: null }, undefined, { id: ids[0]! })
  await books.create({ title: 'Another', author: 'B', isbn: '9780306406157', published_year: null })
  await imports.update('i1', { state: 'running' })
  runner.run('i1')
  runner.run('i1')
  const ended = await eventually(async () => (await imports.get('i1'))!, job => job.state !== 'running', 'the import ended')
  t.match(ended, { state: 'succeeded', rows: { written: 2, refused: 1 }, detail: '2 rows written; 1 refused (see problems)' })
  t.match(ended.problems, [{ line: 2, type: '/problems/already-exists', detail: /isbn, stored while the import was being written/ }])
  t.equal((await books.get(ids[2]!))?.record.title, 'Fresh')
  runner.run('i1')
  t.equal((await imports.get('i1'))!.state, 'succeeded', 'an import that has ended is not run again')
})

t.test('ndjson: however the text is cut, the same lines; a line past the bound is handed on once (to be refused), the rest of it passed over', async t => {
  const read = async (text: string, cuts: number[], longest: number) => {
    const at = [...new Set(cuts.map(c => c % (text.length + 1)))].sort((a, b) => a - b)
    const chunks = [...at, text.length].map((end, i) => text.slice(i === 0 ? 0 : at[i - 1], end)).filter(c => c !== '')
    const read: string[] = []
    for await (const line of lines((async function * () { yield * chunks })(), { longest })) read.push(line)
    return read
  }
  const text = fc.array(fc.constantFrom('{}', '"x"', ' ', '\r', '\n', '\r\n', 'é', '😀'), { maxLength: 40 }).map(parts => parts.join(''))
  await fc.assert(fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 12 }), async (text, cuts, longest) => {
    const [whole, cut] = [await read(text, [], longest), await read(text, cuts, longest)]
    if (JSON.stringify(cut) !== JSON.stringify(whole)) throw new Error(`${JSON.stringify(text)} cut at ${cuts} (longest ${longest}): ${JSON.stringify(cut)}, whole ${JSON.stringify(whole)}`)
    // Each line is read as it is, or (past the bound) refused: never another line's text.
    const expected = text.split('\n').map((line, i, all) => i < all.length - 1 && line.endsWith('\r') ? line.slice(0, -1) : line)
    if (expected.at(-1) === '') expected.pop()
    if (whole.length !== expected.length || whole.some((line, i) => line.length > longest ? !expected[i]!.startsWith(line) : line !== expected[i])) {
      throw new Error(`${JSON.stringify(text)} (longest ${longest}) read as ${JSON.stringify(whole)}`)
    }
  }), { seed: 20261128, numRuns: 2000 })
  t.pass('every generated text')
})

t.test('while a file is read, the event loop gets a turn once the time budget is spent, whether rows arrive or not', async t => {
  /** Reads `chunks` on a fake clock that the work moves: `chunkMs` for each chunk, `rowMs` for each row. When and after how many rows each turn came. */
  const read = async (chunks: string[], format: ImportFormat, { chunkMs = 0, rowMs = 0 }) => {
    let now = 0
    let rows = 0
    const turns: { at: number, rows: number }[] = []
    const pace = pacer({ budgetMs: 4, clock: () => now, turn: async () => { turns.push({ at: now, rows }) } })
    // Each chunk arrives on its own (a stream hands on at once what it holds, as one chunk).
    const arriving = Readable.from((async function * () {
      for (const chunk of chunks) {
        await setImmediate()
        now += chunkMs
        yield Buffer.from(chunk)
      }
    })())
    for await (const row of fileRows(bodyOf(arriving), format, shape, { maxBytes: 1 << 30, maxRows: 1 << 20 }, () => {}, pace)) {
      if (row !== undefined) rows++
      now += rowMs
    }
    return { rows, turns, gaps: turns.map(({ at }, i) => at - (turns[i - 1]?.at ?? 0)) }
  }
  // One record that never ends, 1,000 chunks of a millisecond's work: a turn each time 4 ms have passed, before any row.
  for (const format of ['csv', 'ndjson'] as const) {
    const never = await read([...(format === 'csv' ? 'title\n' : '')].concat(Array(1000).fill('a')), format, { chunkMs: 1 })
    t.ok(never.turns.length >= 200, `${format}: ${never.turns.length} turns`)
    t.ok(never.gaps.every(gap => gap >= 4 && gap <= 5), `${format}: every 4 ms of work, give or take a chunk`)
    t.ok(never.turns.every(turn => turn.rows === 0), `${format}: all of them before any row`)
  }
  // Thousands of rows in one chunk, each a millisecond's work: a turn at the first look at the clock past the budget.
  const rows = ['title,author\n' + 'Dune,Frank Herbert\n'.repeat(5000)]
  const slow = await read(rows, 'csv', { rowMs: 1 })
  t.equal(slow.rows, 5000)
  t.ok(slow.turns.length >= 5000 / rowsPerLook - 1, `${slow.turns.length} turns`)
  t.ok(slow.gaps.every(gap => gap >= 4 && gap <= rowsPerLook), `at most ${rowsPerLook} rows after the budget is spent`)
  t.same((await read(rows, 'csv', {})).turns, [], 'no turn while the budget is not spent, however many rows')
})

t.test('a pacer: null within the budget, a turn once it is spent, the budget counted again from the turn\'s end', async t => {
  let now = 100
  let turns = 0
  const pace = pacer({ budgetMs: 4, clock: () => now, turn: async () => { turns++; now += 2 } })
  now = 103.9
  t.equal(pace(), null)
  now = 104
  await pace()
  t.equal(turns, 1)
  now = 109.9
  t.equal(pace(), null, 'the budget starts again after the turn (at 106)')
  now = 110
  await pace()
  t.equal(turns, 2)
  t.equal(pacer()(), null, 'by default, on the real clock: no turn due at once')
})

t.test('not UTF-8: the byte named is the first bad one, whatever text comes before it (U+FFFD the file holds included) and however the file arrives', async t => {
  // Text before the bad byte: ASCII, two-, three- and four-byte characters, and U+FFFD written as such (many of them: a chunk of 64 KiB full of them is read once).
  const before = fc.array(fc.constantFrom('a', 'é', '\uFFFD', '😀', ','), { maxLength: 200 }).map(parts => parts.join(''))
  const bad = fc.constantFrom([0xff], [0xc3, 0x41], [0xe2, 0x82], [0x80])
  await fc.assert(fc.asyncProperty(before, bad, fc.array(fc.nat(), { maxLength: 4 }), async (text, bytes, cuts) => {
    const file = Buffer.concat([Buffer.from('title\r\n' + text), Buffer.from(bytes), Buffer.from(',A\r\n')])
    const at = [...new Set(cuts.map(cut => cut % file.length))].sort((a, b) => a - b)
    const pieces = [0, ...at].map((from, i) => file.subarray(from, [...at, file.length][i]))
    const error = await rowsOf(pieces.filter(piece => piece.length > 0), 'csv') as Error
    return error.message === `The file is not valid UTF-8 at byte ${Buffer.byteLength('title\r\n' + text)} (counting from 0)`
  }), { seed: 20261202, numRuns: 200 })
  const many = '\uFFFD'.repeat(21_000)
  t.match(await rowsOf([Buffer.concat([Buffer.from('title\r\n' + many), Buffer.from([0xff])])], 'csv'), { message: `The file is not valid UTF-8 at byte ${7 + 63_000} (counting from 0)` }, 'a piece of 64 KiB of U+FFFD, then the bad byte')
})

t.test('a CSV header naming many columns it cannot take: one problem per name, at most 100, names cut, every column counted', async t => {
  t.match(await rowsOf(['x,'.repeat(499_999) + 'x\r\n'], 'csv'), {
    message: 'The CSV header has 500000 columns the import cannot take',
    columns: [{ parameter: 'x', detail: /^is not a field of this resource \(the fields are .*\); 500000 columns have this name$/ }]
  })
  const distinct = await rowsOf([Array.from({ length: 120_000 }, (_, i) => `c${i}`).join(',') + ',title\r\n'], 'csv') as InvalidHeaderError
  t.equal(distinct.message, 'The CSV header has 120000 columns the import cannot take; the first 100 names refused are listed')
  t.same(distinct.columns.slice(0, 2).map(c => c.parameter), ['c0', 'c1'])
  t.equal(distinct.columns.length, 100)
  const hinted = async (header: string) => ((await rowsOf([header + '\r\n'], 'csv')) as InvalidHeaderError).columns.map(c => c.detail.replace(/ \(the fields are .*\)$/, ''))
  t.same(await hinted('Title,AUTHOR, isbn'), [
    'is not a field of this resource: names are lower case, without spaces around them (title)',
    'is not a field of this resource: names are lower case, without spaces around them (author)',
    'is not a field of this resource: names are lower case, without spaces around them (isbn)'
  ], 'a field in other letter case, or with spaces, is named')
  t.same(await hinted('title;author;isbn'), ['is not a field of this resource: the header seems to separate its names with semicolons; an import\'s CSV separates them, and its cells, with commas (RFC 4180)'])
  t.same(await hinted('title\tauthor'), ['is not a field of this resource: the header seems to separate its names with tabs; an import\'s CSV separates them, and its cells, with commas (RFC 4180)'])
  t.same(await hinted('title,a;b'), ['is not a field of this resource'], 'a semicolon in one of several names is only a name')
  const long = await rowsOf(['title,' + 'n'.repeat(5000) + ',author,title,title\r\n'], 'csv') as InvalidHeaderError
  t.equal(long.message, 'The CSV header has 3 columns the import cannot take')
  t.same(long.columns.map(c => [c.parameter, c.detail.slice(0, 20)]), [['n'.repeat(99) + '…', 'is not a field of th'], ['title', 'is named 3 times']])
})
