// List operations over HTTP: query parameters into a storage ListQuery, cursors bound to it, Link headers.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CursorCodec } from '../cursor.js'
import { QueryError, ValidationError } from '../errors.js'
import { fold, FOLD_VERSION } from '../search/fold.js'
import { parseSearch, printSearch, SearchSyntaxError } from '../search/query.js'
import { SearchTooBroadError } from '../storage/list-sql.js'
import type { ListQuery, Page, RecordStore } from '../storage/types.js'
import { Representations } from './representation.js'

// A page object stands for one query, limit and position: its answer, cursor and Link included, is fixed.
const pages = new Representations<Page<unknown>>()

/** How a list's query parameters map to storage's filters. */
export interface ListParameters {
  /** The list's path; cursors are signed with it, so a cursor of one list is foreign to another. */
  path: string
  /** Plural noun for messages. */
  plural: string
  /** Equality parameters → storage field, and how their values are normalised. */
  equals: Record<string, { field: string, normalise: (value: string) => string }>
  /** Range parameters: the storage field and the parameters of its two ends. */
  ranges: { field: string, min: string, max: string, instants?: boolean }[]
}

type Query = Record<string, string | number | string[] | undefined>
type ListRequest = FastifyRequest<{ Querystring: Query & { limit?: number, cursor?: string } }>

// Bumped with any change to how queries are normalised or bound, so that older cursors are refused as foreign.
const bindingVersion = 1

/** Folded text: what author names and the like are compared as. */
export const folded = fold
export const lowerCase = (value: string): string => value.toLowerCase()
export const asIs = (value: string): string => value

/** An RFC 3339 instant to the service's millisecond form, rounded up: [since, before) keeps its meaning for millisecond timestamps. */
function instant (parameter: string, text: string): string {
  const time = Date.parse(text)
  if (Number.isNaN(time)) throw new ValidationError('querystring', [{ parameter, detail: 'is not a valid instant' }])
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? ''
  const roundedUp = /[1-9]/.test(fraction.slice(3)) ? 1 : 0
  return new Date(time + roundedUp).toISOString()
}

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
      if (error instanceof SearchSyntaxError) throw new QueryError('invalid-search', 'q', error.message)
      throw error
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
    const ends = [minName, maxName].map(name => {
      const value = raw[name]
      if (value === undefined) return null
      const normal = instants === true ? instant(name, String(value)) : Number(value)
      parameters.push([name, String(normal)])
      return normal
    })
    const [min, max] = ends as [string | number | null, string | number | null]
    if (min === null && max === null) return []
    if (min !== null && max !== null && (instants === true ? min >= max : min > max)) {
      throw new QueryError('invalid-range', minName, instants === true
        ? `is not before ${maxName} (${String(min)} ≥ ${String(max)})`
        : `is greater than ${maxName} (${String(min)} > ${String(max)})`)
    }
    return [{ field, min, max }]
  })
  const sortName = typeof raw.sort === 'string' ? raw.sort : search === null ? 'created_at' : 'relevance'
  if (sortName === 'relevance' && search === null) throw new QueryError('unsupported-combination', 'sort', 'relevance needs q')
  parameters.push(['sort', sortName])
  const sort = { key: sortName.replace(/^-/, ''), descending: sortName.startsWith('-') }
  const query: ListQuery = { equals, ranges, search, sort }
  const binding = createHash('sha256').update(JSON.stringify([bindingVersion, FOLD_VERSION, list.path, parameters])).digest('base64url').slice(0, 16)
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

export async function listPage<T> (
  request: ListRequest,
  reply: FastifyReply,
  cursors: CursorCodec,
  store: RecordStore<T, never>,
  list: ListParameters
): Promise<FastifyReply> {
  const { query, parameters, binding } = parseQuery(request.query, list)
  // The contract's default (20) fills an absent limit during validation.
  const { limit = 20, cursor } = request.query
  let after: string | null = null
  if (cursor !== undefined) {
    const position = cursors.decode(list.path, cursor)
    if (position === null) throw new ValidationError('querystring', [{ detail: 'is not a cursor issued by this list', parameter: 'cursor' }])
    const separator = position.indexOf('~')
    if (position.slice(0, separator) !== binding) {
      throw new QueryError('cursor-mismatch', 'cursor', 'was issued for different filters, q or sort; repeat the request without cursor, or with the parameters that issued it')
    }
    after = position.slice(separator + 1)
  }
  let page: Page<T>
  try {
    page = await store.list(query, limit, after)
  } catch (error) {
    if (error instanceof SearchTooBroadError) {
      throw new QueryError('search-too-broad', 'sort', `q matches more than ${error.cap} ${list.plural}; sort by relevance or created_at, or narrow q`)
    }
    throw error
  }
  return pages.send(reply, page, () => {
    const nextCursor = page.after === null ? null : cursors.encode(list.path, `${binding}~${page.after}`)
    const body: { items: T[], next_cursor: string | null } = { items: page.items, next_cursor: nextCursor }
    if (nextCursor === null) return { body }
    const next = new URLSearchParams([['limit', String(limit)], ...parameters, ['cursor', nextCursor]])
    return { body, headers: { link: `<${list.path}?${next.toString()}>; rel="next"` } }
  })
}
