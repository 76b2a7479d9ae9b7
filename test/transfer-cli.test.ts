// npm run import and npm run export against a listening service: progress, summaries, exit statuses, and retries after a cut connection.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import t, { type Test } from 'tap'
import { runExport } from '../src/cli/export-command.js'
import { runImport } from '../src/cli/import-command.js'
import type { TransferEnvironment } from '../src/cli/transfer.js'
import { adminKey, build } from './helper.js'

async function listening (t: Test): Promise<string> {
  const { app } = await build(t, { opsPort: 'off' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

function world (origin: string, options: { tty?: boolean, fetch?: typeof fetch } = {}) {
  const out: string[] = []
  const err: string[] = []
  const progress: string[] = []
  const stdout = new PassThrough()
  let written = ''
  stdout.on('data', chunk => { written += String(chunk) })
  const env: TransferEnvironment = {
    io: { out: line => out.push(line), err: line => err.push(line) },
    progress: { tty: options.tty ?? false, write: text => progress.push(text) },
    env: { BSA_URL: origin, API_KEY: adminKey },
    stdout,
    fetch: options.fetch ?? fetch,
    retryMs: 10,
    followPatienceMs: 300
  }
  return { env, out, err, progress, written: () => written }
}

/** A fetch that answers as an origin where nothing listens would (whatever listens there on this machine), telling `asked` each URL. */
function unreachable (asked: string[]): typeof fetch {
  return async input => {
    asked.push(String(input))
    throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })
  }
}

function folder (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('import then export: rows written and summed up; the export holds them; exit 0', async t => {
  const origin = await listening(t)
  const dir = folder(t)
  writeFileSync(join(dir, 'books.csv'), 'title,author\r\n' + Array.from({ length: 1200 }, (_, i) => `Book ${i},A\r\n`).join(''))
  const imported = world(origin, { tty: true })
  t.equal(await runImport([join(dir, 'books.csv')], imported.env), 0)
  t.ok(imported.progress.some(text => text.startsWith('\r\u001b[Kuploading books.csv: ')), 'progress rewritten in place on a terminal')
  t.match(imported.progress.at(-1), /books\.csv → \/imports\/[0-9a-f-]+: succeeded: 1,200 rows written\n$/)
  const file = join(dir, 'out.ndjson')
  const exported = world(origin)
  t.equal(await runExport(['books', '--format', 'ndjson', '--output', file, '--query', 'sort=-title'], exported.env), 0)
  const lines = readFileSync(file, 'utf8').split('\n').slice(0, -1)
  t.equal(lines.length, 1200)
  t.equal(JSON.parse(lines[0]!).title, 'Book 999')
  t.match(exported.progress.at(-1), /^exported \/books\/export\.ndjson\?sort=-title: 1,200 lines/)
  const toStdout = world(origin)
  t.equal(await runExport(['students', '--bom'], toStdout.env), 0)
  t.equal(toStdout.written(), '\uFEFFstudent_id,name,email,enrollment_year,status,created_at,updated_at\r\n')
})

t.test('a refused row: the report\'s lines and exit 1; a refused file: its problem and exit 1; bad usage: exit 2', async t => {
  const origin = await listening(t)
  const dir = folder(t)
  writeFileSync(join(dir, 'students.ndjson'), '{"name":"Ada","email":"ada@example.org"}\n{"name":"","email":"x"}\n')
  const refused = world(origin)
  t.equal(await runImport([join(dir, 'students.ndjson'), '--mode', 'valid'], refused.env), 1)
  t.match(refused.progress.at(-1), /succeeded: 1 row written, 1 of 2 rows refused\n$/)
  t.same(refused.err, ['line 2, name: must not be empty', 'line 2, email: must be an email address'])
  writeFileSync(join(dir, 'students-2.ndjson'), 'not json\n' + '{"name":""}\n'.repeat(25))
  const many = world(origin)
  t.equal(await runImport([join(dir, 'students-2.ndjson'), '--mode', 'valid'], many.env), 1)
  t.same([many.err.length, many.err[0], many.err.at(-1)], [21, 'line 1: is not JSON', '… and 31 more: GET ' + many.err.at(-1)!.split('GET ')[1]], 'the first 20 problems, and how many more')
  writeFileSync(join(dir, 'list.csv'), 'titel\r\nx\r\n')
  const header = world(origin)
  t.equal(await runImport([join(dir, 'list.csv'), '--collection', 'books'], header.env), 1)
  t.match(header.progress.at(-1), /refused: 400 The CSV header has 1 column the import cannot take \(titel: is not a field/)
  writeFileSync(join(dir, 'x.txt'), '')
  writeFileSync(join(dir, 'books.csv'), '')
  const usages: [string[], string][] = [
    [[], 'give exactly one file'],
    [['--nope'], 'unknown option --nope'],
    [['a.csv', 'b.csv'], 'give exactly one file'],
    [[join(dir, 'x.txt'), '--collection', 'books'], '--format must be csv or ndjson (the file\'s extension does not say)'],
    [[join(dir, 'list.csv')], 'give --collection books or --collection students: the file\'s name (list.csv) does not start with either'],
    [[join(dir, 'list.csv'), '--collection', 'pets'], '--collection must be books or students, not pets'],
    [[join(dir, 'books.csv'), '--mode', 'some'], '--mode must be all or valid'],
    [[join(dir, 'books.csv'), '--url', 'not a url'], '--url not a url is not a URL']
  ]
  for (const [args, message] of usages) {
    const usage = world(origin)
    t.equal(await runImport(args, usage.env), 2, args.join(' '))
    t.same(usage.err, [`npm run import: ${message}`])
  }
  const help = world(origin)
  t.equal(await runImport(['--help'], help.env), 0)
  t.match(help.out[0], /^Usage: npm run import/)
  t.equal(await runImport([join(dir, 'missing.csv'), '--collection', 'books'], world(origin).env), 2, 'a missing file')
  for (const args of [['pets'], ['books', '--format', 'xml'], ['books', '--nope']]) t.equal(await runExport(args, world(origin).env), 2, args.join(' '))
  const bomless = world(origin)
  t.equal(await runExport(['books', '--format', 'ndjson', '--bom'], bomless.env), 2)
  t.same(bomless.err, ['npm run export: --bom applies to --format csv only (a byte order mark for Excel)'])
  const exportHelp = world(origin)
  t.equal(await runExport(['-h'], exportHelp.env), 0)
  t.match(exportHelp.out[0], /^Usage: npm run -s export/)
  const badQuery = world(origin)
  t.equal(await runExport(['books', '--query', 'sort=nothing'], badQuery.env), 1)
  t.match(badQuery.progress.at(-1), /^npm run export: 400 /)
})

t.test('a cut connection: the upload is sent again with its key (imported once), the progress followed again, an export to a file started again', async t => {
  const origin = await listening(t)
  const dir = folder(t)
  writeFileSync(join(dir, 'books.csv'), 'title,author\r\n' + Array.from({ length: 600 }, (_, i) => `Book ${i},A\r\n`).join(''))
  // The first upload and the first progress stream fail as a cut connection does; the rest get through.
  const cut = new Set<string>()
  const flaky: typeof fetch = async (input, init) => {
    const kind = `${init?.method ?? 'GET'} ${new Headers(init?.headers).get('accept') ?? ''}`
    if (!cut.has(kind)) {
      cut.add(kind)
      throw new TypeError('fetch failed')
    }
    return fetch(input, init)
  }
  const imported = world(origin, { fetch: flaky })
  t.equal(await runImport([join(dir, 'books.csv')], imported.env), 0)
  t.match(imported.progress.join('\n'), /the connection was cut \(fetch failed\); retrying/)
  const again = world(origin)
  t.equal(await runImport([join(dir, 'books.csv')], again.env), 0, 'the same file again answers the same import')
  const books = await (await fetch(`${origin}/books/export.ndjson`)).text()
  t.equal(books.split('\n').length - 1, 600, 'imported once')
  const exported = world(origin, { fetch: flaky })
  t.equal(await runExport(['books', '--output', join(dir, 'out.csv')], exported.env), 0)
  t.match(exported.progress.join('\n'), /starting again/)
  t.equal(readFileSync(join(dir, 'out.csv'), 'utf8').split('\r\n').length - 2, 600)
  // A gateway's answer that is not a problem, then a key still held by an upload being received, then the service gone while followed.
  const answers = [new Response('Bad Gateway', { status: 502 }), new Response('{}', { status: 409 })]
  const odd: typeof fetch = async (input, init) => init?.method === 'POST' && answers.length > 0 ? answers.shift()! : fetch(input, init)
  const bad = world(origin, { fetch: odd })
  t.equal(await runImport([join(dir, 'books.csv'), '--mode', 'valid'], bad.env), 1)
  t.match(bad.progress.at(-1), /refused: 502 Bad Gateway/)
  const held = world(origin, { fetch: odd })
  t.equal(await runImport([join(dir, 'books.csv'), '--mode', 'valid'], held.env), 0, 'sent again once the key was free')
  const lost = world(origin, { fetch: async (input, init) => new Headers(init?.headers).get('accept') === 'text/event-stream' ? new Response('{}', { status: 503 }) : fetch(input, init) })
  writeFileSync(join(dir, 'books-2.csv'), 'title,author\r\nDune,A\r\n')
  t.equal(await runImport([join(dir, 'books-2.csv')], lost.env), 1)
  t.match(lost.progress.at(-1), /lost http:\/\/127\.0\.0\.1:\d+\/imports\/[0-9a-f-]+; it goes on on the server/)
  const nowhere = world(origin)
  t.equal(await runExport(['books', '--url', 'http://127.0.0.1:9'], { ...nowhere.env, env: {} }), 1, 'no key, an origin given')
  // The default origin is where `npm start` serves, which may be running beside the tests: it is
  // asked through a fetch of the test's own that answers as nothing listening would.
  const asked: string[] = []
  const defaulted = world(origin, { fetch: unreachable(asked) })
  t.equal(await runExport(['books'], { ...defaulted.env, env: {} }), 1, 'the default origin, where nothing answers')
  t.match(asked, [/^http:\/\/127\.0\.0\.1:3000\/books/], 'no BSA_URL nor --url: the quick start\'s origin')
  const gone = world('http://127.0.0.1:9', { fetch: unreachable([]) })
  t.equal(await runImport([join(dir, 'books.csv')], gone.env), 1)
  t.match(gone.progress.at(-1), /nothing answers at http:\/\/127\.0\.0\.1:9/)
  t.equal(await runExport(['books'], world('http://127.0.0.1:9', { fetch: unreachable([]) }).env), 1, 'to standard output, not started again')
})
