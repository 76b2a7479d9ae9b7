// HTTP rules the contract cannot state: 405 with Allow, problem 404, 406 on Accept, strict query strings.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler, preParsingHookHandler, preValidationHookHandler } from 'fastify'
import type { ProblemError } from '../contract/api-types.js'
import { maxProblems } from '../formats/i-json.js'
import type { WorkMeter } from '../formats/work-meter.js'
import { ApiError, ValidationError } from './errors.js'
import { sendProblem } from './problems.js'

const jsonTypes = ['application/json', 'application/problem+json']

/** The media types a route answers with: its 2xx types as the contract lists them, and problem+json. */
function servedTypes (response: unknown): string[] {
  const successes = Object.entries(response as Record<string, { content?: Record<string, unknown> }>)
    .filter(([status]) => status.startsWith('2'))
  const types = successes.flatMap(([, { content = {} }]) => Object.keys(content))
  return [...new Set([...types.length === 0 ? ['application/json'] : types, 'application/problem+json'])]
}

/** 406 before any work is done when the client accepts none of the route's media types. */
function acceptable (served: string[]): onRequestHookHandler {
  // The Accept values nearly every client sends need no negotiation (which costs a parse per request).
  const plainlyAcceptable = new Set([undefined, '*/*', ...served])
  const types = served.join(' or ')
  // A callback hook, not an async one: it runs on every request, and a promise per hook is measurable.
  return (request, reply, done) => {
    if (!plainlyAcceptable.has(request.headers.accept) && request.accepts().type(served) === false) {
      sendProblem(reply, { type: 'about:blank', status: 406, detail: `This operation answers only with ${types}` })
      return
    }
    done()
  }
}
// Shared by the routes that answer JSON, which are all but the event stream.
const jsonAcceptable = acceptable(jsonTypes)

/** A query name or value as text: `+` is a space, and a `%` that starts no escape stands for itself, as the router reads them. */
function decodeQueryPart (raw: string): string {
  return decodeURIComponent(raw.replace(/\+/g, ' ').replace(/%(?![0-9A-Fa-f]{2})/g, '%25'))
}

const notUtf8 = 'is not valid UTF-8 once its %-escapes are decoded'

/**
 * The query parameters of `url` whose escapes are not UTF-8, at most 100 (Problem.errors' maxItems):
 * a 16 KiB query of `%FF&` would otherwise be answered with 4,000 of them. Linear in the URL; `meter`
 * is told the characters read, for tests.
 */
export function queryEncodingProblems (url: string, meter: WorkMeter = () => {}): ProblemError[] {
  const start = url.indexOf('?')
  meter(url.length)
  // Only escapes can spell bytes that are not UTF-8; most queries have none, and cost one search.
  if (start === -1 || !url.includes('%', start)) return []
  const problems: ProblemError[] = []
  for (let from = start + 1; from <= url.length && problems.length < maxProblems;) {
    let end = url.indexOf('&', from)
    if (end === -1) end = url.length
    const pair = url.slice(from, end)
    const at = pair.indexOf('=')
    const [name, value] = at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)]
    // What each step reads: the search for `&`, the one for `=`, then each part's escapes twice and its decoding.
    meter((end - from + 1) + (at === -1 ? pair.length : at + 1) + 3 * pair.length)
    const decoded = [name, value].map(part => { try { return decodeQueryPart(part) } catch { return null } })
    // A name that is not UTF-8 either is named as it was sent.
    if (decoded.includes(null)) problems.push({ parameter: decoded[0] ?? name, detail: notUtf8 })
    from = end + 1
  }
  return problems
}

/**
 * The router decodes bytes that are not UTF-8 into U+FFFD, so `q=%C3%28` would search for text the
 * client never sent (and match nothing): a parameter whose escapes are not UTF-8 is a 400 naming it,
 * before the body is read.
 */
const utf8Query: preParsingHookHandler = async request => {
  const problems = queryEncodingProblems(request.url)
  if (problems.length > 0) throw new ValidationError('querystring', problems)
}

const bodyRequired: preValidationHookHandler = async request => {
  if (request.body === undefined) throw new ValidationError('body', [{ detail: 'is required', pointer: '#' }])
}

/** Bodies an operation reads as they arrive (files): its handler reads them row by row, in constant memory. */
const streamedTypes = ['text/csv', 'application/x-ndjson']

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media types the operation's body may have (for a 415's words); JSON when absent. */
    bodyTypes?: string[]
    /** The body is handed to the handler unread, as a stream (a file to import). */
    streamsBody?: boolean
  }
}

/**
 * A streamed body of a type the operation does not declare is a 415 before it is read: JSON, say,
 * would otherwise be parsed whole, only to be refused.
 */
function declaredBody (types: string[]): preParsingHookHandler {
  return (request, _reply, payload, done) => {
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
    if (types.includes(type)) done(null, payload)
    else done(new ApiError(415, 'about:blank', `The request body must be ${types.join(' or ')}`))
  }
}

/**
 * Registers `operations` (the routes of openapi.yaml) in a context of their own, so that these rules
 * apply to them and not to the docs; installs the 404/405 handler for every other request.
 */
export async function registerOperations (app: FastifyInstance, operations: FastifyPluginAsync): Promise<void> {
  const allowed: { pattern: RegExp, methods: Set<string> }[] = []

  await app.register(async context => {
    context.addHook('onRoute', route => {
      const pattern = new RegExp('^' + route.url.replace(/:[^/]+/g, '[^/]+') + '$')
      let entry = allowed.find(a => a.pattern.source === pattern.source)
      if (entry === undefined) allowed.push(entry = { pattern, methods: new Set() })
      for (const method of [route.method].flat()) entry.methods.add(method)

      // Unknown query parameters are refused (400), not ignored: a typo must not pass silently.
      route.schema = {
        ...route.schema,
        querystring: { type: 'object', properties: {}, ...(route.schema?.querystring as object), additionalProperties: false }
      }
      // The glue runs security as a preHandler, after the body is parsed and validated; run it first
      // instead, so that an anonymous caller learns nothing from a 400. An operation without security
      // would be open to all: refuse to start rather than serve it.
      if (route.preHandler === undefined) throw new Error(`${route.method} ${route.url} declares no security in openapi.yaml`)
      const served = servedTypes(route.schema.response)
      const notAcceptable = served.join() === jsonTypes.join() ? jsonAcceptable : acceptable(served)
      route.onRequest = [notAcceptable, ...[route.onRequest ?? []].flat(), ...[route.preHandler].flat()]
      delete route.preHandler
      const content = (route.schema.body as { content?: Record<string, unknown> } | undefined)?.content ?? {}
      const bodyTypes = Object.keys(content)
      route.config = { ...route.config, bodyTypes }
      const streams = bodyTypes.some(type => streamedTypes.includes(type))
      if (streams) {
        // Validated row by row by the handler: validating the body whole would mean holding it whole.
        delete route.schema.body
        route.config = { ...route.config, streamsBody: true }
      }
      // Fastify validates a body only when one was sent; the contract requires it, so an empty POST is a 400, not a crash.
      route.preParsing = [utf8Query, ...streams ? [declaredBody(bodyTypes)] : [], ...[route.preParsing ?? []].flat()]
      if (route.schema.body !== undefined) route.preValidation = [bodyRequired, ...[route.preValidation ?? []].flat()]
    })
    await context.register(operations)
  })

  answerUnrouted(app, (request, reply) => {
    const query = request.url.indexOf('?')
    const path = query === -1 ? request.url : request.url.slice(0, query)
    const match = allowed.find(a => a.pattern.test(path))
    if (match === undefined) {
      // The two collections live under different prefixes (/books, /api/students): the other spelling of a near miss is named.
      const other = path.startsWith('/api/') ? path.slice('/api'.length) : `/api${path}`
      const near = allowed.some(a => a.pattern.test(other)) ? `; did you mean ${other}?` : ''
      return sendProblem(reply, { type: 'about:blank', status: 404, detail: `Nothing is served at ${path}${near}` })
    }
    const allow = [...match.methods].sort().join(', ')
    reply.header('allow', allow)
    return sendProblem(reply, { type: 'about:blank', status: 405, detail: `${request.method} is not allowed here; allowed: ${allow}` })
  })
}

/**
 * Makes `answer` the not-found handler, and has it answer as soon as the request is routed, before the
 * body: Fastify reads and parses the body of a request no route takes (a 404, a 405, an OPTIONS) before
 * calling the not-found handler, for nothing, and before anything checks who is calling. The body is
 * left unread, so the answer closes the connection, which drops the rest of the body until it ends or
 * REQUEST_TIMEOUT cuts it off (src/http/connections.ts).
 */
export function answerUnrouted (app: FastifyInstance, answer: (request: FastifyRequest, reply: FastifyReply) => unknown): void {
  app.setNotFoundHandler(answer)
  // After the hooks registered before (the request id, the caller and the quota, on the API port).
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404) answer(request, reply)
    else done()
  })
}
