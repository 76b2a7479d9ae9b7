// The contract as the running service serves and routes it: openapi.yaml, adjusted to the configuration.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import type { Config } from '../config/index.js'
import { deprecatedExports, deprecationProblems, exportTypes, type RouteDeprecation, routeDeprecation } from './deprecation.js'
import type { OpenApiDocument, Operation, SecurityRequirement } from './openapi-document-types.js'

// Callers take the document types from here with the functions on them; deprecation.ts imports openapi-document-types.js directly.
export type { OpenApiDocument, Operation } from './openapi-document-types.js'

/** The contract, found from src/ and dist/ alike. */
export const specPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url))

const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** The text last parsed and what it gave: each app built in a process (a test builds hundreds) parses the contract once. */
let lastParsed: { text: string, document: OpenApiDocument } | null = null

/** openapi.yaml, parsed: a copy of its own for each caller. */
export function readContract (path = specPath): OpenApiDocument {
  const text = readFileSync(path, 'utf8')
  if (lastParsed?.text !== text) lastParsed = { text, document: parse(text) as OpenApiDocument }
  return structuredClone(lastParsed.document)
}

/** Every operation of `document` with its path template and (lower-case) method. */
export function operationsOf (document: OpenApiDocument): { path: string, method: string, operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => methods.has(method)).map(([method, operation]) => ({ path, method, operation: operation as Operation })))
}

/** An empty requirement (`- {}`) beside the others makes the operation open to anonymous callers. */
const isAnonymous = (requirement: SecurityRequirement): boolean => Object.keys(requirement).length === 0

/**
 * The document served at /docs/json and shown by Swagger UI: openapi.yaml states the default
 * (book reads open to anonymous callers); with PUBLIC_BOOK_READS=false no operation is open.
 */
export function servedDocument (document: OpenApiDocument, config: Pick<Config, 'publicBookReads'>): OpenApiDocument {
  if (config.publicBookReads) return document
  const copy = structuredClone(document)
  for (const { operation } of operationsOf(copy)) operation.security &&= operation.security.filter(r => !isAnonymous(r))
  return copy
}

/** A server of the document (OpenAPI's Server Object), as far as the service reads it. */
interface Server {
  url: string
  description?: string
  [key: string]: unknown
}

/**
 * The document as served to one client: its first server is the URL the service is reached at, so that
 * a generated client's default base URL and Swagger UI's Try it out work as they are. openapi.yaml's
 * own servers (a templated one whose defaults are a local `npm start`) follow it.
 */
export function withServer (document: OpenApiDocument, { url, named }: { url: string, named: boolean }): OpenApiDocument {
  const servers = (document['servers'] ?? []) as Server[]
  const description = named ? 'This server, as PUBLIC_URL names it' : 'This server, where it listens (behind a proxy, PUBLIC_URL names the URL clients reach)'
  return { ...document, servers: [{ url, description }, ...servers.filter(server => server.url !== url)] }
}

/**
 * The URL of a server listening at `address` (what `server.address()` gives): a wildcard address is
 * named `localhost`, an IPv6 address is bracketed.
 */
export function listeningUrl (address: { address: string, port: number }): string {
  const host = ['0.0.0.0', '::'].includes(address.address) ? 'localhost' : address.address.includes(':') ? `[${address.address}]` : address.address
  return `http://${host}:${address.port}`
}

/** What the routed operation's Fastify route config carries (fastify-openapi-glue copies `x-fastify-config`). */
export interface RouteConfig {
  /** The served document leaves the operation open to anonymous callers. */
  openToAnonymous?: boolean
  /** What the operation, its parameters or its body fields have deprecated (announced by src/contract/deprecation.ts). */
  deprecation?: RouteDeprecation
}

/**
 * The copy of the served document that fastify-openapi-glue routes. The glue would pass an
 * anonymous alternative (`- {}`) without calling any handler, so a bad key sent to an open
 * operation would go unchecked: the alternative is dropped and marked in the route's config
 * instead, where bearerAuth reads it. Deprecations go to the route's config too, and a contract
 * that declares one half-way (no date, a sunset too soon) is refused.
 */
export function routedDocument (served: OpenApiDocument): OpenApiDocument {
  const problems = deprecationProblems(served)
  if (problems.length > 0) throw new Error(`The contract declares deprecations half-way (docs/versioning.md):\n${problems.join('\n')}`)
  const copy = structuredClone(served)
  for (const { path, operation } of operationsOf(copy)) {
    const config: RouteConfig = {}
    if (operation.security?.some(isAnonymous) === true) {
      operation.security = operation.security.filter(r => !isAnonymous(r))
      config.openToAnonymous = true
    }
    if (operation[deprecatedExports] !== undefined) {
      // Routed, not served: the 200 keeps the export types its clients of before may still ask for.
      const { content } = (operation['responses'] as Record<string, { content: Record<string, unknown> }>)['200']!
      for (const type of exportTypes) content[type] = { schema: { type: 'string' } }
    }
    const deprecation = routeDeprecation(copy, path, operation)
    if (deprecation !== undefined) config.deprecation = deprecation
    if (Object.keys(config).length > 0) operation['x-fastify-config'] = config
  }
  return copy
}
