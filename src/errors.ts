// The errors the service throws on purpose; each knows its HTTP status and RFC 9457 problem type.
import type { ProblemError } from './api-types.js'

export class ApiError extends Error {
  constructor (
    readonly statusCode: number,
    readonly type: string,
    message: string,
    readonly errors?: ProblemError[],
    readonly title?: string
  ) {
    super(message)
  }
}

export class NotFoundError extends ApiError {
  constructor (kind: string, id: string) {
    super(404, 'about:blank', `No ${kind} has the id ${id}`)
  }
}

/** A value that must be unique is already held by another record. */
export class DuplicateError extends ApiError {
  constructor (kind: string, field: string) {
    super(409, '/problems/already-exists', `Another ${kind} already has this ${field}`)
  }
}

export type RequestPart = 'body' | 'querystring' | 'params' | 'headers'

const partNames: Record<RequestPart, string> = {
  body: 'the request body',
  querystring: 'the query string',
  params: 'the path',
  headers: 'the request headers'
}

export class ValidationError extends ApiError {
  constructor (part: RequestPart, errors: ProblemError[]) {
    const count = errors.length === 1 ? '1 problem' : `${errors.length} problems`
    super(400, '/problems/validation-error', `${count} in ${partNames[part]}`, errors, 'Request validation failed')
  }
}
