// The import CLI (npm run import): a file to a running service, followed to its end with progress and a summary; Ctrl-C, replays, restarts and --cancel.
import { createHash, randomUUID } from 'node:crypto'
import { createReadStream, existsSync } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import { Readable, Transform } from 'node:stream'
import type { Import } from '../contract/api-types.js'
import { parseCommandLine, UsageError } from './args.js'
import { progressLine, rows, summaryLine, WriteRate } from './import-progress.js'
import { connection, count, problemLine, reporter, target, type TransferEnvironment, wait } from './transfer.js'

const importHelp = `Usage: npm run import -- <file> [--collection books|students] [--mode all|valid] [--format csv|ndjson] [--again] [--url URL] [--key KEY]
       npm run import -- --cancel <import id> [--url URL] [--key KEY]

Uploads a CSV or NDJSON file to a running service (--url, else BSA_URL, else http://127.0.0.1:3000)
with an API key (--key, else API_KEY), then follows the import to its end. The collection is the
file's name up to its first '.', '-' or '_' when it is books or students; the format is its extension
(.csv; .ndjson or .jsonl). A cut connection is retried with the same Idempotency-Key, so the file is
never imported twice: the same content, collection and mode run again within a day (the service's
IDEMPOTENCY_TTL_SECONDS) answers the earlier import and writes nothing new; --again imports it once
more. Ctrl-C stops following, not the import, and says how to cancel it (--cancel). Exit status: 0
when every row was written, 1 otherwise (with the report), 2 for bad usage, 130 after Ctrl-C.`

/** True for fetch's failure when nothing listens at the origin (the service is not running, or not there). */
const refused = (error: unknown): boolean => (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED'

/** Ctrl-C's exit status, as a shell reports a process it interrupted (128 + SIGINT). */
const interruptedStatus = 130

/** Why a command stopped: Ctrl-C, told through the environment's signal. */
class Interrupted extends Error {}

/** The collection a file's name says: its part up to the first '.', '-' or '_'. */
function collectionNamed (file: string): string | undefined {
  const named = basename(file).split(/[.\-_]/)[0]!
  return ['books', 'students'].includes(named) ? named : undefined
}

/** What npm run import was asked: a file to import, or an import to cancel. */
type ImportRequest =
  | { file: string, collection: string, format: 'csv' | 'ndjson', mode: string, again: boolean, origin: string, headers: Record<string, string> }
  | { cancel: string, origin: string, headers: Record<string, string> }

function importRequest (line: Exclude<ReturnType<typeof parseImportLine>, 'help'>, env: TransferEnvironment['env']): ImportRequest {
  const connectTo = target(line.values, env)
  const [file, ...extra] = line.positionals
  if (line.values.cancel !== undefined) {
    if (file !== undefined) throw new UsageError('--cancel takes an import, not a file')
    return { cancel: line.values.cancel, ...connectTo }
  }
  if (file === undefined || extra.length > 0) throw new UsageError('give exactly one file')
  if (!existsSync(file)) throw new UsageError(`${file}: no such file`)
  const collection = line.values.collection ?? collectionNamed(file)
  if (collection === undefined) throw new UsageError(`give --collection books or --collection students: the file's name (${basename(file)}) does not start with either`)
  if (!['books', 'students'].includes(collection)) throw new UsageError(`--collection must be books or students, not ${collection}`)
  const format = line.values.format ?? ({ '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' } as Record<string, string>)[extname(file).toLowerCase()]
  if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format must be csv or ndjson (the file\'s extension does not say)')
  const mode = line.values.mode ?? 'all'
  if (mode !== 'all' && mode !== 'valid') throw new UsageError('--mode must be all or valid')
  return { file, collection, format, mode, again: line.values.again === true, ...connectTo }
}

const parseImportLine = (args: string[]) => parseCommandLine(args, {
  ...connection,
  collection: { type: 'string' },
  mode: { type: 'string' },
  format: { type: 'string' },
  again: { type: 'boolean' },
  cancel: { type: 'string' }
})

/** The import's URL from what --cancel was given: its id, its path or its URL. */
function importUrl (origin: string, given: string): string {
  if (/^https?:\/\//.test(given)) return given
  return `${origin}/imports/${given.replace(/^\/?(imports\/)?/, '')}`
}

export async function runImport (args: string[], world: TransferEnvironment): Promise<number> {
  const { io } = world
  let request: ImportRequest
  try {
    const line = parseImportLine(args)
    if (line === 'help') {
      io.out(importHelp)
      return 0
    }
    request = importRequest(line, world.env)
  } catch (error) {
    io.err(`npm run import: ${(error as Error).message}`)
    return 2
  }
  try {
    return 'cancel' in request ? await cancelImport(world, importUrl(request.origin, request.cancel), request.headers) : await importFile(world, request)
  } catch (error) {
    // On a new line, after the progress line a terminal shows.
    if (world.progress.tty) world.progress.write('\n')
    io.err(`npm run import: ${(error as Error).message}`)
    return error instanceof Interrupted ? interruptedStatus : 1
  }
}

async function cancelImport (world: TransferEnvironment, url: string, headers: Record<string, string>): Promise<number> {
  let res
  try {
    res = await world.fetch(url, { method: 'DELETE', headers })
  } catch (error) {
    world.io.err(`npm run import: ${url}: ${(error as Error).message}`)
    return 1
  }
  if (res.status !== 202) {
    world.io.err(`npm run import: ${url}: ${await problemLine(res)}`)
    return 1
  }
  const job = await res.json() as Import
  world.io.out(`cancel requested for ${url}: it stops after the batch being written; the rows written so far stay (${rows(job.rows.written)})`)
  return 0
}

async function importFile (world: TransferEnvironment, request: Extract<ImportRequest, { file: string }>): Promise<number> {
  const { io, retryMs } = world
  const now = world.now ?? Date.now
  const interrupted = world.interrupted ?? new AbortController().signal
  const stopIfInterrupted = (what: string) => { if (interrupted.aborted) throw new Interrupted(what) }
  const { file, collection, format, mode, origin, headers } = request
  const startedAt = now()
  let size: number
  const hash = createHash('sha256')
  try {
    size = (await stat(file)).size
    for await (const chunk of createReadStream(file)) {
      stopIfInterrupted('stopped before the upload: nothing was sent')
      hash.update(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof Interrupted) throw error
    io.err(`npm run import: cannot read ${file}: ${(error as Error).message}`)
    return 1
  }
  // The same file, collection and mode are the same import: a retry after a cut connection (or a
  // second run once the first was received) answers the first import instead of starting another.
  // --again makes this run's key its own, so that the file is imported once more.
  const idempotencyKey = `cli-${collection}-${mode}-${hash.digest('hex').slice(0, 40)}${request.again ? `-${randomUUID().slice(0, 8)}` : ''}`
  const show = reporter(world.progress, now)
  let accepted: { location: string, job: Import, earlier: boolean } | null = null
  for (let attempt = 1; accepted === null; attempt++) {
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
        duplex: 'half',
        signal: interrupted
      } as RequestInit)
      if (res.status === 202) {
        const job = await res.json() as Import
        // A replay made before this run began (by the server's clock: its Date header less the time this run took) is an earlier run's import.
        const served = Date.parse(String(res.headers.get('date')))
        const earlier = res.headers.get('idempotent-replayed') === 'true' && Date.parse(job.created_at) < served - (now() - startedAt) - 2000
        accepted = { location: res.headers.get('location')!, job, earlier }
        continue
      }
      // The first upload with this key is still being received (the server has not yet seen it cut).
      if (res.status === 409 && attempt < 30) {
        await res.body?.cancel()
        await wait(retryMs, interrupted)
        continue
      }
      show.done(`npm run import: ${basename(file)} refused: ${await problemLine(res)}`)
      return 1
    } catch (error) {
      // A file the service had not received whole is dropped by it, and the import it began ends failed with nothing written.
      stopIfInterrupted('stopped during the upload: the service drops a file it did not receive whole, so nothing was imported')
      if (attempt === 1 && refused(error)) {
        show.done(`npm run import: nothing answers at ${origin}: is the service running (npm start)? Else give its address with --url or BSA_URL`)
        return 1
      }
      if (attempt >= 5) {
        show.done(`npm run import: ${origin}: ${(error as Error).message} (tried ${attempt} times)`)
        return 1
      }
      show.done(`npm run import: the connection was cut (${(error as Error).message}); retrying`)
      await wait(retryMs * attempt, interrupted)
    } finally {
      // The file is read again from its start by the next attempt; this one's reading stops here.
      source.destroy()
    }
  }
  const { location, earlier } = accepted
  const url = origin + location
  if (earlier) {
    show.done(`${basename(file)} was already imported as ${location} at ${accepted.job.created_at} (the same content, collection and mode): nothing new is written. To import it again: npm run import -- ${file} --again`)
  } else {
    show.done(`${basename(file)} received: ${location} (Ctrl-C stops following it; the import goes on)`)
  }
  let last = accepted.job
  const job = ended(last) ? last : await follow(world, url, headers, show, current => { last = current }, interrupted)
  if (job === 'interrupted') throw new Interrupted(stoppedFollowing(url, last, origin))
  if (job === null) {
    show.done(`npm run import: lost ${url}; it goes on on the server, see it there`)
    return 1
  }
  // A success's detail only repeats its counts; a failure's says why.
  show.done(`${basename(file)} → ${location}: ${summaryLine(job)}${job.detail === null || job.state === 'succeeded' ? '' : ` (${job.detail})`}`)
  for (const problem of job.problems.slice(0, 20)) io.err(`line ${problem.line}${problem.pointer === undefined ? '' : `, ${problem.pointer.slice(2)}`}: ${problem.detail}`)
  if (job.problems.length > 20 || job.problems_omitted > 0) io.err(`… and ${count(job.problems.length - 20 + job.problems_omitted)} more: GET ${url}`)
  return job.state === 'succeeded' && job.rows.refused === 0 ? 0 : 1
}

const ended = (job: Import): boolean => !['receiving', 'running'].includes(job.state)

/** What Ctrl-C while following says: where the import is, and how to cancel it. */
function stoppedFollowing (url: string, job: Import, origin: string): string {
  const cancel = job.mode === 'all' && job.state === 'running'
    ? 'It cannot be cancelled: with --mode all, once its rows began to be written it runs to its end (all or nothing).'
    : `To cancel it: npm run import -- --cancel ${job.import_id}${origin === 'http://127.0.0.1:3000' ? '' : ` --url ${origin}`}`
  return `stopped following ${url}; the import goes on on the server (${count(job.rows.written)} of ${rows(job.rows.read - job.rows.refused)} written so far). ${cancel}`
}

/**
 * Follows the import's event stream to its end, reconnecting when the stream ends early or is cut (a
 * restart of the service ends it); null once the service has not answered for `followPatienceMs`.
 */
async function follow (world: TransferEnvironment, url: string, headers: Record<string, string>, show: ReturnType<typeof reporter>, seen: (job: Import) => void, interrupted: AbortSignal): Promise<Import | null | 'interrupted'> {
  const now = world.now ?? Date.now
  const patience = world.followPatienceMs ?? 120_000
  const rate = new WriteRate()
  let answeredAt = now()
  let waiting = false
  for (;;) {
    try {
      const res = await world.fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: interrupted })
      if (res.status !== 200) throw new Error(await problemLine(res))
      let buffer = ''
      for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
        buffer += chunk
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          // Each frame is `event: import` and one `data:` line.
          const data = buffer.slice(0, end).split('\n').find(field => field.startsWith('data: '))!
          buffer = buffer.slice(end + 2)
          const job = JSON.parse(data.slice('data: '.length)) as Import
          answeredAt = now()
          waiting = false
          seen(job)
          if (ended(job)) return job
          if (job.state === 'running') rate.add(answeredAt, job.rows.written)
          show.show(progressLine(job, rate))
        }
      }
    } catch (error) {
      if (interrupted.aborted) return 'interrupted'
      if (now() - answeredAt >= patience) return null
      if (!waiting) show.done(`npm run import: ${url} does not answer (${(error as Error).message}); trying again for up to ${Math.round(patience / 1000)} s, the import goes on on the server`)
      waiting = true
    }
    await wait(world.retryMs, interrupted)
  }
}
