// Who is calling (once per request, before anything else) and whether that caller may run an operation.
import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { allScopes, hashSecret, parseKey, type Scope, sameSecret } from './api-keys.js'
import type { Config } from './config.js'
import { ApiError } from './errors.js'
import type { ApiKeyRepository } from './repositories/types.js'

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

const anonymous: Caller = { kind: 'anonymous' }
const refused: Caller = { kind: 'refused' }
const realm = 'Bearer realm="books-students-api"'

/** Finds the caller from `Authorization: Bearer <key>`; the key is looked up on every request, so a revocation applies at once. */
export function identifyCaller (config: Config, apiKeys: ApiKeyRepository): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const adminHash = config.adminApiKey === null ? null : hashSecret(config.adminApiKey)
  const admin: Caller = { kind: 'key', keyId: 'admin', scopes: allScopes }

  async function identify (header: string): Promise<Caller> {
    const token = /^bearer +(\S+) *$/i.exec(header)?.[1]
    if (token === undefined) return refused
    // Hashing both sides gives equal lengths, so the comparison time is the same for every guess.
    if (adminHash !== null && timingSafeEqual(hashSecret(token), adminHash)) return admin
    const parsed = parseKey(token)
    const stored = parsed && await apiKeys.find(parsed.keyId)
    if (!stored || stored.revoked_at !== null || !sameSecret(parsed!.secret, stored.secretHash)) return refused
    return { kind: 'key', keyId: stored.key_id, scopes: stored.scopes }
  }

  return async (request, reply) => {
    const header = request.headers.authorization
    if (header === undefined) {
      request.caller = anonymous
      return
    }
    // Whatever answers a request that carried a credential is for that caller alone: never cached.
    reply.header('cache-control', 'no-store')
    request.caller = await identify(header)
  }
}

function unauthorized (reply: FastifyReply, detail: string, challenge: string): ApiError {
  reply.header('www-authenticate', challenge)
  return new ApiError(401, '/problems/unauthorized', detail)
}

/** fastify-openapi-glue's security handlers, one per scheme in openapi.yaml; a throw refuses the request. */
export function securityHandlers (config: Config): Record<'bearerAuth', (request: FastifyRequest, reply: FastifyReply, scopes: string[]) => Promise<void>> {
  // Students are personal data: whatever the settings, only book reads can ever be anonymous.
  const anonymousScopes: readonly string[] = config.publicBookReads ? ['books:read'] : []
  return {
    async bearerAuth (request, reply, scopes) {
      const { caller } = request
      if (caller.kind === 'refused') {
        throw unauthorized(reply, 'The API key is not valid: unknown, revoked, or not sent as Authorization: Bearer <key>', `${realm}, error="invalid_token"`)
      }
      if (caller.kind === 'anonymous') {
        if (scopes.length > 0 && scopes.every(scope => anonymousScopes.includes(scope))) return
        throw unauthorized(reply, 'This operation needs an API key, sent as Authorization: Bearer <key>', realm)
      }
      const missing = scopes.filter(scope => !(caller.scopes as readonly string[]).includes(scope))
      if (missing.length > 0) {
        throw new ApiError(403, '/problems/missing-scope', `This operation needs the scope ${missing.join(', ')}, which this API key lacks`)
      }
    }
  }
}
