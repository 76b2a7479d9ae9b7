// The import and export CLIs (npm run import, npm run export): a file to a running service and back, with progress, retries and a summary.
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { open, rename, stat } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Import } from '../contract/api-types.js'
import { type Io, parseCommandLine, UsageError } from './args.js'

/** Where progress goes: a line rewritten in place on a terminal, plain lines (at most every few seconds) elsewhere. */
export interface Progress {
  tty: boolean
  write (text: string): void
}

/** What the CLIs need from the world besides their arguments; tests give their own. */
export interface TransferEnvironment {
  io: Io
  progress: Progress
  env: Readonly<Record<string, string | undefined>>
  /** Where an export goes without --output. */
  stdout: NodeJS.WritableStream
  fetch: typeof fetch
  /** Milliseconds to wait before a retry (tests wait less). */
  retryMs: number
  now?: () => number
}

const connection = {
  url: { type: 'string' },
  key: { type: 'string' }
} as const

const importHelp = `Usage: npm run import -- <file> [--collection books|students] [--mode all|valid] [--format csv|ndjson] [--url URL] [--key KEY]

Uploads a CSV or NDJSON file to a running service (--url, else BSA_URL, else http://127.0.0.1:3000)
with an API key (--key, else API_KEY), then follows the import to its end. The collection is the
file's name up to its first '.', '-' or '_' when it is books or students; the format is its extension
(.csv; .ndjson or .jsonl). A cut connection is retried with the same Idempotency-Key, so the file is
never imported twice. Exit status: 0 when every row was written, 1 otherwise (with the report), 2 for
bad usage.`

const exportHelp = `Usage: npm run -s export -- <books|students> [--format csv|ndjson] [--bom] [--query 'author=…&sort=title'] [--output FILE] [--url URL] [--key KEY]

Streams every record the query selects (the list's parameters) from a running service. Without
--output the file goes to standard output: run it with npm's -s, or npm's own first lines go there
too. With --output, a cut connection starts the export again (the file is replaced once whole).
Progress goes to standard error.`

/** The service's origin and the key to send. */
function target (values: { url?: string | undefined, key?: string | undefined }, env: TransferEnvironment['env']): { origin: string, headers: Record<string, string> } {
  const origin = (values.url ?? env['BSA_URL'] ?? 'http://127.0.0.1:3000').replace(/\/$/, '')
  if (!URL.canParse(origin)) throw new UsageError(`--url ${origin} is not a URL`)
  const key = values.key ?? env['API_KEY']
  return { origin, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } }
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US')

/** Shows progress: in place on a terminal, else a line every 5 s (and the last one). */
function reporter (progress: Progress, now: () => number): { show (text: string): void, done (text: string): void } {
  let shownAt = -Infinity
  return {
    show (text) {
      if (progress.tty) progress.write(`\r\u001b[K${text}`)
      else if (now() - shownAt >= 5000) {
        shownAt = now()
        progress.write(`${text}\n`)
      }
    },
    done (text) {
      progress.write(progress.tty ? `\r\u001b[K${text}\n` : `${text}\n`)
    }
  }
}

/** A problem answer in one line. */
async function problemLine (res: Response): Promise<string> {
  const text = await res.text()
  try {
    const problem = JSON.parse(text) as { detail?: string, title?: string, errors?: { detail: string, parameter?: string, pointer?: string }[] }
    const errors = (problem.errors ?? []).map(e => [e.parameter, e.pointer, e.detail].filter(part => part !== undefined).join(' '))
    return `${res.status} ${problem.detail ?? problem.title ?? ''}${errors.length === 0 ? '' : ` (${errors.join('; ')})`}`
  } catch {
    return `${res.status} ${text.slice(0, 200)}`
  }
}

const wait = async (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** How an import is going once its file was received, in one line. */
function importLine (job: Import): string {
  // The rate counts from the upload's start: the time left is the rows left at that rate.
  const rate = Number(job.rows_per_second)
  const left = job.rows.read - job.rows.refused - job.rows.written
  const eta = job.state === 'running' ? ` · about ${Math.ceil(left / Math.max(1, rate))} s left` : ''
  return `${job.state}: ${count(job.rows.written)} of ${count(job.rows.read - job.rows.refused)} rows written, ${count(job.rows.refused)} refused · ${count(rate)} rows/s${eta}`
}

export async function runImport (args: string[], world: TransferEnvironment): Promise<number> {
  const { io } = world
  const now = world.now ?? Date.now
  const { retryMs } = world
  let line
  try {
    line = parseCommandLine(args, { ...connection, collection: { type: 'string' }, mode: { type: 'string' }, format: { type: 'string' } })
  } catch (error) {
    io.err(`npm run import: ${(error as Error).message}`)
    return 2
  }
  if (line === 'help') {
    io.out(importHelp)
    return 0
  }
  let settings
  try {
    const [file, ...extra] = line.positionals
    if (file === undefined || extra.length > 0) throw new UsageError('give exactly one file')
    const named = basename(file).split(/[.\-_]/)[0]!
    const collection = line.values.collection ?? (['books', 'students'].includes(named) ? named : undefined)
    if (collection === undefined || !['books', 'students'].includes(collection)) throw new UsageError('--collection must be books or students (the file\'s name does not say)')
    const format = line.values.format ?? ({ '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' } as Record<string, string>)[extname(file).toLowerCase()]
    if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format must be csv or ndjson (the file\'s extension does not say)')
    const mode = line.values.mode ?? 'all'
    if (mode !== 'all' && mode !== 'valid') throw new UsageError('--mode must be all or valid')
    settings = { file, collection, format, mode, ...target(line.values, world.env) }
  } catch (error) {
    io.err(`npm run import: ${(error as Error).message}`)
    return 2
  }
  const { file, collection, format, mode, origin, headers } = settings
  let size: number
  const hash = createHash('sha256')
  try {
    size = (await stat(file)).size
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  } catch (error) {
    io.err(`npm run import: cannot read ${file}: ${(error as Error).message}`)
    return 1
  }
  // The same file, collection and mode are the same import: a retry after a cut connection (or a
  // second run once the first was received) answers the first import instead of starting another.
  const idempotencyKey = `cli-${collection}-${mode}-${hash.digest('hex').slice(0, 40)}`
  const show = reporter(world.progress, now)
  let location: string | null = null
  for (let attempt = 1; location === null; attempt++) {
    let sent = 0
    // Opened here, not by the stream: a stream destroyed before it opened its file would open it later all the same.
    const source = (await open(file)).createReadStream()
    const body = source.pipe(new Transform({
      transform (chunk: Buffer, _encoding, done) {
        sent += chunk.length
        show.show(`uploading ${basename(file)}: ${Math.floor(sent / Math.max(1, size) * 100)} % of ${count(size)} bytes`)
        done(null, chunk)
      }
    }))
    try {
      const res = await world.fetch(`${origin}/imports?collection=${collection}&mode=${mode}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': format === 'csv' ? 'text/csv' : 'application/x-ndjson', 'idempotency-key': idempotencyKey },
        body: Readable.toWeb(body) as ReadableStream,
        duplex: 'half'
      } as RequestInit)
      if (res.status === 202) {
        location = res.headers.get('location')!
        await res.body?.cancel()
        continue
      }
      // The first upload with this key is still being received (the server has not yet seen it cut).
      if (res.status === 409 && attempt < 30) {
        await res.body?.cancel()
        await wait(retryMs)
        continue
      }
      show.done(`npm run import: ${basename(file)} refused: ${await problemLine(res)}`)
      return 1
    } catch (error) {
      if (attempt >= 5) {
        show.done(`npm run import: ${origin}: ${(error as Error).message} (tried ${attempt} times)`)
        return 1
      }
      show.done(`npm run import: the connection was cut (${(error as Error).message}); retrying`)
      await wait(retryMs * attempt)
    } finally {
      // The file is read again from its start by the next attempt; this one's reading stops here.
      source.destroy()
    }
  }
  const job = await follow(world, origin + location, headers, show, retryMs)
  if (job === null) {
    show.done(`npm run import: lost ${origin}${location}; it goes on on the server, see it there`)
    return 1
  }
  show.done(`${basename(file)} → ${location}: ${importLine(job)}${job.detail === null ? '' : ` (${job.detail})`}`)
  for (const problem of job.problems.slice(0, 20)) io.err(`line ${problem.line}: ${problem.pointer === undefined ? '' : `${problem.pointer.slice(2)} `}${problem.detail}`)
  if (job.problems.length > 20 || job.problems_omitted > 0) io.err(`… and ${job.problems.length - 20 + job.problems_omitted} more: GET ${origin}${location}`)
  return job.state === 'succeeded' && job.rows.refused === 0 ? 0 : 1
}

/** Follows the import's event stream to its end, reconnecting when the stream is cut; null when the service is gone. */
async function follow (world: TransferEnvironment, url: string, headers: Record<string, string>, show: ReturnType<typeof reporter>, retryMs: number): Promise<Import | null> {
  for (let failures = 0; failures < 5;) {
    let last: Import | null = null
    try {
      const res = await world.fetch(url, { headers: { ...headers, accept: 'text/event-stream' } })
      if (res.status !== 200) throw new Error(await problemLine(res))
      let buffer = ''
      for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
        buffer += chunk
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          // Each frame is `event: import` and one `data:` line.
          const data = buffer.slice(0, end).split('\n').find(field => field.startsWith('data: '))!
          buffer = buffer.slice(end + 2)
          last = JSON.parse(data.slice('data: '.length)) as Import
          show.show(importLine(last))
        }
      }
      if (last !== null && !['receiving', 'running'].includes(last.state)) return last
    } catch {
      failures++
    }
    await wait(retryMs)
  }
  return null
}

export async function runExport (args: string[], world: TransferEnvironment): Promise<number> {
  const { io } = world
  const now = world.now ?? Date.now
  let line
  try {
    line = parseCommandLine(args, { ...connection, format: { type: 'string' }, bom: { type: 'boolean' }, query: { type: 'string' }, output: { type: 'string' } })
  } catch (error) {
    io.err(`npm run export: ${(error as Error).message}`)
    return 2
  }
  if (line === 'help') {
    io.out(exportHelp)
    return 0
  }
  let settings
  try {
    const [collection, ...extra] = line.positionals
    if (extra.length > 0 || (collection !== 'books' && collection !== 'students')) throw new UsageError('give books or students')
    const format = line.values.format ?? 'csv'
    if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format must be csv or ndjson')
    const query = new URLSearchParams(line.values.query ?? '')
    if (line.values.bom === true) query.set('bom', 'true')
    const path = collection === 'books' ? '/books' : '/api/students'
    settings = { path: `${path}${query.size === 0 ? '' : `?${query}`}`, format, output: line.values.output, ...target(line.values, world.env) }
  } catch (error) {
    io.err(`npm run export: ${(error as Error).message}`)
    return 2
  }
  const { path, format, output, origin, headers } = settings
  const show = reporter(world.progress, now)
  const started = now()
  // To a file, an export cut midway starts again (a snapshot cannot be resumed); to standard output it cannot.
  for (let attempt = 1; ; attempt++) {
    let bytes = 0
    let lines = 0
    try {
      const res = await world.fetch(origin + path, { headers: { ...headers, accept: format === 'csv' ? 'text/csv' : 'application/x-ndjson' } })
      if (res.status !== 200) {
        show.done(`npm run export: ${await problemLine(res)}`)
        return 1
      }
      const counting = new Transform({
        transform (chunk: Buffer, _encoding, done) {
          bytes += chunk.length
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
          const seconds = Math.max(0.001, (now() - started) / 1000)
          show.show(`exporting ${path}: ${count(lines)} lines, ${count(bytes)} bytes · ${count(lines / seconds)} lines/s`)
          done(null, chunk)
        }
      })
      const partial = output === undefined ? null : `${output}.partial`
      await pipeline(Readable.fromWeb(res.body! as never), counting, partial === null ? world.stdout : createWriteStream(partial))
      if (partial !== null) await rename(partial, output!)
      show.done(`exported ${path}: ${count(lines)} lines, ${count(bytes)} bytes${output === undefined ? '' : ` to ${output}`}`)
      return 0
    } catch (error) {
      if (output === undefined || attempt >= 5) {
        show.done(`npm run export: ${origin}${path}: ${(error as Error).message}`)
        return 1
      }
      show.done(`npm run export: the connection was cut (${(error as Error).message}); starting again`)
      await wait(world.retryMs * attempt)
    }
  }
}
