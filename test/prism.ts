// A second opinion on the contract: Stoplight Prism's own request and response validators, run in-process on test traffic.
import prismHttp from '@stoplight/prism-http'
import routerModule from '@stoplight/prism-http/dist/router/index.js'
import validatorModule from '@stoplight/prism-http/dist/validator/index.js'
import type { Response as InjectResponse } from 'light-my-request'

// Prism is CommonJS with fp-ts results (Left holds the diagnostics); only what is used here is typed.
type Result<T> = { _tag: 'Left', left: T } | { _tag: 'Right', right: unknown }
interface Diagnostic { message: string, severity: number, path?: (string | number)[] }
interface Element { method: string, url: { path: string, query: Record<string, string | string[]>, baseUrl: string }, headers: Record<string, string>, body?: unknown }
const route = (routerModule as unknown as { default: (input: { resources: unknown[], input: Element }) => Result<Error> }).default
const { validateInput, validateOutput } = validatorModule as unknown as Record<'validateInput' | 'validateOutput', (args: { resource: unknown, element: unknown }) => Result<Diagnostic[]>>

export type PrismCheck = (request: { method: string, url: string, headers: Record<string, string>, payload?: string }, res: InjectResponse, requestIsValid: boolean) => string[]

/** A checker for `document` (parsed OpenAPI 3.1): every diagnostic Prism has for an exchange, warnings included. */
export async function prismChecker (document: object): Promise<PrismCheck> {
  const resources = await (prismHttp as unknown as { getHttpOperationsFromSpec: (spec: object) => Promise<unknown[]> }).getHttpOperationsFromSpec(structuredClone(document))
  return ({ method, url, headers, payload }, res, requestIsValid) => {
    // Prism knows the operations of the document only; HEAD is HTTP's, with GET's headers and no body.
    if (method.toUpperCase() === 'HEAD') return []
    const parsed = new URL(url, 'http://service')
    const query: Record<string, string | string[]> = {}
    for (const name of new Set(parsed.searchParams.keys())) {
      const values = parsed.searchParams.getAll(name)
      query[name] = values.length === 1 ? values[0]! : values
    }
    const element: Element = {
      method: method.toLowerCase(),
      url: { path: decodeURI(parsed.pathname), query, baseUrl: '' },
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      ...(payload !== undefined && { body: JSON.parse(payload) })
    }
    const routed = route({ resources, input: element })
    if (routed._tag === 'Left') return [`Prism finds no operation: ${routed.left.message}`]
    const resource = routed.right
    const problems: string[] = []
    // A request the contract's own validator calls valid must be valid to Prism too (a second reading of the schemas).
    const input = validateInput({ resource, element })
    // No exception for a replacement that carries the server-set fields back as read: they are not readOnly there.
    if (requestIsValid && input._tag === 'Left') problems.push(...input.left.map(d => `Prism: request ${(d.path ?? []).join('.')} ${d.message}`))
    const body = res.payload === '' ? undefined : JSON.parse(res.payload)
    const output = validateOutput({ resource, element: { statusCode: res.statusCode, headers: res.headers, ...(body !== undefined && { body }) } })
    if (output._tag === 'Left') problems.push(...output.left.map(d => `Prism: response ${(d.path ?? []).join('.')} ${d.message}`))
    return problems
  }
}
