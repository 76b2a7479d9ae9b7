// Each request's id: the caller's X-Request-Id when it is safe to log and echo, else one of the service's.
import { randomUUID } from 'node:crypto'

/** Short and plain: nothing in it needs quoting in a log line or a header. */
const plainId = /^[\w.:-]+$/
const longestId = 128

/**
 * The id for a request whose X-Request-Id header is `given`. The caller's is reused when it is at
 * most 128 plain characters and `redact` (the log's redaction) finds no credential in it: a key sent
 * there by mistake would otherwise be echoed in X-Request-Id and written in every log line of the
 * request. Only the first 128 characters are ever read.
 */
export function requestId (given: string | string[] | undefined, redact: (text: string) => string): string {
  return typeof given === 'string' && given.length <= longestId && plainId.test(given) && redact(given) === given ? given : randomUUID()
}
