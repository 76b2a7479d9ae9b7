// Security headers for every response, computed once at start by helmet (which would redo the work per request).
import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet from 'helmet'

/** An API answers with JSON only: nothing in it may run, be framed or load anything. */
const apiPolicy = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] }
  }
} as const

/** The headers helmet sets for the API's policy, as a plain object to send with every response. */
export function securityHeaders (): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string) => { headers[name.toLowerCase()] = value },
    removeHeader: () => {}
  }
  // With no per-request directive functions, helmet's output depends on nothing in the request.
  helmet(apiPolicy)({} as IncomingMessage, response as unknown as ServerResponse, () => {})
  return Object.freeze(headers)
}
