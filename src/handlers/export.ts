// Exports over HTTP: every record a list query selects, streamed as CSV or NDJSON from one snapshot, within limits per node and per caller.
import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { csvRow } from '../formats/csv.js'
import { ApiError, QueryError } from '../http/errors.js'
import { SnapshotsHeldError } from '../storage/export.js'
import { ListTimeoutError } from '../storage/list-sql.js'
import type { ExportFormat, ListQuery, RecordExport, RecordStore } from '../storage/types.js'

export type { ExportFormat }

const mediaTypes: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8; header=present', ndjson: 'application/x-ndjson' }
const negotiated = ['application/json', 'text/csv', 'application/x-ndjson']

/** The export an Accept header asks for, or null for a page of JSON (the first choice when several fit equally). */
export function exportFormat (request: FastifyRequest): ExportFormat | null {
  const accept = request.headers.accept
  // What nearly every client sends needs no negotiation.
  if (accept === undefined || accept === '*/*' || accept.startsWith('application/json')) return null
  const type = request.accepts().type(negotiated)
  return type === 'text/csv' ? 'csv' : type === 'application/x-ndjson' ? 'ndjson' : null
}

/** What exports may hold on a node, and for how long. */
export interface ExportLimits {
  /** EXPORTS_MAX: exports running at once on this node, whoever runs them. */
  max: number
  /** EXPORTS_PER_KEY: exports one API key runs at once on this node. */
  perKey: number
  /** EXPORTS_ANONYMOUS: exports callers without a key run at once on this node, at most one per address. */
  anonymous: number
  /** EXPORT_STALL_MS: ms a client may leave what was sent unread before its export is cut off. */
  stallMs: number
  /** EXPORT_MAX_DURATION_MS: ms an export runs at most. */
  maxDurationMs: number
}

/** Who runs an export: an API key, or a caller without one, known by its address. */
export type ExportHolder = { key: string } | { address: string }

// A second: exports end (or are cut) often enough, and a client that waits less only adds to the load.
const retryAfterSeconds = 1

/** The node, or its share for callers without a key, runs as many exports as it may; the reply carries Retry-After. */
export class ExportsBusyError extends ApiError {
  constructor (detail: string) {
    super(503, '/problems/list-busy', detail, undefined, 'Service Unavailable')
  }
}

/** The caller runs as many exports as it may; the reply carries Retry-After. */
export class TooManyExportsError extends ApiError {
  constructor (detail: string) {
    super(429, '/problems/too-many-exports', `${detail}; let one finish, or retry after Retry-After seconds`, undefined, 'Too Many Requests')
  }
}

/** One admitted export: its room given back once (when its snapshot is released), and cut if the service closes. */
export class Admission {
  readonly #giveBack: () => void
  #released = false
  #cut: (() => void) | null = null
  #cutOff = false

  constructor (giveBack: () => void) {
    this.#giveBack = giveBack
  }

  release (): void {
    if (this.#released) return
    this.#released = true
    this.#giveBack()
  }

  /** How the export is ended when the service closes; called at once if it is closing already. */
  onCut (cut: () => void): void {
    this.#cut = cut
    if (this.#cutOff) cut()
  }

  cut (): void {
    this.#cutOff = true
    this.#cut?.()
  }
}

/**
 * This node's running exports. Each holds a snapshot (on SQLite a thread, on PostgreSQL a connection)
 * until its client has read it all, so they are few: EXPORTS_MAX on the node, EXPORTS_PER_KEY for one
 * key, and for callers without a key a pool of their own (EXPORTS_ANONYMOUS), one per address, so that
 * they can never take every export from the callers with keys.
 */
export class Exports {
  readonly limits: ExportLimits
  readonly #running = new Set<Admission>()
  #anonymous = 0
  readonly #perHolder = new Map<string, number>()

  constructor (limits: ExportLimits) {
    this.limits = limits
  }

  /** Room for one more export of `holder`, or the refusal it gets: its own limit first (429), then the node's (503). */
  admit (holder: ExportHolder): Admission {
    const anonymous = 'address' in holder
    const name = anonymous ? `address ${holder.address}` : `key ${holder.key}`
    const own = this.#perHolder.get(name) ?? 0
    if (anonymous && own > 0) throw new TooManyExportsError('An export from this address is running on this node, as many as a caller without an API key may run at once')
    if (own >= this.limits.perKey) throw new TooManyExportsError(`This API key runs ${own} exports on this node, as many as one key may run at once`)
    if (anonymous && this.#anonymous >= this.limits.anonymous) {
      throw new ExportsBusyError(`${this.#anonymous} exports by callers without an API key are running on this node, as many as it runs for them at once; retry after Retry-After seconds, or send an API key`)
    }
    if (this.#running.size >= this.limits.max) throw new ExportsBusyError(`${this.#running.size} exports are running on this node, as many as it runs at once; retry after Retry-After seconds`)
    this.#perHolder.set(name, own + 1)
    if (anonymous) this.#anonymous++
    const admission: Admission = new Admission(() => {
      this.#running.delete(admission)
      const left = this.#perHolder.get(name)! - 1
      if (left === 0) this.#perHolder.delete(name)
      else this.#perHolder.set(name, left)
      if (anonymous) this.#anonymous--
    })
    this.#running.add(admission)
    return admission
  }

  /** Exports running now (for tests and metrics). */
  get size (): number {
    return this.#running.size
  }

  /** Cuts every running export (the service is closing): each client sees its export end unfinished. */
  closeAll (): void {
    for (const admission of this.#running) admission.cut()
  }
}

export interface ExportRequest {
  request: FastifyRequest<{ Querystring: { bom?: boolean } }>
  reply: FastifyReply
  store: RecordStore<unknown, never>
  query: ListQuery
  format: ExportFormat
  /** The collection's name, for the file a browser saves. */
  plural: string
  exports: Exports
  /** Whether to send Events-Cursor (the caller has a key). */
  withPosition: boolean
}

// Parameters of a page that an export, which reads everything from the start, has no use for.
const pageParameters = ['limit', 'cursor']

/** The problem a failure to open an export, or to read its first rows, is answered with. */
function refusal (error: unknown, reply: FastifyReply): unknown {
  if (error instanceof SnapshotsHeldError) {
    reply.header('retry-after', retryAfterSeconds)
    return new ExportsBusyError('Exports wait for the ones running to end: they hold the database\'s write-ahead log, which has grown past its limit; retry after Retry-After seconds')
  }
  if (!(error instanceof ListTimeoutError)) return error
  reply.header('retry-after', retryAfterSeconds)
  return new ExportsBusyError(`The export's first rows were not read within ${error.budgetMs} ms while the service is busy with other lists; retry after Retry-After seconds, or narrow the query`)
}

export async function sendExport ({ request, reply, store, query, format, plural, exports, withPosition }: ExportRequest): Promise<FastifyReply> {
  // `limit` has a default, so only the URL tells whether it was sent.
  const given = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '')
  const paging = pageParameters.find(name => given.has(name))
  if (paging !== undefined) throw new QueryError('/problems/unsupported-combination', paging, 'does not apply to an export, which streams every record selected; drop it')
  const bom = request.query.bom === true
  const file = () => reply
    .type(mediaTypes[format])
    .header('content-disposition', `attachment; filename="${plural}.${format}"`)
    .header('cache-control', 'no-store')
  // HEAD asks what a GET would answer: the headers, with no snapshot to open.
  if (request.method === 'HEAD') return file().send()
  let admission: Admission
  try {
    admission = exports.admit(request.caller.kind === 'key' ? { key: request.caller.keyId } : { address: request.ip })
  } catch (error) {
    reply.header('retry-after', retryAfterSeconds)
    throw error
  }
  let exported: RecordExport
  let first: IteratorResult<string>
  try {
    exported = await store.export(query, { format, feedPosition: withPosition, idleMs: exports.limits.stallMs })
  } catch (error) {
    admission.release()
    throw refusal(error, reply)
  }
  // Read before anything is sent, so that an export the service cannot read in time is a 503, not a file cut short.
  try {
    first = await exported.chunks.next()
  } catch (error) {
    released(exported, admission)
    throw refusal(error, reply)
  }
  // Only now: a refusal above is a problem, not a file to save.
  file()
  if (withPosition) reply.header('events-cursor', exported.position)
  const header = format === 'csv' ? (bom ? '\uFEFF' : '') + csvRow(exported.fields) : ''
  return reply.send(exportBody(exported, header, first, exports.limits, admission))
}

/** Gives the export's room back once its snapshot is released (which a statement still running may delay). */
function released (exported: RecordExport, admission: Admission): void {
  exported.chunks.return!().then(() => admission.release(), () => admission.release())
}

/**
 * The response body: chunks read as the client takes them, a chunk or two ahead (memory stays flat
 * however long the export). It is cut off (the body ends without its last chunk, which clients report
 * as an error) when the client leaves what was sent unread for EXPORT_STALL_MS, when it has run
 * EXPORT_MAX_DURATION_MS, or when the service closes; on every end the snapshot is released.
 */
function exportBody (exported: RecordExport, header: string, first: IteratorResult<string>, { stallMs, maxDurationMs }: ExportLimits, admission: Admission): Readable {
  const { chunks } = exported
  let stall: NodeJS.Timeout | undefined
  // A push beyond the high-water mark: the client has not taken what was sent, and has until the stall deadline to.
  const offer = (text: string) => {
    if (body.push(text)) return
    clearTimeout(stall)
    stall = setTimeout(() => body.destroy(), stallMs)
  }
  const body: Readable = new Readable({
    highWaterMark: 1 << 16,
    // Not called again before this read's push (Readable's own rule).
    read () {
      clearTimeout(stall)
      chunks.next().then(step => {
        // The client went away while the chunk was read.
        if (body.destroyed) return
        if (step.done === true) body.push(null)
        else offer(step.value)
      }, (error: unknown) => body.destroy(error as Error))
    },
    // At the end, on an error, when the client goes away (Fastify destroys the body), or cut off.
    destroy (error, done) {
      clearTimeout(stall)
      clearTimeout(lifetime)
      released(exported, admission)
      done(error)
    }
  })
  const lifetime = setTimeout(() => body.destroy(), maxDurationMs)
  admission.onCut(() => body.destroy())
  if (header !== '') offer(header)
  if (first.done === true) body.push(null)
  else offer(first.value)
  return body
}
