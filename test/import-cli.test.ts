// npm run import as a person at a terminal uses it: Ctrl-C, a second run of the same file, nothing listening, the service restarted while followed, the time left.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { progressLine, summaryLine, WriteRate } from '../src/cli/import-progress.js'
import { runImport } from '../src/cli/import-command.js'
import type { TransferEnvironment } from '../src/cli/transfer.js'
import { loadConfig, type Config } from '../src/config/index.js'
import type { Import } from '../src/contract/api-types.js'
import type { ImportStore, Repositories } from '../src/storage/types.js'
import { adminKey, eventually, openTestRepositories, tempDatabase, testEngine, testStorage, within } from './helper.js'

/** A service listening on a free port, closed when `t` ends (or before, by the test). */
interface Served {
  origin: string
  close (): Promise<void>
}

/** A service listening on a free port, closed when `t` ends (or before, by the test); `preClose` runs as it closes, its listener still open. */
async function serve (t: Test, storage: Partial<Config>, { repositories, preClose }: { repositories?: Repositories, preClose?: () => Promise<void> } = {}): Promise<Served> {
  const app = await buildApp(loadConfig({}, { ...storage, logLevel: 'silent', adminApiKey: adminKey, opsPort: 'off' }), repositories === undefined ? {} : { repositories })
  t.teardown(() => app.close())
  if (preClose !== undefined) app.addHook('preClose', preClose)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: async () => app.close() }
}

interface Terminal {
  env: TransferEnvironment
  out: string[]
  err: string[]
  /** Every progress line and message, in order. */
  progress: string[]
  /** Resolves once a progress line matches. */
  shown (pattern: RegExp): Promise<string>
  /** Runs `act` when a line matches, as it is written. */
  on (pattern: RegExp, act: () => unknown): void
}

function terminal (origin: string, { tty = false, ...options }: Partial<TransferEnvironment> & { tty?: boolean } = {}): Terminal {
  const out: string[] = []
  const err: string[] = []
  const progress: string[] = []
  const waiting: { pattern: RegExp, resolve (line: string): void }[] = []
  const tell = (line: string) => {
    for (const waiter of waiting.filter(w => w.pattern.test(line))) {
      waiting.splice(waiting.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  }
  const env: TransferEnvironment = {
    io: { out: line => { out.push(line); tell(line) }, err: line => { err.push(line); tell(line) } },
    progress: { tty, write: text => { progress.push(text); tell(text) } },
    env: { BSA_URL: origin, API_KEY: adminKey },
    stdout: new PassThrough(),
    fetch,
    retryMs: 10,
    ...options
  }
  return {
    env,
    out,
    err,
    progress,
    on: (pattern, act) => { waiting.push({ pattern, resolve: () => { act() } }) },
    shown: async pattern => new Promise(resolve => {
      const seen = [...progress, ...out, ...err].find(line => pattern.test(line))
      if (seen !== undefined) resolve(seen)
      else waiting.push({ pattern, resolve })
    })
  }
}

function folder (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-import-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function booksFile (dir: string, rows: number, name = 'books.csv'): string {
  const file = join(dir, name)
  writeFileSync(file, 'title,author\r\n' + Array.from({ length: rows }, (_, i) => `Book ${i},A\r\n`).join(''))
  return file
}

async function booksStored (origin: string): Promise<number> {
  const res = await fetch(`${origin}/books`, { headers: { accept: 'application/x-ndjson', authorization: `Bearer ${adminKey}` } })
  return (await res.text()).split('\n').length - 1
}

async function importsOf (origin: string): Promise<Import[]> {
  const res = await fetch(`${origin}/imports?limit=100`, { headers: { authorization: `Bearer ${adminKey}` } })
  return (await res.json() as { items: Import[] }).items
}

t.test('the time left, on a recorded import of 1,000,000 rows: within 30 % of what was left once a tenth is written (more than 5 s left)', async t => {
  const recorded = JSON.parse(readFileSync(new URL('fixtures/import-progress.json', import.meta.url), 'utf8')) as { read: number, frames: [number, number][] }
  const end = recorded.frames.at(-1)![0]
  const rate = new WriteRate()
  const errors: number[] = []
  for (const [at, written] of recorded.frames.slice(0, -1)) {
    rate.add(at, written)
    const left = rate.secondsLeft({ rows: { read: recorded.read, written, refused: 0 } } as Import)
    const actual = (end - at) / 1000
    if (written >= recorded.read / 10 && actual > 5) errors.push(Math.abs(left! - actual) / actual)
  }
  t.ok(errors.length > 40, `${errors.length} estimates checked`)
  t.ok(Math.max(...errors) <= 0.3, `worst error ${(Math.max(...errors) * 100).toFixed(0)} %`)
  const fresh = new WriteRate()
  t.equal(fresh.perSecond(), null, 'no rate before two frames')
  fresh.add(0, 0)
  fresh.add(500, 100)
  t.equal(fresh.secondsLeft({ rows: { read: 1000, written: 100, refused: 0 } } as Import), null, 'nor before they span a second')
  fresh.add(1500, 200)
  t.equal(fresh.perSecond(), 133.33333333333334, 'rows written over the time they took')
  const stalled = new WriteRate()
  stalled.add(0, 100)
  stalled.add(1500, 100)
  t.equal(stalled.secondsLeft({ rows: { read: 1000, written: 100, refused: 0 } } as Import), null, 'no time left while nothing is written')
})

t.test('progress and summary lines: counts with their separators and plurals, the share written, the time left in a unit a person reads', async t => {
  const job = (state: Import['state'], read: number, written: number, refused: number) => ({ state, mode: 'valid', rows: { read, written, refused } }) as Import
  const rate = new WriteRate()
  t.equal(progressLine(job('receiving', 52_450, 0, 1), rate), 'receiving: 52,450 rows read and checked, 1 refused')
  t.equal(progressLine(job('receiving', 1, 0, 0), rate), 'receiving: 1 row read and checked')
  t.equal(progressLine(job('running', 0, 0, 0), rate), 'running: 0 of 0 rows written (100 %) · measuring the rate')
  rate.add(0, 0)
  rate.add(10_000, 1000)
  t.equal(progressLine(job('running', 200_000, 1000, 0), rate), 'running: 1,000 of 200,000 rows written (0 %) · 100 rows/s · about 33 min left')
  t.equal(progressLine(job('running', 10_000_000, 1000, 0), rate), 'running: 1,000 of 10,000,000 rows written (0 %) · 100 rows/s · about 27.8 h left')
  t.equal(progressLine(job('running', 5000, 1000, 3990), rate), 'running: 1,000 of 1,010 rows written (99 %), 3,990 refused · 100 rows/s · about 1 s left')
  const stalled = new WriteRate()
  stalled.add(0, 1000)
  stalled.add(5000, 1000)
  t.equal(progressLine(job('running', 5000, 1000, 0), stalled), 'running: 1,000 of 5,000 rows written (20 %) · 0 rows/s', 'no time left while nothing is written')
  t.equal(summaryLine(job('succeeded', 1, 1, 0)), 'succeeded: 1 row written')
  t.equal(summaryLine(job('succeeded', 3, 1, 2)), 'succeeded: 1 row written, 2 of 3 rows refused')
  t.equal(summaryLine(job('failed', 2, 0, 2)), 'failed: nothing written, 2 of 2 rows refused')
  t.equal(summaryLine(job('cancelled', 9000, 1200, 0)), 'cancelled: 1,200 rows written (the rows written before the cancel stay)')
  t.equal(summaryLine(job('cancelled', 9000, 0, 0)), 'cancelled: nothing written')
})

t.test('Ctrl-C: during the upload nothing is imported; while following, the import goes on and the CLI says how to cancel it; exit 130', async t => {
  const { origin } = await serve(t, await testStorage(t))
  const dir = folder(t)
  const file = booksFile(dir, 20_000)
  const before = terminal(origin, { interrupted: AbortSignal.abort(), tty: true })
  t.equal(await runImport([file], before.env), 130)
  t.same(before.err, ['npm run import: stopped before the upload: nothing was sent'])
  t.same(before.progress, ['\n'], 'on a line of its own on a terminal')
  const interrupt = new AbortController()
  const uploading = terminal(origin, { interrupted: interrupt.signal })
  uploading.on(/^uploading books\.csv/, () => interrupt.abort())
  t.equal(await runImport([file], uploading.env), 130)
  t.match(uploading.err, [/^npm run import: stopped during the upload: the service drops a file it did not receive whole, so nothing was imported$/])
  await eventually(async () => importsOf(origin), imports => imports.every(job => job.state === 'failed'), 'the cut upload ended')
  t.equal(await booksStored(origin), 0, 'nothing written')

  const small = booksFile(dir, 300, 'books-small.csv')
  const stopping = new AbortController()
  const following = terminal(origin, { interrupted: stopping.signal })
  following.on(/^books-small\.csv received: /, () => stopping.abort())
  t.equal(await runImport([small, '--mode', 'valid'], following.env), 130)
  const id = /received: \/imports\/([0-9a-f-]+) \(Ctrl-C stops following it; the import goes on\)/.exec(following.progress.join(''))?.[1]
  t.ok(id, 'the import was named as soon as it was received')
  t.match(following.err, [new RegExp(`^npm run import: stopped following ${origin}/imports/${id}; the import goes on on the server \\(.* written so far\\)\\. To cancel it: npm run import -- --cancel ${id} --url ${origin}$`)])
  await eventually(async () => booksStored(origin), stored => stored === 300, 'the import went on')
  // Run against the quick start's origin (here routed to the test's service), the hint needs no --url.
  const quickStart = new AbortController()
  const local = terminal(origin, { interrupted: quickStart.signal, env: { API_KEY: adminKey }, fetch: async (input, init) => fetch(String(input).replace('http://127.0.0.1:3000', origin), init) })
  local.on(/received: /, () => quickStart.abort())
  t.equal(await runImport([booksFile(dir, 10, 'books-local.csv'), '--mode', 'valid'], local.env), 130)
  t.match(local.err, [/To cancel it: npm run import -- --cancel [0-9a-f-]+$/])

  // --mode all cannot be cancelled once writing began: the CLI does not offer it.
  const whole = new AbortController()
  const all = terminal(origin, { interrupted: whole.signal })
  all.on(/received: /, () => whole.abort())
  t.equal(await runImport([booksFile(dir, 300, 'books-all.csv')], all.env), 130)
  t.match(all.err, [/It cannot be cancelled: with --mode all, once its rows began to be written it runs to its end/])
})

t.test('--cancel: the import is cancelled and the rows written stay (said); one that ended, or an unknown one, is refused with the service\'s reason', async t => {
  const { origin } = await serve(t, await testStorage(t))
  const asked: { url: string, method: string | undefined }[] = []
  const running: Import = { import_id: '01a23754-edbb-7bbc-87f7-149be8ba83fb', collection: 'books', mode: 'valid', format: 'csv', state: 'running', cancel_requested: true, rows: { read: 1000, written: 1, refused: 0 }, bytes: 10, rows_per_second: 5, created_at: '2026-12-02T10:00:00.000Z', started_at: '2026-12-02T10:00:01.000Z', finished_at: null, detail: null, problems: [], problems_omitted: 0 }
  const accepting: typeof fetch = async (input, init) => {
    asked.push({ url: String(input), method: init?.method })
    return Response.json(running, { status: 202 })
  }
  const cancelled = terminal(origin, { fetch: accepting })
  t.equal(await runImport(['--cancel', running.import_id], cancelled.env), 0)
  t.same(asked, [{ url: `${origin}/imports/${running.import_id}`, method: 'DELETE' }])
  t.same(cancelled.out, [`cancel requested for ${origin}/imports/${running.import_id}: it stops after the batch being written; the rows written so far stay (1 row)`])
  for (const given of [`/imports/${running.import_id}`, `${origin}/imports/${running.import_id}`]) {
    await runImport(['--cancel', given], terminal(origin, { fetch: accepting }).env)
    t.equal(asked.at(-1)!.url, `${origin}/imports/${running.import_id}`, `--cancel ${given}`)
  }

  const dir = folder(t)
  const done = terminal(origin)
  t.equal(await runImport([booksFile(dir, 10)], done.env), 0)
  const id = (await importsOf(origin))[0]!.import_id
  const late = terminal(origin)
  t.equal(await runImport(['--cancel', id], late.env), 1)
  t.match(late.err, [new RegExp(`^npm run import: ${origin}/imports/${id}: 409 The import has already ended \\(succeeded\\)$`)])
  const unknown = terminal(origin)
  t.equal(await runImport(['--cancel', '01a23754-edbb-7bbc-87f7-000000000000'], unknown.env), 1)
  t.match(unknown.err, [/: 404 /])
  t.equal(await runImport(['--cancel', id, 'books.csv'], terminal(origin).env), 2, 'a file and --cancel')
  const missing = terminal(origin)
  t.equal(await runImport([join(dir, 'bookz.csv')], missing.env), 2)
  t.same(missing.err, [`npm run import: ${join(dir, 'bookz.csv')}: no such file`], 'a missing file is said to be missing, whatever its name')
  const misspelt = terminal(origin)
  t.equal(await runImport([join(dir, 'books.csv'), '--collection', 'book'], misspelt.env), 2)
  t.same(misspelt.err, ['npm run import: --collection must be books or students, not book'])
})

t.test('the same file run again: said to be an earlier import, nothing written; --again imports it once more', async t => {
  const { origin } = await serve(t, await testStorage(t))
  const dir = folder(t)
  const file = booksFile(dir, 50)
  t.equal(await runImport([file], terminal(origin).env), 0)
  // An hour later, by the service's clock.
  const later: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    const headers = new Headers(res.headers)
    headers.set('date', new Date(Date.now() + 3_600_000).toUTCString())
    return new Response(res.body, { status: res.status, headers })
  }
  const again = terminal(origin, { fetch: later })
  t.equal(await runImport([file], again.env), 0, 'the earlier import succeeded')
  t.match(again.progress.join(''), new RegExp(`books\\.csv was already imported as /imports/[0-9a-f-]+ at 20\\d\\d-.*Z \\(the same content, collection and mode\\): nothing new is written\\. To import it again: npm run import -- ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --again`))
  t.equal(await booksStored(origin), 50)
  const refusing = terminal(origin)
  writeFileSync(join(dir, 'books-bad.csv'), 'title,author\r\nDune,A\r\n,\r\n')
  t.equal(await runImport([join(dir, 'books-bad.csv')], refusing.env), 1)
  t.match(refusing.progress.at(-1), /: failed: nothing written, 1 of 2 rows refused \(1 of 2 rows were refused \(see problems\), so nothing was written \(mode=all\)\)\n$/, 'a failure says why')
  const forced = terminal(origin, { fetch: later })
  t.equal(await runImport([file, '--again'], forced.env), 0)
  t.notMatch(forced.progress.join(''), /already imported/)
  t.equal(await booksStored(origin), 100, 'imported once more')
})

t.test('nothing listening: one try, and a message naming the service and how to point at it', async t => {
  const asked: string[] = []
  const nowhere = terminal('http://127.0.0.1:9', {
    fetch: async input => {
      asked.push(String(input))
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) })
    }
  })
  t.equal(await runImport([booksFile(folder(t), 3)], nowhere.env), 1)
  t.equal(asked.length, 1, 'not retried')
  const cut = terminal('http://127.0.0.1:9', { fetch: async () => { throw new TypeError('fetch failed') } })
  t.equal(await runImport([booksFile(folder(t), 3)], cut.env), 1)
  t.match(cut.progress.at(-1), /^npm run import: http:\/\/127\.0\.0\.1:9: fetch failed \(tried 5 times\)\n$/, 'a connection cut every time: tried again, then given up')
  const moved = booksFile(folder(t), 3)
  const movedAway = terminal('http://127.0.0.1:9', { fetch: async () => { rmSync(moved); throw new TypeError('fetch failed') } })
  t.equal(await runImport([moved], movedAway.env), 1)
  t.match(movedAway.err, [/^npm run import: ENOENT: no such file or directory, open '.*books\.csv'$/], 'the file moved away between two tries: said in one line')
  const unreadable = join(folder(t), 'books.csv')
  mkdirSync(unreadable)
  const directory = terminal('http://127.0.0.1:9')
  t.equal(await runImport([unreadable], directory.env), 1)
  t.match(directory.err, [/^npm run import: cannot read .*books\.csv: EISDIR/])
  const cancel = terminal('http://127.0.0.1:9', { fetch: nowhere.env.fetch })
  t.equal(await runImport(['--cancel', '01a23754-edbb-7bbc-87f7-149be8ba83fb'], cancel.env), 1)
  t.same(cancel.err, ['npm run import: http://127.0.0.1:9/imports/01a23754-edbb-7bbc-87f7-149be8ba83fb: fetch failed'])
  t.match(nowhere.progress.at(-1), /^npm run import: nothing answers at http:\/\/127\.0\.0\.1:9: is the service running \(npm start\)\? Else give its address with --url or BSA_URL\n$/)
})

t.test('the service restarted while an import is followed: the stream ends at the close, the CLI waits for the service and follows the import to its end', async t => {
  const storage = testEngine === 'postgres' ? await testStorage(t) : { databasePath: tempDatabase(t) }
  // The first service writes no row until it closes: the import is running, its progress followed, when the service stops.
  const repositories = await openTestRepositories(t, storage)
  let release!: () => void
  const closing = new Promise<void>(resolve => { release = resolve })
  const imports = new Proxy(repositories.imports, {
    get (target, name) {
      const value: unknown = Reflect.get(target, name, target)
      if (name === 'staged') return async (...args: Parameters<ImportStore['staged']>) => closing.then(async () => target.staged(...args))
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    }
  })
  // Its listener still open while it closes: a progress stream asked for then gets one frame and its end.
  let askedWhileClosing = ''
  const askWhileClosing = async () => {
    const location = /received: (\/imports\/[0-9a-f-]+)/.exec(cli.progress.join(''))![1]!
    askedWhileClosing = await (await fetch(first + location, { headers: { accept: 'text/event-stream', authorization: `Bearer ${adminKey}` } })).text()
  }
  let current: Served | null = await serve(t, storage, { repositories: { ...repositories, imports }, preClose: askWhileClosing })
  const first = current.origin
  // The CLI knows one origin; it reaches whichever service is up, and finds nothing listening in between.
  const routed: typeof fetch = async (input, init) => {
    if (current === null) throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })
    return fetch(String(input).replace(first, current.origin), init)
  }
  // On a terminal, where every frame is shown.
  const cli = terminal(first, { fetch: routed, tty: true })
  const rows = 2000
  const finished = runImport([booksFile(folder(t), rows), '--mode', 'valid'], cli.env)
  t.match(await within(cli.shown(/running: /), 60_000, 'the import followed'), /running: 0 of 2,000 rows written \(0 %\) · measuring the rate/)
  const stopping = current
  current = null
  release()
  await within(stopping.close(), 10_000, 'the first service closed, its progress stream ended')
  t.match(askedWhileClosing, /^event: import\ndata: \{.*"state":"running".*\}\n\n$/, 'asked while closing: one frame, then the end')
  await within(cli.shown(/does not answer .*trying again for up to 120 s, the import goes on on the server/), 30_000, 'the CLI said it waits')
  current = await serve(t, storage)
  t.equal(await within(finished, 120_000, 'the import followed to its end'), 0)
  t.match(cli.progress.at(-1), new RegExp(`books\\.csv → /imports/[0-9a-f-]+: succeeded: ${rows.toLocaleString('en-US')} rows written\\n$`))
  t.equal(cli.progress.filter(line => line.includes('does not answer')).length, 1, 'said once')
  t.equal(await booksStored(current.origin), rows, 'every row written once')
})

t.test('the service gone for longer than the patience: the CLI gives up and says the import goes on', async t => {
  const { origin, close } = await serve(t, await testStorage(t))
  const dir = folder(t)
  let gone = false
  const cli = terminal(origin, {
    followPatienceMs: 200,
    fetch: async (input, init) => {
      if (gone) throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })
      return fetch(input, init)
    }
  })
  cli.on(/received: /, async () => {
    gone = true
    await close()
  })
  t.equal(await runImport([booksFile(dir, 3000), '--mode', 'valid'], cli.env), 1)
  t.match(cli.progress.at(-1), /^npm run import: lost http:\/\/127\.0\.0\.1:\d+\/imports\/[0-9a-f-]+; it goes on on the server, see it there\n$/)
})
