// Security headers: a short set for the API's JSON answers, helmet's full set for the Swagger UI page.
import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet from 'helmet'

/**
 * What OWASP's REST Security Cheat Sheet asks of an API response: nothing in it may run, be framed or
 * be sniffed into another type, and HTTPS sticks. The rest of helmet's set (COOP, CORP, X-XSS-Protection,
 * X-DNS-Prefetch-Control, …) governs how browsers treat documents; on JSON it is bytes on every
 * response and a header check in Node for each (issue 6).
 */
export const apiSecurityHeaders: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY'
})

/**
 * helmet's headers for an HTML page (Swagger UI), computed once at start: helmet would redo the work
 * on every request. The page's Content-Security-Policy is left to @fastify/swagger-ui, which knows the
 * hashes of its scripts and styles.
 */
export function documentSecurityHeaders (): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string) => { headers[name.toLowerCase()] = value },
    removeHeader: () => {}
  }
  // With no per-request directive functions, helmet's output depends on nothing in the request.
  helmet({ contentSecurityPolicy: false })({} as IncomingMessage, response as unknown as ServerResponse, () => {})
  return Object.freeze(headers)
}
