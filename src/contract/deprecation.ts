// Deprecations declared in the contract, announced on the wire: Deprecation (RFC 9745), Sunset (RFC 8594), Link rel="deprecation".
import type { FastifyRequest, onSendHookHandler, preValidationHookHandler, RouteOptions } from 'fastify'
import type { OpenApiDocument, Operation } from './openapi-document-types.js'

/** When a deprecation was announced and, if set, when the thing stops working: Unix seconds. */
export interface DeprecationDates {
  at: number
  sunset?: number
}

/** What a routed operation has deprecated, kept in its Fastify route config. */
export interface RouteDeprecation {
  /** The operation itself: every response announces it. */
  operation?: DeprecationDates
  /** Query and header parameters: announced when the request sends them. */
  parameters: (DeprecationDates & { in: 'query' | 'header', name: string })[]
  /** Request-body fields, as property paths: announced when the body has them. */
  fields: (DeprecationDates & { path: string[] })[]
  /** A list's exports by Accept (`x-deprecated-exports`): announced on an answer of an export type. */
  exports?: DeprecationDates
  /** The `Link` field value naming where the deprecation is explained. */
  link: string
}

/**
 * The operation extension of a list that still answers `Accept: text/csv` or `application/x-ndjson`
 * with an export, deprecated (its dates, beside `deprecated: true`): the served document no longer
 * declares those answers, so that generated clients type the list as a page; the service routes them
 * until the sunset (routedDocument).
 */
export const deprecatedExports = 'x-deprecated-exports'

/** The media types of those answers. */
export const exportTypes = ['text/csv', 'application/x-ndjson']

/** The minimum time between a deprecation and its sunset, by the policy in docs/versioning.md. */
export const minimumNoticeMonths = 6

// Dates in the contract: an RFC 3339 full-date (midnight UTC) or a UTC date-time to the second.
const datePattern = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}:\d{2}Z)?$/

/** Milliseconds since the epoch of a contract date, or undefined when it is not one. */
function parseDate (value: unknown): number | undefined {
  const match = typeof value === 'string' ? datePattern.exec(value) : null
  if (match === null) return undefined
  const time = Date.parse(match[2] === undefined ? `${value as string}T00:00:00Z` : value as string)
  // Date.parse rolls 2026-02-30 over into March; a date that does not read back is not a date.
  return Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== match[1] ? undefined : time
}

type Node = Record<string, unknown>
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null

/** Why the deprecation fields of `node` are incomplete or inconsistent, or undefined when they are not. */
function datesProblem (node: Node): string | undefined {
  const { deprecated, 'x-deprecated-at': at, 'x-sunset': sunset } = node
  if (deprecated !== true) {
    return at === undefined && sunset === undefined ? undefined : 'x-deprecated-at and x-sunset belong beside `deprecated: true`'
  }
  // Every request sends its path parameters: only the operations can say they are going away.
  if (node['in'] === 'path' || node['in'] === 'cookie') return `a ${node['in']} parameter cannot be deprecated on its own: deprecate the operations that take it`
  const atTime = parseDate(at)
  if (atTime === undefined) return `deprecated: true needs x-deprecated-at, the date the deprecation is announced ('YYYY-MM-DD', quoted), not ${JSON.stringify(at)}`
  if (sunset === undefined) return undefined
  const sunsetTime = parseDate(sunset)
  if (sunsetTime === undefined) return `x-sunset must be a date ('YYYY-MM-DD', quoted), not ${JSON.stringify(sunset)}`
  const announced = new Date(atTime)
  const earliest = announced.setUTCMonth(announced.getUTCMonth() + minimumNoticeMonths)
  return sunsetTime < earliest ? `x-sunset ${sunset as string} is less than ${minimumNoticeMonths} months after x-deprecated-at ${at as string}` : undefined
}

/**
 * Every place in `document` where a deprecation is declared half-way: `deprecated: true` without a
 * valid `x-deprecated-at`, a sunset too soon or malformed, the dates without `deprecated: true`, or
 * on a path or cookie parameter (no header could tell a client it used one).
 */
export function deprecationProblems (document: OpenApiDocument): string[] {
  const problems: string[] = []
  const visit = (node: unknown, pointer: string): void => {
    if (!isNode(node)) return
    const problem = datesProblem(node)
    if (problem !== undefined) problems.push(`${pointer}: ${problem}`)
    for (const [key, value] of Object.entries(node)) {
      // Examples are data: a `deprecated` field there says nothing about the contract.
      if (key !== 'example' && key !== 'examples') visit(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    }
  }
  visit(document, '#')
  return problems
}

/** The node a local `$ref` leads to (following chains); anything else as it is. */
function resolve (document: OpenApiDocument, node: unknown): unknown {
  while (isNode(node) && typeof node['$ref'] === 'string') {
    node = node['$ref'].slice(2).split('/').reduce<unknown>((n, key) => (n as Node)[key.replace(/~1/g, '/').replace(/~0/g, '~')], document)
  }
  return node
}

/** The dates of a node marked `deprecated: true` (checked by deprecationProblems first), else undefined. */
function datesOf (node: unknown): DeprecationDates | undefined {
  if (!isNode(node) || node['deprecated'] !== true) return undefined
  const sunset = parseDate(node['x-sunset'])
  return { at: parseDate(node['x-deprecated-at'])! / 1000, ...(sunset !== undefined && { sunset: sunset / 1000 }) }
}

/** The deprecated properties under `schema`, as paths; `ancestors` stops at a schema that contains itself. */
function deprecatedFields (document: OpenApiDocument, schema: unknown, path: string[], ancestors: Set<unknown>): RouteDeprecation['fields'] {
  const resolved = resolve(document, schema)
  if (!isNode(resolved) || !isNode(resolved['properties']) || ancestors.has(resolved)) return []
  const inside = new Set(ancestors).add(resolved)
  return Object.entries(resolved['properties']).flatMap(([name, property]) => {
    const dates = datesOf(resolve(document, property))
    return [...(dates === undefined ? [] : [{ ...dates, path: [...path, name] }]), ...deprecatedFields(document, property, [...path, name], inside)]
  })
}

/**
 * What `operation` (at `path`) has deprecated, or undefined when nothing; the document must have
 * passed deprecationProblems. The notes are the operation in Swagger UI, whose description says
 * what replaces it and when.
 */
export function routeDeprecation (document: OpenApiDocument, path: string, operation: Operation): RouteDeprecation | undefined {
  const item = document.paths[path] as { parameters?: unknown[] }
  const parameters: RouteDeprecation['parameters'] = [...item.parameters ?? [], ...operation['parameters'] as unknown[] ?? []].flatMap(p => {
    const parameter = resolve(document, p) as { in: string, name: string }
    const dates = datesOf(parameter)
    return dates !== undefined && (parameter.in === 'query' || parameter.in === 'header') ? [{ ...dates, in: parameter.in, name: parameter.name }] : []
  })
  const body = resolve(document, operation['requestBody']) as { content?: Record<string, { schema?: unknown }> } | undefined
  const fields = deprecatedFields(document, body?.content?.['application/json']?.schema, [], new Set())
  const own = datesOf(operation)
  const exports = datesOf(operation[deprecatedExports])
  if (own === undefined && exports === undefined && parameters.length === 0 && fields.length === 0) return undefined
  const tag = (operation['tags'] as string[] | undefined)?.[0] ?? 'default'
  return {
    ...(own !== undefined && { operation: own }),
    ...(exports !== undefined && { exports }),
    parameters,
    fields,
    link: `</docs#/${encodeURIComponent(tag)}/${encodeURIComponent(operation.operationId)}>; rel="deprecation"; type="text/html"`
  }
}

/** Whether `value` has the property at `path` (null counts: the client sent the field). */
function has (value: unknown, path: string[]): boolean {
  for (const key of path) {
    if (!isNode(value) || !Object.hasOwn(value, key)) return false
    value = value[key]
  }
  return true
}

/**
 * The hooks of a route with deprecations. What the request uses is seen before validation, which
 * fills in defaults (a `limit` the client never sent); the headers are set once the handler has
 * set its own, so that a page's Link (rel="next") keeps its place.
 */
function announce (deprecation: RouteDeprecation): { preValidation?: preValidationHookHandler, onSend: onSendHookHandler } {
  const { operation, exports, parameters, fields } = deprecation
  const used = new WeakMap<FastifyRequest, DeprecationDates>()
  const preValidation: preValidationHookHandler = (request, _reply, done) => {
    let at = Infinity
    let sunset = Infinity
    for (const item of [
      ...parameters.filter(p => p.in === 'query' ? has(request.query, [p.name]) : request.headers[p.name.toLowerCase()] !== undefined),
      ...fields.filter(f => has(request.body, f.path))
    ]) {
      at = Math.min(at, item.at)
      sunset = Math.min(sunset, item.sunset ?? Infinity)
    }
    if (at !== Infinity) used.set(request, { at, sunset })
    done()
  }
  const onSend: onSendHookHandler = (request, reply, payload, done) => {
    const use = used.get(request)
    const exported = exports !== undefined && exportTypes.some(type => String(reply.getHeader('content-type')).startsWith(type)) ? exports : undefined
    // The earliest dates win: the operation's own, or those of what the request used.
    const at = Math.min(operation?.at ?? Infinity, use?.at ?? Infinity, exported?.at ?? Infinity)
    if (at !== Infinity) {
      const sunset = Math.min(operation?.sunset ?? Infinity, use?.sunset ?? Infinity, exported?.sunset ?? Infinity)
      reply.header('deprecation', `@${at}`)
      if (sunset !== Infinity) reply.header('sunset', new Date(sunset * 1000).toUTCString())
      const link = reply.getHeader('link')
      reply.header('link', link === undefined ? deprecation.link : `${String(link)}, ${deprecation.link}`)
    }
    done(null, payload)
  }
  return parameters.length + fields.length > 0 ? { preValidation, onSend } : { onSend }
}

/**
 * An onRoute hook: a route whose config carries deprecations gets the hooks that announce them;
 * every other route gets nothing, so it pays nothing per request.
 */
export function announceDeprecations (route: RouteOptions): void {
  const deprecation = (route.config as { deprecation?: RouteDeprecation } | undefined)?.deprecation
  if (deprecation === undefined) return
  const hooks = announce(deprecation)
  route.onSend = [...[route.onSend ?? []].flat(), hooks.onSend]
  if (hooks.preValidation !== undefined) route.preValidation = [...[route.preValidation ?? []].flat(), hooks.preValidation]
}
