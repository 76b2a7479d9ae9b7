// Handlers of imports: a file received, checked and staged in the request, then written by the runner; its state, its progress live, its cancellation.
import { createHash } from 'node:crypto'
import { PassThrough, type Readable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import { uuidv7 } from 'uuidv7'
import type { Caller } from '../access/auth.js'
import { allScopes } from '../access/api-keys.js'
import type { Import, ImportProblem, ServiceHandlers } from '../contract/api-types.js'
import { arriving } from '../http/body.js'
import { ApiError, IdempotencyKeyInUseError, IdempotencyKeyReusedError, MissingScopeError, NotFoundError } from '../http/errors.js'
import { type Collection, type RowChecker, rowChecker } from '../imports/check.js'
import { fileRows, type FileLimits, ImportTooLargeError, InvalidHeaderError, NotUtf8Error } from '../imports/rows.js'
import type { ImportRunner } from '../imports/runner.js'
import type { ImportStore, StagedRow, StoredImport } from '../storage/types.js'
import { keyOf } from './idempotency.js'
import { recordId } from './input.js'

/** A media type as the contract names it: without parameters, in lower case (RFC 9110: it is case-insensitive). */
function mediaType (header: string | undefined): string {
  return String(header).split(';')[0]!.trim().toLowerCase()
}

type ImportHandlers = Pick<ServiceHandlers, 'listImports' | 'createImport' | 'getImport' | 'cancelImport'>

export interface ImportHandlerOptions {
  imports: ImportStore
  runner: ImportRunner
  /** The contract, whose import row schemas check the rows. */
  document: object
  limits: FileLimits
  /** Rows staged at a time, and between two updates of the import's counts. */
  batch: number
  clock: () => number
  /** Aborted when the node closes: progress streams end then, as event streams do, and their clients reconnect. */
  closing: AbortSignal
}

const ended = new Set<Import['state']>(['succeeded', 'failed', 'cancelled'])

/** Rows of an import (or pieces of its body) the rate limit counts as one request. */
const unitsPerRequest = 1000

/** The caller's quota ran out while its file was read; the reply carries Retry-After. */
class QuotaExceededError extends ApiError {
  readonly resetIn: number

  constructor (resetIn: number) {
    super(429, 'https://iana.org/assignments/http-problem-types#quota-exceeded', `Request quota exceeded by this import (its rows, or the pieces its body arrived in); retry in ${resetIn} seconds`, undefined, 'Too Many Requests')
    this.resetIn = resetIn
  }
}

// What a row that repeats or meets a stored record's unique value is told, per collection.
const names: Record<Collection, { kind: string, id: string, unique: string }> = {
  books: { kind: 'book', id: 'book_id', unique: 'isbn' },
  students: { kind: 'student', id: 'student_id', unique: 'email' }
}

/** The import as the contract shows it: what only the service sees left out, the problems in line order. */
function view ({ keyId, idempotencyKey, fingerprint, writtenTo, ...shown }: StoredImport): Import {
  return { ...shown, problems: [...shown.problems].sort((a, b) => a.line - b.line) }
}

/** Whose imports the caller reaches: its key's, or every one for an admin key (one with every scope). */
function ownerOf (caller: Caller): string | null {
  // The security handler let only keys through.
  const { keyId, scopes } = caller as Extract<Caller, { kind: 'key' }>
  return allScopes.every(scope => scopes.includes(scope)) ? null : keyId
}

/** The upload stopped for a reason of the client's, the file's or the import's own: what its import says, and what the request answers. */
class Stopped extends Error {
  readonly state: 'failed' | 'cancelled'
  readonly detail: string
  readonly answer: ApiError | null

  constructor (state: 'failed' | 'cancelled', detail: string, answer: ApiError | null) {
    super(detail)
    this.state = state
    this.detail = detail
    this.answer = answer
  }
}

/** The file was refused (a limit, its header, its encoding, the quota): the request is answered `problem`, and the import removed, since its caller never learns its id. */
class Refused extends Error {
  readonly problem: ApiError

  constructor (problem: ApiError) {
    super(problem.message)
    this.problem = problem
  }
}

export function importHandlers ({ imports, runner, document, limits, batch, clock, closing }: ImportHandlerOptions): ImportHandlers {
  const checkers: Record<Collection, RowChecker> = { books: rowChecker(document, 'books'), students: rowChecker(document, 'students') }
  const now = () => new Date(clock()).toISOString()

  async function owned (request: FastifyRequest, id: string): Promise<StoredImport> {
    const found = await imports.get(id)
    const owner = ownerOf(request.caller)
    if (found === null || (owner !== null && found.keyId !== owner)) throw new NotFoundError('import', id)
    return found
  }

  /**
   * A retried upload: the same file into the same collection, mode and format answers the first import;
   * anything else is a 422 (the key was used for another request), the file then left unread. Either way nothing more is written.
   */
  async function replay (held: StoredImport, asked: Pick<Import, 'collection' | 'mode' | 'format'>, body: Readable): Promise<StoredImport> {
    if (held.collection !== asked.collection || held.mode !== asked.mode || held.format !== asked.format) {
      throw new IdempotencyKeyReusedError(`This Idempotency-Key was used for another import (${held.format === 'csv' ? 'CSV' : 'NDJSON'} into ${held.collection}, mode=${held.mode})`)
    }
    const hash = createHash('sha256')
    for await (const { chunk } of arriving(body)) hash.update(chunk)
    if (held.fingerprint === null) throw new IdempotencyKeyInUseError()
    if (held.fingerprint !== hash.digest('base64url')) throw new IdempotencyKeyReusedError()
    return held
  }

  /**
   * Reads, checks and stages the file, `batch` rows at a time, each time moving the import's counts on
   * (and renewing its lease). Returns the file's digest; throws Stopped when the import ends here.
   */
  async function receive ({ importId, collection, format }: { importId: string, collection: Collection, format: Import['format'] }, body: Readable, charge: (cost: number) => Promise<number | null>): Promise<string> {
    const checker = checkers[collection]
    const hash = createHash('sha256')
    let staged: StagedRow[] = []
    let problems: ImportProblem[] = []
    let counts = { read: 0, refused: 0, bytes: 0 }
    // The upload counted as one request; its rows count one more per thousand as they are read, or the
    // pieces its body arrives in (HTTP chunks, reads of the socket) if there are more: both cost the server.
    let read = 0
    let pieces = 0
    let billed = 0
    const bill = async (): Promise<void> => {
      const due = Math.floor(Math.max(read, pieces) / unitsPerRequest)
      if (due <= billed) return
      const resetIn = await charge(due - billed)
      billed = due
      if (resetIn !== null) {
        throw new Refused(new QuotaExceededError(resetIn))
      }
    }
    const arrived = (chunk: Buffer, count: number): Promise<void> | void => {
      counts.bytes += chunk.length
      hash.update(chunk)
      const before = pieces
      pieces += count
      return Math.floor(pieces / unitsPerRequest) > Math.floor(before / unitsPerRequest) ? bill() : undefined
    }
    const flush = async (): Promise<void> => {
      read += counts.read
      await bill()
      const repeats = await imports.stage(importId, staged)
      for (const { line, earlier, field } of repeats) {
        const name = field === 'id' ? names[collection].id : names[collection].unique
        problems.push({ line, type: '/problems/already-exists', detail: `repeats the ${name} of line ${earlier}`, pointer: `#/${name}` })
      }
      const current = await imports.update(importId, { ...counts, refused: counts.refused + repeats.length, problems }, runner.lease())
      ;[staged, problems, counts] = [[], [], { read: 0, refused: 0, bytes: 0 }]
      if (current.cancel_requested) throw new Stopped('cancelled', `Cancelled while the file was being received, after ${current.rows.read} rows; nothing was written.`, null)
    }
    try {
      for await (const row of fileRows(arriving(body), format, checker.shape, limits, arrived)) {
        counts.read++
        const checked = 'problem' in row ? [row.problem] : checker.check(row.line, row.fields)
        if (Array.isArray(checked)) {
          counts.refused++
          problems.push(...checked)
        } else {
          staged.push(checked)
        }
        if (counts.read === batch) await flush()
      }
      await flush()
    } catch (error) {
      if (error instanceof Stopped || error instanceof Refused) throw error
      if (error instanceof ImportTooLargeError) throw new Refused(new ApiError(413, '/problems/import-too-large', error.message, undefined, 'Content Too Large'))
      if (error instanceof InvalidHeaderError) throw new Refused(new ApiError(400, '/problems/invalid-import', error.message, error.columns, 'Invalid import'))
      if (error instanceof NotUtf8Error) throw new Refused(new ApiError(400, '/problems/invalid-import', error.message, undefined, 'Invalid import'))
      // The upload was cut, or the database failed: the import says so, the request fails as it would have.
      throw new Stopped('failed', 'The upload stopped before the end of the file; nothing was written. Upload the file again.', error as ApiError)
    }
    return hash.digest('base64url')
  }

  /** After the file: the rows whose values stored records hold are refused; in mode=all any refusal ends the import. */
  async function settle (importId: string): Promise<StoredImport> {
    const current = (await imports.get(importId))!
    const { kind, id, unique } = names[current.collection]
    const conflicts = await imports.conflicts(importId, current.collection)
    const problems = conflicts.map(({ line, field }): ImportProblem => {
      const name = field === 'id' ? id : unique
      return { line, type: '/problems/already-exists', detail: `Another ${kind} already has this ${name}`, pointer: `#/${name}` }
    })
    // A row may hold a stored record's id and another's unique value: refused once, both told.
    const lines = [...new Set(conflicts.map(c => c.line))]
    const refused = current.rows.refused + lines.length
    if (current.mode === 'all' && refused > 0) {
      await imports.unstage(importId)
      return imports.update(importId, {
        state: 'failed',
        refused: lines.length,
        problems,
        finishedAt: now(),
        detail: `${refused.toLocaleString('en-US')} of ${current.rows.read.toLocaleString('en-US')} rows were refused (see problems), so nothing was written (mode=all)`
      }, runner.lease())
    }
    if (lines.length > 0) await imports.unstage(importId, lines)
    const running = await imports.update(importId, { state: 'running', startedAt: now(), refused: lines.length, problems }, runner.lease())
    runner.run(importId)
    return running
  }

  return {
    async listImports (request) {
      // The contract's default (20) fills an absent limit during validation.
      const { limit = 20 } = request.query
      return { items: (await imports.list(ownerOf(request.caller), limit)).map(view) }
    },

    async createImport (request, reply) {
      const { collection, mode = 'all' } = request.query
      const { keyId, scopes } = request.caller as Extract<Caller, { kind: 'key' }>
      const scope = `${collection}:write` as const
      if (!scopes.includes(scope)) throw new MissingScopeError([scope])
      // The contract admits only its two media types (a 415 before this, for any other); the parser handed the body over unread.
      const format = mediaType(request.headers['content-type']) === 'text/csv' ? 'csv' : 'ndjson'
      const body = request.body as unknown as Readable
      const importId = uuidv7()
      const lease = runner.lease()
      const held = await imports.start({ import_id: importId, keyId, collection, mode, format, created_at: now(), idempotencyKey: keyOf(request) ?? null }, lease.runner, lease.until)
      if (held !== null) {
        const first = await replay(held, { collection, mode, format }, body)
        return reply.code(202).headers({ location: `/imports/${first.import_id}`, 'idempotent-replayed': 'true' }).send(view(first))
      }
      let answer: StoredImport
      try {
        // What the import was started with: no need to read it back.
        const fingerprint = await receive({ importId, collection, format }, body, async cost => request.chargeQuota(cost))
        await imports.update(importId, {}, runner.lease(), fingerprint)
        answer = await settle(importId)
      } catch (error) {
        if (error instanceof Refused) {
          // Its caller is answered a problem and never learns its id: it leaves nothing, in GET /imports either.
          await imports.discard(importId)
          if (error.problem instanceof QuotaExceededError) reply.header('retry-after', error.problem.resetIn)
          throw error.problem
        }
        if (!(error instanceof Stopped)) throw error
        await imports.unstage(importId)
        answer = await imports.update(importId, { state: error.state, finishedAt: now(), detail: error.detail, releaseKey: true }, runner.lease())
        if (error.answer !== null) throw error.answer
      }
      return reply.code(202).header('location', `/imports/${importId}`).send(view(answer))
    },

    async getImport (request, reply) {
      const id = recordId(request.params.import_id)
      const found = await owned(request, id)
      if (request.accepts().type(['application/json', 'text/event-stream']) !== 'text/event-stream') return view(found)
      reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-store').header('x-accel-buffering', 'no')
      if (request.method === 'HEAD') return reply.send()
      const stream = new PassThrough()
      // A frame now, then every second (whichever node writes the import), the last when it ends.
      let timer: NodeJS.Timeout | undefined
      const stop = () => {
        clearTimeout(timer)
        stream.end()
      }
      const tell = (current: StoredImport) => {
        if (stream.writableEnded) return
        stream.write(`event: import\ndata: ${JSON.stringify(view(current))}\n\n`)
        if (ended.has(current.state)) stream.end()
        // A failed read ends the stream: the client reconnects, or reads the import.
        else timer = setTimeout(() => { imports.get(id).then(next => tell(next!), stop) }, 1000)
      }
      closing.addEventListener('abort', stop, { once: true })
      request.raw.once('close', () => {
        clearTimeout(timer)
        closing.removeEventListener('abort', stop)
      })
      tell(found)
      // Asked while the node closes (its listener still open): one frame, and the end.
      if (closing.aborted) stop()
      return reply.send(stream)
    },

    async cancelImport (request, reply) {
      const id = recordId(request.params.import_id)
      const found = await owned(request, id)
      if (ended.has(found.state)) throw new ApiError(409, '/problems/import-ended', `The import has already ended (${found.state})`, undefined, 'Conflict')
      // All or nothing: once every row passed and writing began, stopping would leave part of the file written.
      if (found.mode === 'all' && found.state === 'running') {
        throw new ApiError(409, '/problems/import-ended', 'The import (mode=all) is writing rows that all passed their checks; cancelling now would leave it half written, so it runs to its end', undefined, 'Conflict')
      }
      return reply.code(202).send(view(await imports.update(id, { cancelRequested: true })))
    }
  }
}
