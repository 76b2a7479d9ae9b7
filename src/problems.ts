// Every error leaves as RFC 9457 problem+json: the error handler, 404/405 and 406 all answer through here.
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Problem, ProblemError } from './api-types.js'
import { ApiError, type RequestPart, ValidationError } from './errors.js'

// The maxLength of each string of the Problem and ProblemError schemas in openapi.yaml (a test
// compares them): a problem echoes what the client sent (its URL, a field's name), which may be longer.
const limits = { detail: 2000, instance: 2000, errorDetail: 500, pointer: 500, parameter: 100 }

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

export function sendProblem (reply: FastifyReply, problem: Omit<Problem, 'title' | 'instance'> & { title?: string }): FastifyReply {
  const { detail, errors } = problem
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send({
      title: STATUS_CODES[problem.status],
      instance: clip(reply.request.url, limits.instance),
      ...problem,
      ...(detail !== undefined && { detail: clip(detail, limits.detail) }),
      ...(errors !== undefined && { errors: errors.map(clipError) })
    })
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
    const body = JSON.stringify({ type: 'about:blank', title: STATUS_CODES[status], status, detail })
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}

type AjvIssue = NonNullable<FastifyError['validation']>[number]

const escapePointer = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1')

function describe (issue: AjvIssue, part: RequestPart): { path: string, detail: string } {
  const params = issue.params as Record<string, unknown>
  switch (issue.keyword) {
    case 'required':
      return { path: `${issue.instancePath}/${escapePointer(String(params['missingProperty']))}`, detail: 'is required' }
    case 'additionalProperties':
      return {
        path: `${issue.instancePath}/${escapePointer(String(params['additionalProperty']))}`,
        detail: part === 'body' ? 'is not a field of this resource' : 'is not a known parameter'
      }
    case 'enum':
      return { path: issue.instancePath, detail: `must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}` }
    case 'format':
      return { path: issue.instancePath, detail: params['format'] === 'isbn' ? 'is not a valid ISBN-10 or ISBN-13 (check digit)' : String(issue.message) }
    default:
      return { path: issue.instancePath, detail: String(issue.message) }
  }
}

/** AJV's issues as problem `errors`: JSON Pointers into the body, parameter names elsewhere. */
function validationError (issues: AjvIssue[], part: RequestPart): ValidationError {
  const errors = issues.slice(0, 100).map((issue): ProblemError => {
    const { path, detail } = describe(issue, part)
    if (part === 'body') {
      return { detail, pointer: '#' + path.split('/').map(encodeURIComponent).join('/') }
    }
    // Parameters are flat: the first segment names the parameter.
    const name = path.replace(/^\/([^/]*).*$/s, '$1')
    return { detail, parameter: name.replace(/~1/g, '/').replace(/~0/g, '~') }
  })
  return new ValidationError(part, errors)
}

export function errorHandler (error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // fastify-openapi-glue wraps what a security handler throws in its SecurityError, under `errors`.
  const refusal = (error as { errors?: unknown[] }).errors?.[0]
  const known = error instanceof ApiError
    ? error
    : refusal instanceof ApiError
      ? refusal
      : 'validation' in error && error.validation !== undefined
        ? validationError(error.validation, error.validationContext as RequestPart)
        : null
  if (known !== null) {
    const { statusCode: status, type, message: detail, errors, title } = known
    return sendProblem(reply, { type, status, detail, ...(errors && { errors }), ...(title && { title }) })
  }
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (bad JSON, 413…) carry messages written for clients; 415's says too little.
    const detail = 'code' in error && error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'The request body must be application/json' : error.message
    return sendProblem(reply, { type: 'about:blank', status, detail })
  }
  request.log.error({ err: error }, 'request failed')
  return sendProblem(reply, {
    type: 'about:blank',
    status: 500,
    detail: `The server failed to handle this request. Quote reference ${request.id} when reporting it.`
  })
}
