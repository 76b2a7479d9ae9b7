// Per-request logging: the one line per completed request, in pino's format from a template, written once per event-loop turn.
import { hostname } from 'node:os'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

export interface RequestLogger {
  /** An onResponse hook: queues the line `{"level":30,…,"msg":"request completed"}`. */
  hook (request: FastifyRequest, reply: FastifyReply, done: () => void): void
  /** Writes what is queued now (at close; otherwise at the end of the turn). */
  flush (): void
}

// Anything but printable ASCII other than '"' and '\': what JSON.stringify escapes, and beyond ASCII,
// which is rare in a request line and where telling a lone surrogate apart is not worth it.
const needsEscaping = /[^\x20\x21\x23-\x5b\x5d-\x7e]/

/** A JSON string literal: JSON.stringify costs five times a quick check, and nearly every value passes the check. */
function quoted (value: string | undefined): string {
  if (value === undefined) return 'null'
  return needsEscaping.test(value) ? JSON.stringify(value) : `"${value}"`
}

/** Milliseconds to the microsecond, from integers: printing a double's shortest form costs more than the whole line. */
function milliseconds (elapsed: number): string {
  const micros = Math.round(elapsed * 1000)
  const fraction = micros % 1000
  return `${(micros - fraction) / 1000}.${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}`
}

/** The trace a request belongs to, for its line; undefined when it belongs to none. */
export type TraceIdOf = (request: FastifyRequest) => string | undefined

// W3C Trace Context: version-traceid-parentid-flags in lower-case hex. A version after 00 may append
// fields after a '-' (the specification's forward compatibility); version ff and all-zero ids are invalid.
const traceparentPattern = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}(?:$|-)/
const zeroTraceId = '0'.repeat(32)
const zeroParentId = '0'.repeat(16)

/**
 * Without tracing, the trace of the caller's traceparent, if valid: the service records no span of
 * it, but the line can still be found from the caller's trace. None is made up for other requests,
 * since it would lead nowhere; the request id already names the line.
 */
export const incomingTraceId: TraceIdOf = request => {
  const header = request.headers.traceparent
  // Nearly every request has none: one property read, no pattern.
  if (typeof header !== 'string') return undefined
  const match = traceparentPattern.exec(header)
  if (match === null || match[1] === 'ff' || (match[1] === '00' && header.length !== 55) || match[2] === zeroTraceId || match[3] === zeroParentId) return undefined
  return match[2]
}

/**
 * The URL is logged with credentials masked (src/observability/log-redaction.ts); headers and bodies never are.
 * Logging each request through logger.info() and writing each line on its own cost about a sixth of
 * a GET's CPU (issue 6). Here the line comes from a template (every value a client controls is
 * quoted as JSON), and the lines of one event-loop turn reach `stream`, the logger's own
 * destination, in one write.
 */
export function requestLogger (stream: { write (lines: string): void }, redactUrl: (url: string) => string, traceIdOf: TraceIdOf = incomingTraceId): RequestLogger {
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":`
  let queued = ''
  const flush = () => {
    if (queued === '') return
    const lines = queued
    queued = ''
    stream.write(lines)
  }
  return {
    hook (request, reply, done) {
      if (queued === '') setImmediate(flush)
      // 32 hex digits, from a checked header or the tracer: never needs quoting.
      const traceId = traceIdOf(request)
      queued += `{"level":30,"time":${Date.now()}${base}${quoted(request.id)},${traceId === undefined ? '' : `"traceId":"${traceId}",`}"method":${quoted(request.method)},` +
        `"url":${quoted(redactUrl(request.url))},"statusCode":${reply.statusCode},"responseTime":${milliseconds(reply.elapsedTime)},` +
        `"remoteAddress":${quoted(request.ip)},"msg":"request completed"}\n`
      done()
    },
    flush
  }
}

/**
 * `request.log` for Fastify: a pino child stamped with the request id, made on its first line.
 * Fastify asks for one per request and nearly every request logs nothing through it, while pino's
 * child() cost about 1.5 % of a GET (issue 6).
 */
class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get #logger (): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options))
  }

  get level (): string { return this.#logger.level }
  set level (level: string) { this.#logger.level = level }
  fatal (...args: unknown[]): void { Reflect.apply(this.#logger.fatal, this.#logger, args) }
  error (...args: unknown[]): void { Reflect.apply(this.#logger.error, this.#logger, args) }
  warn (...args: unknown[]): void { Reflect.apply(this.#logger.warn, this.#logger, args) }
  info (...args: unknown[]): void { Reflect.apply(this.#logger.info, this.#logger, args) }
  debug (...args: unknown[]): void { Reflect.apply(this.#logger.debug, this.#logger, args) }
  trace (...args: unknown[]): void { Reflect.apply(this.#logger.trace, this.#logger, args) }
  silent (): void {}
  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger { return this.#logger.child(bindings, options) }
}

export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => new LazyChildLogger(logger, bindings, options)
