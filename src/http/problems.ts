// Every error leaves as RFC 9457 problem+json: the error handler, 404/405 and 406 all answer through here.
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Problem, ProblemError } from '../contract/api-types.js'
import { ApiError, MissingScopeError, problemOf, type RequestPart } from './errors.js'
import { requestErrorDetail, validationError } from './problem-details.js'

// The maxLength of each string of the Problem and ProblemError schemas in openapi.yaml (a test
// compares them): a problem echoes what the client sent (its URL, a field's name), which may be longer.
const limits = { detail: 2000, instance: 2000, errorDetail: 500, pointer: 500, parameter: 100 }
/** The maxItems of Problem.errors: each thrower caps its own list; this holds whatever one fails to. */
const errorsMax = 100

/** `text` cut to `max` characters, the cut marked with an ellipsis. */
function clip (text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + '…'
}

function clipError ({ detail, pointer, parameter }: ProblemError): ProblemError {
  return {
    detail: clip(detail, limits.errorDetail),
    ...(pointer !== undefined && { pointer: clip(pointer, limits.pointer) }),
    ...(parameter !== undefined && { parameter: clip(parameter, limits.parameter) })
  }
}

// RFC 9110's names, the same on every Node version (Node 20's table still says "Payload Too Large").
const titles: Record<number, string> = { 413: 'Content Too Large', 422: 'Unprocessable Content' }
export const titleOf = (status: number): string => titles[status] ?? STATUS_CODES[status]!

declare module 'fastify' {
  interface FastifyInstance {
    /** Masks credentials in text a problem echoes from the request (src/observability/log-redaction.ts). */
    redact: (text: string) => string
  }
}

/**
 * A problem echoes what the client sent (its URL, a path segment, a parameter's or member's name):
 * what looks like a credential is masked there as in the log, since responses too are kept by proxies and clients' logs.
 */
export function sendProblem (reply: FastifyReply, problem: Omit<Problem, 'title' | 'instance'> & { title?: string }): FastifyReply {
  const { redact } = reply.server
  const { errors } = problem
  let { detail } = problem
  if (errors !== undefined && errors.length > errorsMax) detail = `${detail ?? titleOf(problem.status)} (errors lists the first ${errorsMax} of ${errors.length})`
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send({
      title: titleOf(problem.status),
      instance: clip(redact(reply.request.url), limits.instance),
      ...problem,
      ...(detail !== undefined && { detail: clip(redact(detail), limits.detail) }),
      ...(errors !== undefined && { errors: errors.slice(0, errorsMax).map(error => clipError(redactError(error, redact))) })
    })
}

function redactError ({ detail, pointer, parameter }: ProblemError, redact: (text: string) => string): ProblemError {
  return {
    detail: redact(detail),
    ...(pointer !== undefined && { pointer: redact(pointer) }),
    ...(parameter !== undefined && { parameter: redact(parameter) })
  }
}

const clientErrors: Record<string, { status: number, detail: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time; send it again, faster' },
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'The request headers are larger than the server accepts (16 KiB in all)' }
}

/** Node's refusals before a request is routed (timeouts, oversized or malformed heads), as problems. */
export function clientErrorHandler (error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const { status, detail } = clientErrors[error.code ?? ''] ?? { status: 400, detail: 'The request is not valid HTTP/1.1' }
  if (socket.writable) {
    const body = JSON.stringify({ type: 'about:blank', title: titleOf(status), status, detail })
    socket.write(`HTTP/1.1 ${status} ${titleOf(status)}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}

export function errorHandler (error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // fastify-openapi-glue wraps what a security handler throws in its SecurityError, under `errors`,
  // one per alternative the operation allows: a key lacking each alternative's scope is told of them all.
  const refusals = (error as { errors?: unknown[] }).errors ?? []
  const refusal = refusals.length > 1 && refusals.every(r => r instanceof MissingScopeError)
    ? new MissingScopeError(refusals.flatMap(r => (r as MissingScopeError).scopes))
    : refusals[0]
  const known = error instanceof ApiError
    ? error
    : problemOf(error) ?? (refusal instanceof ApiError
      ? refusal
      : 'validation' in error && error.validation !== undefined
        ? validationError(error.validation, error.validationContext as RequestPart, request)
        : null)
  if (known !== null) {
    const { statusCode: status, type, message: detail, errors, title } = known
    return sendProblem(reply, { type, status, detail, ...(errors && { errors }), ...(title && { title }) })
  }
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) {
    return sendProblem(reply, { type: 'about:blank', status, detail: requestErrorDetail(error as FastifyError, request) })
  }
  request.log.error({ err: error }, 'request failed')
  return sendProblem(reply, {
    type: 'about:blank',
    status: 500,
    detail: `The server failed to handle this request. Quote reference ${request.id} when reporting it.`
  })
}
