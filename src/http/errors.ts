// The errors the service throws on purpose; each knows its HTTP status and RFC 9457 problem type. Storage's refusals are mapped here too.
import type { ProblemError } from '../contract/api-types.js'
import { IdempotencyKeyBusyError, RevisionNotCurrentError, ValueTakenError } from '../domain/outcomes.js'

export class ApiError extends Error {
  readonly statusCode: number
  readonly type: string
  readonly errors?: ProblemError[]
  readonly title?: string

  constructor (statusCode: number, type: string, message: string, errors?: ProblemError[], title?: string) {
    super(message)
    this.statusCode = statusCode
    this.type = type
    this.errors = errors
    this.title = title
  }
}

export class NotFoundError extends ApiError {
  constructor (kind: string, id: string) {
    super(404, 'about:blank', `No ${kind} has the id ${id}`)
  }
}

/** The Idempotency-Key was used before with a different request body. */
export class IdempotencyKeyReusedError extends ApiError {
  constructor (detail = 'This Idempotency-Key was used with a different request body') {
    super(422, '/problems/idempotency-key-reused', detail)
  }
}

/** The first request with this Idempotency-Key has not finished yet. */
export class IdempotencyKeyInUseError extends ApiError {
  constructor () {
    super(409, '/problems/idempotency-key-in-use', 'A request with this Idempotency-Key is still being handled; retry later')
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

const queryProblems = {
  '/problems/invalid-search': 'Invalid search',
  '/problems/invalid-range': 'Invalid range',
  '/problems/cursor-mismatch': 'Cursor mismatch',
  '/problems/unsupported-combination': 'Unsupported combination',
  '/problems/search-too-broad': 'Search too broad'
} as const

/** A list query that cannot be answered as asked; `parameter` names what to change. */
export class QueryError extends ApiError {
  constructor (type: keyof typeof queryProblems, parameter: string, detail: string) {
    super(400, type, `${parameter}: ${detail}`, [{ parameter, detail }], queryProblems[type])
  }
}

/** The API key lacks every one of the scopes that would let it through (one, or any of several alternatives). */
export class MissingScopeError extends ApiError {
  readonly scopes: readonly string[]

  constructor (scopes: readonly string[]) {
    super(403, '/problems/missing-scope', scopes.length === 1
      ? `This operation needs the scope ${scopes[0]}, which this API key lacks`
      : `This operation needs one of the scopes ${scopes.join(', ')}, which this API key lacks`)
    this.scopes = scopes
  }
}

/** An event cursor whose following events are no longer all kept, or that another database issued. */
export class CursorGoneError extends ApiError {
  constructor (retentionDays: number) {
    super(410, '/problems/cursor-expired', `The event cursor is older than the oldest event kept (events are kept ${retentionDays} days) or comes from another database: list the records again, then follow the feed from the Events-Cursor of the first page`, undefined, 'Gone')
  }
}

/** A list page not read within the time one request may take; the reply carries Retry-After. */
export class ListBusyError extends ApiError {
  constructor (budgetMs: number) {
    super(503, '/problems/list-busy', `The page was not read within ${budgetMs} ms while the service is busy with other lists; retry after Retry-After seconds, or narrow the query`, undefined, 'Service Unavailable')
  }
}

/** The caller already has as many costly list pages waiting for a reader as one caller may; the reply carries Retry-After. */
export class ListQueueFullError extends ApiError {
  constructor (perCaller: number) {
    super(503, '/problems/list-busy', `${perCaller} of your searches or filtered lists are already waiting for a reader on this node, as many as one caller may have; retry after Retry-After seconds, once they are answered`, undefined, 'Service Unavailable')
  }
}

/** The API key has as many event streams open as it may. */
export class TooManyStreamsError extends ApiError {
  constructor (limit: number) {
    super(429, '/problems/too-many-streams', `This API key already has ${limit} event streams open; close one or retry later`, undefined, 'Too Many Requests')
  }
}

/**
 * The problem a refusal of storage's is (src/domain/outcomes.ts), the one place they become HTTP;
 * undefined for any other error.
 */
export function problemOf (error: unknown): ApiError | undefined {
  if (error instanceof ValueTakenError) return new ApiError(409, '/problems/already-exists', error.message)
  if (error instanceof RevisionNotCurrentError) return new ApiError(412, '/problems/precondition-failed', error.message)
  if (error instanceof IdempotencyKeyBusyError) return new IdempotencyKeyInUseError()
  return undefined
}
