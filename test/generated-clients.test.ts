// Third-party tools on the contract as a running service serves it: orval and @hey-api/openapi-ts generate
// clients that compile under tsc --strict and make a whole round trip against a live service, and
// Spectral's spectral:oas finds nothing. The tools need Node.js >= 22.18; they are pinned in test/generators.
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { adminKey, build } from './helper.js'
import { runTool } from './process.js'
import { needService } from './services.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const tools = join(root, 'test/generators')
const bin = (name: string): string => join(tools, 'node_modules/.bin', name)
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)

// Generating, compiling and running two clients on a busy 2-core machine takes a while.
t.setTimeout(600_000)

// A consumer's ESM project: both generated clients and a probe for each, compiled strictly and run.
const tsconfig = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    outDir: 'out',
    skipLibCheck: false,
    types: []
  },
  include: ['hey/**/*.ts', 'orval/**/*.ts', 'orval-other/**/*.ts', '*.ts']
}

// An event of a resource this contract does not describe, as a later version may send: a generated
// client must take it (compile-time: it is an `Event`; run time: it is parsed and handed over).
const unknownEvent = {
  specversion: '1.0',
  id: '5k2mq0d1-1e',
  source: '/books-students-api',
  type: 'course.created',
  subject: '/courses/0190a5d2-9a00-7c2d-8a11-5e6f7a8b9c0d',
  time: '2026-11-23T10:00:00.000Z',
  datacontenttype: 'application/json',
  data: { id: '0190a5d2-9a00-7c2d-8a11-5e6f7a8b9c0d', revision: 1 }
}

// The round trip through hey-api's SDK, on its default client: its base URL is the served document's
// first server. Prints what it saw as JSON.
const heyProbe = `
declare const process: { argv: string[] }
import { client } from './hey/client.gen.js'
import { createBook, createImport, deleteBook, exportBooksCsv, exportBooksNdjson, getBook, getImport, listBooks, listEvents, streamEvents, updateBook, type Book, type Event } from './hey/index.js'

const [key, author, csvFile, unknownOrigin] = process.argv.slice(2) as [string, string, string, string]
client.setConfig({ auth: key })
const seen: Record<string, unknown> = {}

const idempotencyKey = crypto.randomUUID()
const created = await createBook({ body: { title: 'Dune', author, isbn: null }, headers: { 'Idempotency-Key': idempotencyKey } })
const retried = await createBook({ body: { title: 'Dune', author, isbn: null }, headers: { 'Idempotency-Key': idempotencyKey } })
await createBook({ body: { title: 'Dune Messiah', author, isbn: null } })
const book = created.data!
seen.create = [created.response?.status, retried.response?.status, retried.data?.book_id === book.book_id]
const got = await getBook({ path: { book_id: book.book_id } })
const etag = got.response?.headers.get('etag')!
seen.get = [got.response?.status, got.data?.title]
const first = await listBooks({ query: { author: [author], limit: 1 } })
const second = await listBooks({ query: { author: [author], limit: 1, cursor: first.data!.next_cursor! } })
seen.list = [first.response?.status, first.data?.items.map(b => b.title), second.response?.status, second.data?.items.map(b => b.title), second.data?.next_cursor]
const replaced = await updateBook({ path: { book_id: book.book_id }, body: { title: 'Dune (1965)', author, isbn: null, published_year: 1965 }, headers: { 'If-Match': etag } })
seen.replace = [replaced.response?.status, replaced.data?.title]
const stale = await updateBook({ path: { book_id: book.book_id }, body: { title: 'Lost update', author, isbn: null }, headers: { 'If-Match': etag } })
seen.stale = [stale.response?.status, stale.error?.type]
const deleted = await deleteBook({ path: { book_id: book.book_id }, headers: { 'If-Match': replaced.response?.headers.get('etag')! } })
seen.delete = deleted.response?.status

// A CSV file imported as the client sends it, then both exports of what the author now has.
const file = new Blob([csvFile], { type: 'text/csv' })
const started = await createImport({ body: file, query: { collection: 'books' } })
let state = started.data?.state
for (let tries = 1; (state === 'receiving' || state === 'running') && tries < 100; tries++) {
  await new Promise(resolve => setTimeout(resolve, 100))
  state = (await getImport({ path: { import_id: started.data!.import_id } })).data?.state
}
seen.import = [started.response?.status, state]
const csv = await exportBooksCsv({ query: { author: [author], sort: 'title' } })
seen.csv = [csv.response?.status, csv.data?.split('\\r\\n').slice(1, -1).map(row => row.split(',')[1])]
const ndjson = await exportBooksNdjson({ query: { author: [author], sort: 'title' } })
const lines = (await ndjson.data?.text())?.split('\\n').slice(0, -1) ?? []
seen.ndjson = [ndjson.response?.status, lines.map(line => { const book: Book = JSON.parse(line); return book.title })]
// An event is listed once every write before it has committed: wait for the deletion's.
let events = await listEvents({ query: { limit: 500 } })
let ours: Event[] = []
for (let tries = 1; ; tries++) {
  ours = (events.data?.items ?? []).filter((event: Event) => event.subject === '/books/' + book.book_id)
  if (ours.some(event => event.type === 'book.deleted') || tries === 100) break
  await new Promise(resolve => setTimeout(resolve, 100))
  events = await listEvents({ query: { limit: 500 } })
}
seen.events = [events.response?.status, ours.map(event => event.type)]

// The live stream, typed item by item: from the book's creation until its deletion.
const abort = new AbortController()
const { stream } = await streamEvents({ query: { after: ours[0]!.id }, signal: abort.signal, sseMaxRetryAttempts: 1 })
const streamed: string[] = []
for await (const event of stream) {
  if (event === undefined || event.subject !== '/books/' + book.book_id) continue
  streamed.push(event.type)
  if (event.type === 'book.deleted') break
}
abort.abort()
seen.stream = streamed

// A type this contract does not describe.
const later: Event = ${JSON.stringify(unknownEvent)}
const other = await listEvents({ baseUrl: unknownOrigin, query: { limit: 1 } })
seen.unknown = [other.response?.status, other.data?.items.map(event => event.type), later.type]
console.log(JSON.stringify(seen))
`

// The same round trip through orval's fetch client, whose URLs start with the served document's first
// server. orval cannot follow the endless stream (its streamEvents reads the whole body), so it is not called.
const orvalProbe = `
declare const process: { argv: string[] }
import { createBook, createImport, deleteBook, exportBooksCsv, exportBooksNdjson, getBook, getImport, listBooks, listEvents, updateBook, type Book, type Event } from './orval/api.js'
import { listEvents as listOtherEvents } from './orval-other/api.js'

const [key, author, csvFile] = process.argv.slice(2) as [string, string, string]
const auth = { authorization: 'Bearer ' + key }
const seen: Record<string, unknown> = {}

const idempotencyKey = crypto.randomUUID()
const created = await createBook({ title: 'Dune', author, isbn: null }, { headers: { ...auth, 'Idempotency-Key': idempotencyKey } })
const retried = await createBook({ title: 'Dune', author, isbn: null }, { headers: { ...auth, 'Idempotency-Key': idempotencyKey } })
await createBook({ title: 'Dune Messiah', author, isbn: null }, { headers: auth })
if (created.status !== 201 || retried.status !== 201) throw new Error('create: ' + created.status + ' ' + retried.status)
const book = created.data
seen.create = [created.status, retried.status, retried.data.book_id === book.book_id]
const got = await getBook(book.book_id, { headers: auth })
const etag = got.headers.get('etag')!
seen.get = [got.status, got.status === 200 ? got.data.title : undefined]
const first = await listBooks({ author: [author], limit: 1 }, { headers: auth })
if (first.status !== 200) throw new Error('list: ' + first.status)
const second = await listBooks({ author: [author], limit: 1, cursor: first.data.next_cursor! }, { headers: auth })
seen.list = [first.status, first.data.items.map(b => b.title), second.status, second.status === 200 ? second.data.items.map(b => b.title) : [], second.status === 200 ? second.data.next_cursor : undefined]
const replaced = await updateBook(book.book_id, { title: 'Dune (1965)', author, isbn: null, published_year: 1965 }, { headers: { ...auth, 'If-Match': etag } })
seen.replace = [replaced.status, replaced.status === 200 ? replaced.data.title : undefined]
const stale = await updateBook(book.book_id, { title: 'Lost update', author, isbn: null }, { headers: { ...auth, 'If-Match': etag } })
seen.stale = [stale.status, stale.status === 412 ? stale.data.type : undefined]
const deleted = await deleteBook(book.book_id, { headers: { ...auth, 'If-Match': replaced.headers.get('etag')! } })
seen.delete = deleted.status

// A CSV file imported as the client sends it, then both exports of what the author now has.
const started = await createImport(new Blob([csvFile], { type: 'text/csv' }), { collection: 'books' }, { headers: auth })
if (started.status !== 202) throw new Error('import: ' + started.status)
let state = started.data.state
for (let tries = 1; (state === 'receiving' || state === 'running') && tries < 100; tries++) {
  await new Promise(resolve => setTimeout(resolve, 100))
  const now = await getImport(started.data.import_id, { headers: auth })
  if (now.status === 200) state = now.data.state
}
seen.import = [started.status, state]
const csv = await exportBooksCsv({ author: [author], sort: 'title' }, { headers: auth })
seen.csv = [csv.status, csv.status === 200 ? csv.data.split('\\r\\n').slice(1, -1).map(row => row.split(',')[1]) : []]
const ndjson = await exportBooksNdjson({ author: [author], sort: 'title' }, { headers: auth })
const lines = ndjson.status === 200 ? (await ndjson.stream.text()).split('\\n').slice(0, -1) : []
seen.ndjson = [ndjson.status, lines.map(line => { const book: Book = JSON.parse(line); return book.title })]
// An event is listed once every write before it has committed: wait for the deletion's.
let events = await listEvents({ limit: 500 }, { headers: auth })
let ours: Event[] = []
for (let tries = 1; ; tries++) {
  ours = events.status === 200 ? events.data.items.filter((event: Event) => event.subject === '/books/' + book.book_id) : []
  if (ours.some(event => event.type === 'book.deleted') || tries === 100) break
  await new Promise(resolve => setTimeout(resolve, 100))
  events = await listEvents({ limit: 500 }, { headers: auth })
}
seen.events = [events.status, ours.map(event => event.type)]

// A type this contract does not describe, from a server that sends it (a client generated with its base URL).
const later: Event = ${JSON.stringify(unknownEvent)}
const other = await listOtherEvents({ limit: 1 }, { headers: auth })
seen.unknown = [other.status, other.status === 200 ? other.data.items.map(event => event.type) : [], later.type]
console.log(JSON.stringify(seen))
`

// What both round trips must have seen.
const expected = (author: string): Record<string, unknown> => ({
  create: [201, 201, true],
  get: [200, 'Dune'],
  list: [200, ['Dune'], 200, ['Dune Messiah'], null],
  replace: [200, 'Dune (1965)'],
  stale: [412, '/problems/precondition-failed'],
  delete: 204,
  import: [202, 'succeeded'],
  csv: [200, ['Dune Messiah', 'The Dispossessed']],
  ndjson: [200, ['Dune Messiah', 'The Dispossessed']],
  events: [200, ['book.created', 'book.replaced', 'book.deleted']],
  unknown: [200, ['course.created'], 'course.created'],
  author
})

// Node 20 (this project's own runtime) cannot run these tools: one line, then nothing, even in CI.
const tooOld = major < 22 || (major === 22 && minor < 18)
t.test('generated clients (orval, @hey-api/openapi-ts) make a round trip against a live service, and Spectral finds nothing',
  tooOld ? { skip: `needs Node.js >= 22.18 (this is ${process.version}): CI runs it in its Node 24 pass` } : {}, async t => {
    const options = await needService(t, {
      name: 'the generator tools of test/generators (orval, @hey-api/openapi-ts, Spectral)',
      check: async () => {
        for (const name of ['orval', 'openapi-ts', 'spectral', 'tsc']) {
          if (!existsSync(bin(name))) throw new Error(`${bin(name)} is missing`)
        }
      },
      howToRun: 'install them on Node.js >= 22.18 with npm ci --prefix test/generators (.ci/run does)'
    })
    await t.test('round trips', options, async t => {
      const { app } = await build(t)
      await app.listen({ port: 0, host: '127.0.0.1' })
      const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

      // A server that sends an event of a type this contract does not describe.
      const unknown = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [unknownEvent], next_cursor: null }))
      })
      await new Promise<void>(resolve => unknown.listen(0, '127.0.0.1', resolve))
      t.teardown(() => new Promise<void>(resolve => unknown.close(() => resolve())))
      const unknownOrigin = `http://127.0.0.1:${(unknown.address() as AddressInfo).port}`

      const dir = mkdtempSync(join(tmpdir(), 'bsa-generated-clients-'))
      t.teardown(() => rmSync(dir, { recursive: true, force: true }))
      // The served document, as a consumer fetches it; its first server is this service.
      const served = await fetch(`${origin}/docs/json`).then(res => res.json()) as { servers: { url: string }[] }
      t.equal(served.servers[0]?.url, origin, 'the served document names the service first')
      writeFileSync(join(dir, 'openapi.json'), JSON.stringify(served))

      const hey = await runTool(bin('openapi-ts'), ['--input', 'openapi.json', '--output', 'hey', '--client', '@hey-api/client-fetch', '--no-log-file'], dir)
      t.equal(hey.code, 0, '@hey-api/openapi-ts generates its SDK', { output: hey.output })
      // Default settings, the base URL aside: the served document's first server, and for the second
      // client the server that sends an event this contract does not describe.
      const orvalConfig = {
        api: { input: './openapi.json', output: { target: './orval/api.ts', client: 'fetch', baseUrl: { getBaseUrlFromSpecification: true } } },
        other: { input: './openapi.json', output: { target: './orval-other/api.ts', client: 'fetch', baseUrl: unknownOrigin } }
      }
      writeFileSync(join(dir, 'orval.config.mjs'), `export default ${JSON.stringify(orvalConfig)}\n`)
      const orval = await runTool(bin('orval'), ['--config', 'orval.config.mjs'], dir)
      t.equal(orval.code, 0, 'orval generates its client', { output: orval.output })

      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig))
      writeFileSync(join(dir, 'hey-probe.ts'), heyProbe)
      writeFileSync(join(dir, 'orval-probe.ts'), orvalProbe)
      const compiled = await runTool(bin('tsc'), ['-p', 'tsconfig.json'], dir)
      t.equal(compiled.code, 0, 'tsc --strict compiles both clients and the probes', { output: compiled.output })
      if (compiled.code !== 0) return

      for (const client of ['hey', 'orval']) {
        const author = `Author ${randomUUID()}`
        const csvFile = `title,author\r\nThe Dispossessed,${author}\r\n`
        const result = await runTool(process.execPath, [join(dir, `out/${client}-probe.js`), adminKey, author, csvFile, unknownOrigin], dir)
        t.equal(result.code, 0, `the ${client} probe runs`, { output: result.output })
        const seen = JSON.parse(result.output.trim().split('\n').pop() ?? '{}') as Record<string, unknown>
        const { stream, ...rest } = seen
        t.same({ ...rest, author }, expected(author), `${client}: create (Idempotency-Key), get, list by author and next cursor (data.items), replace (If-Match), stale replace (412), delete, a CSV import (a Blob as generated), the CSV export as text and the NDJSON one as a stream or Blob, /events, an unknown event type`)
        if (client === 'hey') t.same(stream, ['book.replaced', 'book.deleted'], 'hey: the event stream after the creation, typed item by item')
      }
    })
    await t.test('spectral:oas', options, async t => {
      const linted = await runTool(bin('spectral'), ['lint', 'openapi.yaml', '--ruleset', '.spectral.yaml', '--fail-severity', 'hint'], root)
      t.equal(linted.code, 0, 'no error, warning, info or hint', { output: linted.output })
    })
  })
