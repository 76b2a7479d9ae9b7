// Exports over HTTP: every record a list query selects, streamed as CSV or NDJSON from one snapshot.
import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { csvRow } from '../formats/csv.js'
import { ndjsonWriter } from '../formats/ndjson.js'
import { ApiError, QueryError } from '../http/errors.js'
import type { ListQuery, RecordStore } from '../storage/types.js'

export type ExportFormat = 'csv' | 'ndjson'

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

/** Every export running on this node takes one; each holds a snapshot (and on PostgreSQL a connection). */
export class ExportSlots {
  #running = 0
  constructor (readonly max: number) {}

  take (): boolean {
    if (this.#running === this.max) return false
    this.#running++
    return true
  }

  give (): void {
    this.#running--
  }
}

/** EXPORTS_MAX exports are running on this node; the reply carries Retry-After. */
export class ExportsBusyError extends ApiError {
  constructor (max: number) {
    super(503, '/problems/list-busy', `${max} exports are running on this node, as many as it runs at once; retry after Retry-After seconds`, undefined, 'Service Unavailable')
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
  slots: ExportSlots
  /** Whether to send Events-Cursor (the caller has a key). */
  withPosition: boolean
}

// Parameters of a page that an export, which reads everything from the start, has no use for.
const pageParameters = ['limit', 'cursor']

export async function sendExport ({ request, reply, store, query, format, plural, slots, withPosition }: ExportRequest): Promise<FastifyReply> {
  // `limit` has a default, so only the URL tells whether it was sent.
  const given = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '')
  const paging = pageParameters.find(name => given.has(name))
  if (paging !== undefined) throw new QueryError('/problems/unsupported-combination', paging, 'does not apply to an export (Accept: text/csv or application/x-ndjson), which streams every record selected; drop it')
  const bom = request.query.bom === true
  reply
    .type(mediaTypes[format])
    .header('content-disposition', `attachment; filename="${plural}.${format}"`)
    .header('cache-control', 'no-store')
  // HEAD asks what a GET would answer: the headers, with no snapshot to open.
  if (request.method === 'HEAD') return reply.send()
  if (!slots.take()) {
    reply.header('retry-after', 1)
    throw new ExportsBusyError(slots.max)
  }
  let exported
  try {
    exported = await store.export(query, withPosition)
  } catch (error) {
    slots.give()
    throw error
  }
  if (withPosition) reply.header('events-cursor', exported.position)
  const { fields } = exported
  const line = format === 'csv' ? csvRow : ndjsonWriter(fields)
  const batches = exported.batches[Symbol.asyncIterator]()
  const body = new Readable({
    // A batch or two ahead of the socket: memory stays flat however long the export.
    highWaterMark: 1 << 16,
    read () {
      batches.next().then(step => {
        if (step.done === true) {
          this.push(null)
          return
        }
        let text = ''
        for (const row of step.value) text += line(row)
        this.push(text)
      }, (error: unknown) => this.destroy(error as Error))
    },
    // At the end, on an error, or when the client goes away (Fastify destroys the body): the snapshot is released.
    destroy (error, done) {
      slots.give()
      batches.return!().then(() => done(error), done)
    }
  })
  if (format === 'csv') body.push((bom ? '\uFEFF' : '') + csvRow(fields))
  return reply.send(body)
}
