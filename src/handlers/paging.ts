// List operations over HTTP: query parameters into a storage ListQuery, cursors bound to it, Link headers.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Scope } from '../access/api-keys.js'
import type { CursorCodec } from '../http/cursor.js'
import { ListBusyError, ListQueueFullError, QueryError, ValidationError } from '../http/errors.js'
import { FOLD_VERSION } from '../domain/search/fold.js'
import { parseSearch, printSearch, type SearchSyntaxError } from '../domain/search/query.js'
import { TooManyWaitingError } from '../storage/fair-queue.js'
import { ListTimeoutError, SearchTooBroadError } from '../storage/list-sql.js'
import type { ListCaller, ListedPage, ListQuery, RecordStore } from '../storage/types.js'
import { Representations } from './representation.js'
import { type ExportFormat, exportFormat, type Exports, sendExport } from './export.js'

// A page's items (an array a cached page keeps) stand for one query, limit and position: its answer,
// cursor and Link included, is fixed.
const pages = new Representations<unknown[]>()

/** How a list's query parameters map to storage's filters. */
export interface ListParameters {
  /** The list's path; cursors are signed with it, so a cursor of one list is foreign to another. */
  path: string
  /** Plural noun for messages. */
  plural: string
  /** The scope that reads the collection, and so its events: only a key holding it is told feed positions. */
  readScope: Scope
  /** Equality parameters → storage field, and how their values are normalised. */
  equals: Record<string, { field: string, normalise: (value: string) => string }>
  /** Range parameters: the storage field and the parameters of its two ends. */
  ranges: { field: string, min: string, max: string, instants?: boolean }[]
}

/**
 * Whether the answer tells the caller its position in the change feed (Events-Cursor): only a key that
 * may read the collection's events; the position, which moves with every write, would tell anyone else
 * how often the service is written to (students enrolled included).
 */
function followsFeed (request: FastifyRequest, list: ListParameters): boolean {
  return request.caller.kind === 'key' && request.caller.scopes.includes(list.readScope)
}

type Query = Record<string, string | number | boolean | string[] | undefined>
type ListRequest = FastifyRequest<{ Querystring: Query & { limit?: number, cursor?: string, bom?: boolean } }>

// Bumped with any change to how queries are normalised or bound, so that older cursors are refused as foreign.
const bindingVersion = 1

export const lowerCase = (value: string): string => value.toLowerCase()
export const asIs = (value: string): string => value

/**
 * An RFC 3339 instant in the service's millisecond form, rounded up ([since, before) keeps its meaning for
 * millisecond timestamps), and exactly: its millisecond and the digits after it, for comparing two instants.
 */
function instant (parameter: string, text: string): { normal: string, exact: [number, string] } {
  const time = Date.parse(text)
  if (Number.isNaN(time)) throw new ValidationError('querystring', [{ parameter, detail: 'is not a valid instant' }])
  const beyond = (/\.(\d+)/.exec(text)?.[1] ?? '').slice(3).replace(/0+$/, '')
  return { normal: new Date(time + (beyond === '' ? 0 : 1)).toISOString(), exact: [time, beyond] }
}

/** Whether instant `a` is at or after `b`; within one millisecond the digits after it decide (rounded up, 12:00:00.0001 and 12:00:00.0009 would be one). */
function notBefore ([timeA, beyondA]: [number, string], [timeB, beyondB]: [number, string]): boolean {
  const width = Math.max(beyondA.length, beyondB.length)
  return timeA !== timeB ? timeA > timeB : beyondA.padEnd(width, '0') >= beyondB.padEnd(width, '0')
}

/** One end of a range: its canonical value, and for an instant its exact value. */
interface End { normal: string | number, exact: [number, string] | null }

interface ParsedQuery {
  query: ListQuery
  /** The query's canonical parameters, in a fixed order, for the next page's Link. */
  parameters: [string, string][]
  /** Digest of everything that makes the query what it is, bar `limit`. */
  binding: string
}

function parseQuery (raw: Query, list: ListParameters): ParsedQuery {
  const parameters: [string, string][] = []
  let search = null
  if (typeof raw.q === 'string') {
    try {
      search = parseSearch(raw.q)
    } catch (error) {
      // A SearchSyntaxError, the only error parseSearch throws on any string (test/search.test.ts's property).
      throw new QueryError('/problems/invalid-search', 'q', (error as SearchSyntaxError).message)
    }
    parameters.push(['q', printSearch(search)])
  }
  const equals = Object.entries(list.equals).flatMap(([name, { field, normalise }]) => {
    const given = raw[name]
    if (given === undefined) return []
    const values = [...new Set((Array.isArray(given) ? given : [String(given)]).map(normalise))].sort()
    for (const value of values) parameters.push([name, value])
    return [{ field, values }]
  })
  const ranges = list.ranges.flatMap(({ field, min: minName, max: maxName, instants }) => {
    const [minEnd, maxEnd] = [minName, maxName].map(name => {
      const value = raw[name]
      if (value === undefined) return null
      const end = instants === true ? instant(name, String(value)) : { normal: Number(value), exact: null }
      parameters.push([name, String(end.normal)])
      return end
    }) as [End | null, End | null]
    const [min, max] = [minEnd?.normal ?? null, maxEnd?.normal ?? null]
    if (minEnd === null && maxEnd === null) return []
    if (minEnd !== null && maxEnd !== null && (minEnd.exact !== null && maxEnd.exact !== null ? notBefore(minEnd.exact, maxEnd.exact) : minEnd.normal > maxEnd.normal)) {
      throw new QueryError('/problems/invalid-range', minName, instants === true
        ? `is not before ${maxName} (${String(min)} ≥ ${String(max)})`
        : `is greater than ${maxName} (${String(min)} > ${String(max)})`)
    }
    return [{ field, min, max }]
  })
  const sortName = typeof raw.sort === 'string' ? raw.sort : search === null ? 'created_at' : 'relevance'
  if (sortName === 'relevance' && search === null) throw new QueryError('/problems/unsupported-combination', 'sort', 'relevance needs q')
  parameters.push(['sort', sortName])
  const sort = { key: sortName.replace(/^-/, ''), descending: sortName.startsWith('-') }
  const query: ListQuery = { equals, ranges, search, sort }
  // Relevance positions name a tier since relevance became tiers: a cursor issued before is another query's.
  const version = sort.key === 'relevance' ? [bindingVersion, 'tiers'] : [bindingVersion]
  const binding = createHash('sha256').update(JSON.stringify([...version, FOLD_VERSION, list.path, parameters])).digest('base64url').slice(0, 16)
  return { query, parameters, binding }
}

/**
 * The cursor this service would issue for `position` (a storage position, e.g. `{"k":["500000"]}`) in the
 * list answering `rawQuery` (query parameters as given, `limit` and `cursor` aside): for tools that
 * must start deep in a list without paging there, such as scripts/bench.mjs.
 */
export function signCursor (cursors: CursorCodec, list: ListParameters, rawQuery: Query, position: string): string {
  return cursors.encode(list.path, `${parseQuery(rawQuery, list).binding}~${position}`)
}

/** What every list needs besides its records: cursors to sign, and the node's room for exports. */
export interface ListContext {
  cursors: CursorCodec
  exports: Exports
}

/** An export of everything `list`'s query selects, in the format its path names (`…/export.csv`, `…/export.ndjson`). */
export async function listExport<T> (
  request: ListRequest,
  reply: FastifyReply,
  { exports }: ListContext,
  store: RecordStore<T, never>,
  list: ListParameters,
  format: ExportFormat
): Promise<FastifyReply> {
  const { query } = parseQuery(request.query, list)
  return sendExport({ request, reply, store, query, format, plural: list.plural, exports, withPosition: followsFeed(request, list) })
}

/** A page of `list`, or, asked for by Accept (deprecated: `x-deprecated-exports` in openapi.yaml), its export. */
export async function listPage<T> (
  request: ListRequest,
  reply: FastifyReply,
  { cursors, exports }: ListContext,
  store: RecordStore<T, never>,
  list: ListParameters
): Promise<FastifyReply> {
  const { query, parameters, binding } = parseQuery(request.query, list)
  // Either answer depends on Accept: a cache must keep them apart.
  const vary = reply.getHeader('vary')
  reply.header('vary', vary === undefined ? 'Accept' : `${String(vary)}, Accept`)
  const format = exportFormat(request)
  if (request.query.bom !== undefined && format !== 'csv') throw new QueryError('/problems/unsupported-combination', 'bom', `applies only to a CSV export (${list.path}/export.csv)`)
  if (format !== null) return sendExport({ request, reply, store, query, format, plural: list.plural, exports, withPosition: followsFeed(request, list) })
  // The contract's default (20) fills an absent limit during validation.
  const { limit = 20, cursor } = request.query
  let after: string | null = null
  if (cursor !== undefined) {
    const position = cursors.decode(list.path, cursor)
    if (position === null) throw new ValidationError('querystring', [{ detail: 'is not a cursor issued by this list', parameter: 'cursor' }])
    const separator = position.indexOf('~')
    if (position.slice(0, separator) !== binding) {
      throw new QueryError('/problems/cursor-mismatch', 'cursor', 'was issued for different filters, q or sort; repeat the request without cursor, or with the parameters that issued it')
    }
    after = position.slice(separator + 1)
  }
  // Read with the page: every change after this position is either in the page or after it in the
  // feed, so a client that lists, then follows the feed from here, misses nothing.
  const withPosition = followsFeed(request, list)
  // Costly pages take turns per caller: a key, or else the client's address (as the rate limit counts them).
  const caller: ListCaller = request.caller.kind === 'key' ? { id: request.caller.keyId, anonymous: false } : { id: request.ip, anonymous: true }
  let page: ListedPage<T>
  try {
    page = await store.list(query, limit, after, withPosition, caller)
  } catch (error) {
    if (error instanceof SearchTooBroadError) {
      throw new QueryError('/problems/search-too-broad', 'sort', `q matches more than ${error.cap} ${list.plural}; sort by relevance or created_at, or narrow q`)
    }
    if (error instanceof ListTimeoutError) {
      // A second: the readers free up within the budget, and a client that waits less only adds to the queue.
      reply.header('retry-after', 1)
      throw new ListBusyError(error.budgetMs)
    }
    if (error instanceof TooManyWaitingError) {
      // The caller's own pages ahead of this one are answered within a budget, most within a second.
      reply.header('retry-after', 1)
      throw new ListQueueFullError(error.perCaller)
    }
    throw error
  }
  if (withPosition) reply.header('events-cursor', page.position)
  return pages.send(reply, page.items, () => {
    const nextCursor = page.after === null ? null : cursors.encode(list.path, `${binding}~${page.after}`)
    const body: { items: T[], next_cursor: string | null } = { items: page.items, next_cursor: nextCursor }
    if (nextCursor === null) return { body }
    const next = new URLSearchParams([['limit', String(limit)], ...parameters, ['cursor', nextCursor]])
    return { body, headers: { link: `<${list.path}?${next.toString()}>; rel="next"` } }
  })
}
