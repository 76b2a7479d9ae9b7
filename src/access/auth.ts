// Who is calling (once per request, before anything else) and whether that caller may run an operation.
import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { allScopes, hashSecret, parseKey, type Scope, sameSecret } from './api-keys.js'
import type { Config } from '../config/index.js'
import { ApiError, MissingScopeError } from '../http/errors.js'
import type { RouteConfig } from '../contract/openapi-document.js'
import type { ApiKeyRepository } from '../storage/types.js'

export type Caller =
  | { kind: 'key', keyId: string, scopes: readonly Scope[] }
  | { kind: 'anonymous' }
  /** A credential was sent but is malformed, unknown or revoked: refused even where anonymous calls pass. */
  | { kind: 'refused' }

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller
  }
}

/** A credential checked once: the header that carried it, who it proved, and the stored key (null for ADMIN_API_KEY). */
interface Proof {
  header: Buffer
  caller: Caller
  row: { key_id: string } | null
}

const anonymous: Caller = { kind: 'anonymous' }
const refused: Caller = { kind: 'refused' }
const realm = 'Bearer realm="books-students-api"'

/** Finds the caller from `Authorization: Bearer <key>`; the key is looked up on every request, so a revocation applies at once. */
export function identifyCaller (config: Config, apiKeys: ApiKeyRepository): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const adminHash = config.adminApiKey === null ? null : hashSecret(config.adminApiKey)
  const admin: Caller = { kind: 'key', keyId: 'admin', scopes: allScopes }

  async function identify (header: string): Promise<Proof | null> {
    const token = /^bearer +(\S+) *$/i.exec(header)?.[1]
    if (token === undefined) return null
    // Hashing both sides gives equal lengths, so the comparison time is the same for every guess.
    if (adminHash !== null && timingSafeEqual(hashSecret(token), adminHash)) return { header: Buffer.from(header), caller: admin, row: null }
    const parsed = parseKey(token)
    const stored = parsed && await apiKeys.find(parsed.keyId)
    if (!stored || stored.revoked_at !== null || !sameSecret(parsed!.secret, stored.secretHash)) return null
    return { header: Buffer.from(header), caller: { kind: 'key', keyId: stored.key_id, scopes: stored.scopes }, row: stored }
  }

  // A keep-alive connection sends the same Authorization value request after request, so what it
  // proved is kept with the connection and the key is hashed once per connection, not per request
  // (4 % of a GET's CPU, issue 6). The value is compared in constant time with the one this same
  // connection sent; a stored key must also still be the very row that was verified, as the
  // repository hands out a new row once a key changes (a revocation, by this process or another).
  const proven = new WeakMap<object, Proof>()
  async function stillProven (proof: Proof, header: string): Promise<boolean> {
    const given = Buffer.from(header)
    if (given.length !== proof.header.length || !timingSafeEqual(given, proof.header)) return false
    return proof.row === null || await apiKeys.find(proof.row.key_id) === proof.row
  }

  return async (request, reply) => {
    const header = request.headers.authorization
    if (header === undefined) {
      request.caller = anonymous
      return
    }
    // Whatever answers a request that carried a credential is for that caller alone: never cached.
    reply.header('cache-control', 'no-store')
    const connection = request.raw.socket
    const known = proven.get(connection)
    if (known !== undefined && await stillProven(known, header)) {
      request.caller = known.caller
      return
    }
    const proof = await identify(header)
    if (proof !== null) proven.set(connection, proof)
    request.caller = proof?.caller ?? refused
  }
}

function unauthorized (reply: FastifyReply, detail: string, challenge: string): ApiError {
  reply.header('www-authenticate', challenge)
  return new ApiError(401, '/problems/unauthorized', detail)
}

/**
 * fastify-openapi-glue's security handlers, one per scheme in openapi.yaml; a throw refuses the request.
 * An anonymous caller passes only where the served document leaves the operation open (`- {}`), and
 * there a key without the scope passes too: a key never gets less than no key. It is served what an
 * anonymous caller is and nothing more (no `Events-Cursor`: positions in the change feed are for keys
 * that may read it, src/handlers/paging.ts), and stays a key for what it holds: its quota, its exports,
 * its turn for a reader.
 */
export const securityHandlers: Record<'bearerAuth', (request: FastifyRequest, reply: FastifyReply, scopes: string[]) => Promise<void>> = {
  async bearerAuth (request, reply, scopes) {
    const { caller } = request
    if (caller.kind === 'refused') {
      throw unauthorized(reply, 'The API key is not valid: unknown, revoked, or not sent as Authorization: Bearer <key>', `${realm}, error="invalid_token"`)
    }
    if (caller.kind === 'anonymous') {
      if ((request.routeOptions.config as RouteConfig).openToAnonymous === true) return
      throw unauthorized(reply, 'This operation needs an API key, sent as Authorization: Bearer <key>', realm)
    }
    const missing = scopes.filter(scope => !(caller.scopes as readonly string[]).includes(scope))
    if (missing.length === 0) return
    if ((request.routeOptions.config as RouteConfig).openToAnonymous !== true) throw new MissingScopeError(missing)
  }
}
