// The errors the service throws on purpose; each knows its HTTP status and RFC 9457 problem type.
import type { ProblemError } from '../contract/api-types.js'

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

/**
 * If-Match named no current tag of the record. `changedSince`: it named an earlier revision of the
 * record, so someone changed it since the caller read it; otherwise the tags are not the record's at
 * all (another record's, a weak one, one this service never issues), and saying "changed" would mislead.
 */
export class PreconditionFailedError extends ApiError {
  constructor (kind: string, changedSince: boolean) {
    super(412, '/problems/precondition-failed', changedSince
      ? `The ${kind} has changed since the ETag in If-Match was issued`
      : `The ETag in If-Match does not match the ${kind}'s current one, nor any it had before: GET the ${kind} for its current ETag`)
  }

  /** The refusal of `expected` (the revisions If-Match named) by a record at revision `current`. */
  static of (kind: string, expected: readonly number[], current: number): PreconditionFailedError {
    return new PreconditionFailedError(kind, expected.some(revision => revision < current))
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

/**
 * Storage's answer to a create whose idempotency key another request stored first (on this node or
 * another) while this one was on its way: nothing was written. Not an HTTP error: the caller replays.
 */
export class IdempotencyKeyTakenError extends Error {
  override name = 'IdempotencyKeyTakenError'
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
  constructor (readonly scopes: readonly string[]) {
    super(403, '/problems/missing-scope', scopes.length === 1
      ? `This operation needs the scope ${scopes[0]}, which this API key lacks`
      : `This operation needs one of the scopes ${scopes.join(', ')}, which this API key lacks`)
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
