// Each request's id: the caller's X-Request-Id when it is safe to log and echo, else one of the service's.
import { randomUUID } from 'node:crypto'
import type { WorkMeter } from '../formats/work-meter.js'

/** Short and plain: nothing in it needs quoting in a log line or a header. */
const plainId = /^[\w.:-]+$/
const longestId = 128

/**
 * The id for a request whose X-Request-Id header is `given`. The caller's is reused when it is at
 * most 128 plain characters and `redact` (the log's redaction) finds no credential in it: a key sent
 * there by mistake would otherwise be echoed in X-Request-Id and written in every log line of the
 * request. A longer header is not read at all; `meter` is told the characters read, for tests.
 */
export function requestId (given: string | string[] | undefined, redact: (text: string) => string, meter: WorkMeter = () => {}): string {
  if (typeof given !== 'string' || given.length > longestId) return randomUUID()
  meter(given.length)
  return plainId.test(given) && redact(given) === given ? given : randomUUID()
}
