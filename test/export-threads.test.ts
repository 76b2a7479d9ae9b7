// SQLite exports of a file: read on threads of their own within the lists' budget, released on every path, and the WAL they held bounded once they end.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { uuidv7 } from 'uuidv7'
import { creationOrder, ListTimeoutError } from '../src/storage/list-sql.js'
import { openDatabase, walSize, walSizeLimit } from '../src/storage/sqlite/database.js'
import type { StartExportThread } from '../src/storage/sqlite/export.js'
import { openSqliteRepositories, type RepositoryOptions } from '../src/storage/sqlite/index.js'
import type { RecordExport, Repositories } from '../src/storage/types.js'
import { build, tempDatabase } from './helper.js'

const realThread: StartExportThread = data => new Worker(new URL('../src/storage/sqlite/export-worker.js', import.meta.url), { workerData: data })

/** A thread that says it is ready, then runs `onCommand` for each command (`command` in scope). */
const stubThread = (onCommand: string): StartExportThread => () => new Worker(`const { parentPort } = require('node:worker_threads')
parentPort.on('message', command => { ${onCommand} })
parentPort.postMessage({ ready: true })`, { eval: true })
/** Opens, then never answers a read: a statement that runs on and on. */
const neverReads = stubThread("if ('open' in command) parentPort.postMessage({ opened: null })")
const neverOpens = stubThread('')
const failsReading = stubThread("parentPort.postMessage('open' in command ? { opened: null } : { failed: 'SqliteError: disk I/O error' })")
const exitsReading = stubThread("if ('open' in command) parentPort.postMessage({ opened: null }); else process.exit(1)")
/** Answers as a thread that reads nothing would. */
const readsNothing = stubThread("parentPort.postMessage('open' in command ? { opened: null } : 'next' in command ? { chunk: null } : { closed: true })")
/** Opens and reads one export, then stops when asked to open the next: a free thread that stopped. */
const exitsOnSecondOpen = stubThread("globalThis.opens ??= 0; if ('open' in command && globalThis.opens++ > 0) process.exit(0); parentPort.postMessage('open' in command ? { opened: null } : 'next' in command ? { chunk: null } : { closed: true })")
/** Opens and reads one export, then fails to open the next. */
const failsSecondOpen = stubThread("globalThis.opens ??= 0; parentPort.postMessage('open' in command ? (globalThis.opens++ === 0 ? { opened: null } : { failed: 'SqliteError: disk I/O error' }) : 'next' in command ? { chunk: null } : { closed: true })")
const failsClosing = stubThread("parentPort.postMessage('open' in command ? { opened: null } : 'next' in command ? { chunk: null } : { failed: 'SqliteError: disk I/O error' })")

/** Threads started by `start` (`workers`, in order), counted as they start and exit (the first `stubs` of them stubs). */
function counted (stubs: StartExportThread[]) {
  const threads = { started: 0, exited: 0 }
  const workers: Worker[] = []
  const start: StartExportThread = data => {
    const worker = (stubs[threads.started++] ?? realThread)(data)
    worker.once('exit', () => { threads.exited++ })
    workers.push(worker)
    return worker
  }
  return { threads, start, workers }
}

/** Repositories on a new file holding `titles`, closed when `t` ends. */
async function seeded (t: Test, titles: string[], options: RepositoryOptions = {}, path = tempDatabase(t)): Promise<Repositories> {
  const repositories = openSqliteRepositories(path, options)
  t.teardown(() => repositories.close())
  for (const title of titles) await repositories.books.create({ title, author: 'Frank Herbert', isbn: null, published_year: null })
  return repositories
}

async function text (exported: RecordExport): Promise<string> {
  let all = ''
  for await (const chunk of exported.chunks) all += chunk
  return all
}

/** Whether a snapshot holds the WAL: a truncating checkpoint cannot finish (busy) past a reader. */
function walHeld (path: string): boolean {
  const checker = new Database(path)
  try {
    checker.pragma('busy_timeout = 0')
    return (checker.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[])[0]!.busy === 1
  } finally {
    checker.close()
  }
}

t.test('an export of a file is read on a thread of its own, written there as text; the next export reuses it, one running beside it gets another', async t => {
  const { threads, start } = counted([])
  const { books } = await seeded(t, ['Dune', 'Emma', 'Ulysses'], { startExportThread: start })
  const csv = await text(await books.export({ ...creationOrder, sort: { key: 'title', descending: false } }, { format: 'csv' }))
  t.same(csv.split('\r\n').slice(0, -1).map(line => line.split(',')[1]), ['Dune', 'Emma', 'Ulysses'], 'CSV rows, in the list\'s order')
  const ndjson = await text(await books.export(creationOrder, { format: 'ndjson', feedPosition: true }))
  t.same(ndjson.split('\n').slice(0, -1).map(line => (JSON.parse(line) as { title: string }).title), ['Dune', 'Emma', 'Ulysses'], 'NDJSON lines')
  t.equal(threads.started, 1, 'one thread read both')
  const [a, b] = [await books.export(creationOrder, { format: 'csv' }), await books.export(creationOrder, { format: 'csv' })]
  t.equal(threads.started, 2, 'two at once, two threads')
  await Promise.all([a.chunks.return!(), b.chunks.return!()])
  t.equal(threads.exited, 0, 'kept for the next exports')
})

t.test('a read not answered within the budget fails at once with ListTimeoutError; the thread is stopped, and the next export gets a new one', async t => {
  const { threads, start } = counted([neverReads, neverOpens])
  const { books } = await seeded(t, ['Dune'], { startExportThread: start, listBudgetMs: 50 })
  const stuck = await books.export(creationOrder, { format: 'csv' })
  await t.rejects(stuck.chunks.next(), ListTimeoutError, 'the first read')
  await stuck.chunks.return!()
  t.equal(threads.exited, 1, 'its thread stopped before the export is released')
  await t.rejects(books.export(creationOrder, { format: 'csv' }), ListTimeoutError, 'an open not answered either')
  t.equal(threads.started, 2)
})

t.test('a thread that fails or stops while reading fails its export, one that fails to close is stopped, one that stops while free is forgotten; none is asked again', async t => {
  const { threads, start, workers } = counted([failsReading, exitsReading, failsClosing, readsNothing])
  const { books } = await seeded(t, ['Dune', 'Emma'], { startExportThread: start })
  const failing = await books.export(creationOrder, { format: 'csv' })
  await t.rejects(failing.chunks.next(), { name: 'ExportThreadGone', message: 'SqliteError: disk I/O error' })
  await failing.chunks.return!()
  const stopping = await books.export(creationOrder, { format: 'csv' })
  await t.rejects(stopping.chunks.next(), { message: 'an export thread stopped' })
  await stopping.chunks.return!()
  t.equal(await text(await books.export(creationOrder, { format: 'csv' })), '', 'read to its end, it fails to close')
  t.equal(threads.exited, 3, 'each stopped')
  t.equal(await text(await books.export(creationOrder, { format: 'csv' })), '', 'read to its end and closed, the thread is free')
  // Stopped while it waits for the next export.
  await workers[3]!.terminate()
  t.equal(threads.exited, 4, 'the free thread stopped')
  t.equal((await text(await books.export(creationOrder, { format: 'csv' }))).split('\r\n').length, 3, 'the next export, on a new thread, reads its rows')
  t.equal(threads.started, 5)
})

t.test('an export whose free thread turns out stopped is opened on a new one; one whose thread fails to open it fails', async t => {
  const { threads, start } = counted([exitsOnSecondOpen, failsSecondOpen])
  const { books } = await seeded(t, ['Dune', 'Emma'], { startExportThread: start })
  t.equal(await text(await books.export(creationOrder, { format: 'csv' })), '', 'the first export')
  t.equal(await text(await books.export(creationOrder, { format: 'csv' })), '', 'the next: its thread stopped when asked, it is read on a new one')
  t.same(threads, { started: 2, exited: 1 })
  await t.rejects(books.export(creationOrder, { format: 'csv' }), { name: 'ExportThreadGone', message: 'SqliteError: disk I/O error' }, 'a failed open is the export\'s')
  t.equal(threads.started, 2, 'not tried again on another thread')
  t.equal((await text(await books.export(creationOrder, { format: 'csv' }))).split('\r\n').length, 3, 'the next export reads its rows')
})

t.test('closing the storage stops the threads: a running export fails, and its snapshot no longer holds the WAL', async t => {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path)
  await repositories.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
  const running = await repositories.books.export(creationOrder, { format: 'csv', feedPosition: true })
  t.ok(walHeld(path), 'held while it runs')
  await repositories.close()
  await t.rejects(running.chunks.next(), { name: 'ExportThreadGone' })
  await running.chunks.return!()
  t.notOk(walHeld(path), 'released')
  await t.rejects(repositories.books.export(creationOrder, { format: 'csv' }), { message: 'the service is closing' })
})

t.test('while the exports running hold a WAL grown past its limit, no other starts (they could keep it from ever being checkpointed); once they end, exports start again', async t => {
  const path = tempDatabase(t)
  const { books } = await seeded(t, ['Dune'], { walLimit: 1 << 20 }, path)
  const held = await books.export(creationOrder, { format: 'csv', feedPosition: true })
  const beside = await books.export(creationOrder, { format: 'csv' })
  await beside.chunks.return!()
  t.pass('another export starts beside it while the WAL is small')
  for (let batch = 0; walSize(path) <= 1 << 20; batch++) {
    await books.createMany(Array.from({ length: 100 }, (_, i) => ({ values: { title: `Book ${batch}.${i}`, author: 'A', isbn: null, published_year: null }, given: { id: uuidv7() } })))
  }
  await t.rejects(books.export(creationOrder, { format: 'csv' }), { name: 'SnapshotsHeldError' })
  await held.chunks.return!()
  t.match(await text(await books.export(creationOrder, { format: 'csv' })), /^[0-9a-f-]{36},Dune,/, 'the export that held it ended, exports start again')
})

t.test('GET /books/export.csv whose first rows are not read within LIST_TIME_BUDGET_MS: a 503 list-busy at the budget, with Retry-After and no file', async t => {
  const repositories = await seeded(t, ['Dune'], { startExportThread: neverReads, listBudgetMs: 50 })
  const api = await build(t, {}, { repositories })
  const res = await api.request({ url: '/books/export.csv?updated_since=2099-01-01T00:00:00Z&sort=title', key: null })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { type: '/problems/list-busy', detail: /^The export's first rows were not read within 50 ms/ })
  t.equal(res.headers['retry-after'], '1')
  t.equal(res.headers['content-disposition'], undefined)
})

t.test('the WAL is bounded: held by an export while 100,000 rows are written, it is checkpointed once the export ends, and the next write cuts it to journal_size_limit; a WAL left large is emptied at start', async t => {
  const path = tempDatabase(t)
  const repositories = await seeded(t, ['Dune'], {}, path)
  const held = await repositories.books.export(creationOrder, { format: 'csv', feedPosition: true })
  const crashed = mkdtempSync(join(tmpdir(), 'bsa-'))
  t.teardown(() => rmSync(crashed, { recursive: true, force: true }))
  let copied = 0
  for (let batch = 0; batch < 200; batch++) {
    await repositories.books.createMany(Array.from({ length: 500 }, (_, i) => ({
      values: { title: `Book ${batch}.${i}`, author: `Author ${i % 97}`, isbn: null, published_year: 1900 + (i % 100) },
      given: { id: uuidv7() }
    })))
    // The files as a crash would leave them, once the WAL is past the limit.
    if (copied === 0 && walSize(path) > 2 * walSizeLimit) {
      copyFileSync(path, join(crashed, 'data.sqlite'))
      copyFileSync(`${path}-wal`, join(crashed, 'data.sqlite-wal'))
      copied = 1 + (batch + 1) * 500
    }
  }
  const grown = walSize(path)
  t.ok(grown > walSizeLimit, `the WAL grew to ${grown} bytes while the export held it`)
  await held.chunks.return!()
  const checker = new Database(path)
  t.teardown(() => checker.close())
  const { log, checkpointed } = (checker.pragma('wal_checkpoint(PASSIVE)') as { log: number, checkpointed: number }[])[0]!
  t.equal(checkpointed, log, 'every page copied into the database once the export ended, before any write')
  await repositories.books.create({ title: 'After', author: 'A', isbn: null, published_year: null })
  t.ok(walSize(path) <= walSizeLimit, `the next write cut it to ${walSize(path)} bytes`)

  t.ok(copied > 0, 'the files were copied with the WAL past the limit')
  const restarted = openDatabase(join(crashed, 'data.sqlite'))
  t.teardown(() => restarted.close())
  t.equal(walSize(join(crashed, 'data.sqlite')), 0, 'a WAL left past the limit is emptied at start')
  t.equal(restarted.prepare('SELECT count(*) FROM books').pluck().get(), copied, 'and the writes it held kept')
})
