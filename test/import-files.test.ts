// Reading an import's file (limits, encodings, what is not a row) and writing its staged rows (a runner's batches, taken up again), below HTTP.
import { Readable } from 'node:stream'
import t from 'tap'
import { readContract } from '../src/contract/openapi-document.js'
import { rowChecker } from '../src/imports/check.js'
import { type FileRow, fileRows, type ImportFormat } from '../src/imports/rows.js'
import { ImportRunner } from '../src/imports/runner.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { eventually } from './helper.js'

const shape = rowChecker(readContract(), 'books').shape

/** Every row of `bytes` (given in these chunks), or the error that ended the file. */
async function rowsOf (chunks: (string | Buffer)[], format: ImportFormat, limits = { maxBytes: 1 << 30, maxRows: 1000 }): Promise<FileRow[] | Error> {
  const rows: FileRow[] = []
  try {
    for await (const row of fileRows(Readable.from(chunks.map(c => Buffer.from(c))), format, shape, limits, () => {})) rows.push(row)
    return rows
  } catch (error) {
    return error as Error
  }
}

t.test('what a file cannot be: not UTF-8 (within it, or cut inside a character), a header naming unknown fields, too many bytes', async t => {
  t.match(await rowsOf(['title,author\r\nDune,', Buffer.from([0xff, 0x41]), '\r\n'], 'csv'), { name: 'NotUtf8Error', message: /^The file is not valid UTF-8 \(at byte \d+ or after it\)$/ })
  t.match(await rowsOf(['{"title":"D', Buffer.from([0xc3])], 'ndjson'), { name: 'NotUtf8Error', message: /at byte 12 or after/ })
  t.match(await rowsOf(['titel,autor\r\n'], 'csv'), { name: 'InvalidHeaderError', message: 'The CSV header has 2 columns the import cannot take', columns: [{ parameter: 'titel' }, { parameter: 'autor' }] })
  t.match(await rowsOf(['title,author\r\n', 'x'.repeat(50)], 'csv', { maxBytes: 40, maxRows: 10 }), { name: 'ImportTooLargeError', limit: 'IMPORT_MAX_BYTES' })
  const failing = new Readable({ read () { this.destroy(new Error('the client went away')) } })
  await t.rejects(async () => { for await (const row of fileRows(failing, 'ndjson', shape, { maxBytes: 100, maxRows: 10 }, () => {})) t.fail(JSON.stringify(row)) }, { message: 'the client went away' })
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
  const runner = new ImportRunner({ imports, stores: { books, students: repositories.students }, node: 'test', leaseMs: 60_000, batch: 2, sweepMs: 60_000, clock: Date.now, onError: error => t.error(error) })
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
  t.match(ended, { state: 'succeeded', rows: { written: 2, refused: 1 }, detail: '2 records written; 1 rows were refused (see problems)' })
  t.match(ended.problems, [{ line: 2, type: '/problems/already-exists', detail: /isbn, stored while the import was being written/ }])
  t.equal((await books.get(ids[2]!))?.record.title, 'Fresh')
  runner.run('i1')
  t.equal((await imports.get('i1'))!.state, 'succeeded', 'an import that has ended is not run again')
})
