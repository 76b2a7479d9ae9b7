// One delivery attempt: a POST over node:http(s) whose connection goes through the address policy.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { type AddressPolicy, RefusedUrlError } from './address-policy.js'

export interface Attempt {
  /** The status, or null when none came (refused, unreachable, timed out). */
  status: number | null
  /** Retry-After in milliseconds, when the answer carried a usable one. */
  retryAfter: number | null
  /** Why it failed, for the delivery's last_error; '' on success. */
  error: string
  /** Whether the address policy refused the connection (an address webhooks may not reach): no request was sent. */
  refused?: true
}

function retryAfter (value: string | undefined, now: number): number | null {
  if (value === undefined) return null
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

export function send (policy: AddressPolicy, target: string, headers: Record<string, string>, body: string,
  timeout: number, signal: AbortSignal, now: number): Promise<Attempt> {
  const url = new URL(target)
  // Node connects to an address literal without asking `lookup`, so the policy sees it here instead.
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const refused = isIP(literal) === 0 ? null : policy.refusal(url, literal)
  if (refused !== null) return Promise.resolve({ status: null, retryAfter: null, error: refused, refused: true })
  return new Promise(resolve => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      lookup: policy.lookup(url),
      // No pooled connection: each attempt resolves (and is checked) afresh.
      agent: false,
      signal
    }, response => {
      // The status is the answer: receivers owe us no body, and one read slowly would hold the attempt.
      const status = response.statusCode!
      finish({ status, retryAfter: retryAfter(response.headers['retry-after'], now), error: status >= 200 && status < 300 ? '' : `answered ${status}` })
    })
    // One deadline for the whole attempt (lookup, connection, request, answer), not an idle timeout: a
    // receiver that trickles its answer a byte at a time would otherwise hold the attempt past its lease.
    const deadline = setTimeout(() => finish({ status: null, retryAfter: null, error: `no answer within ${timeout} ms` }), timeout)
    const finish = (attempt: Attempt) => {
      clearTimeout(deadline)
      resolve(attempt)
      request.destroy()
    }
    request.on('error', error => finish({
      status: null, retryAfter: null, error: error.message, ...(error instanceof RefusedUrlError && { refused: true as const })
    }))
    request.end(body)
  })
}
