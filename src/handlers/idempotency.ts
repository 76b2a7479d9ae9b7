// Idempotent creates (IETF draft "The Idempotency-Key HTTP Header Field"): a retry replays the first response.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OperationId } from '../contract/api-types.js'
import type { Caller } from '../access/auth.js'
import { IdempotencyKeyTakenError } from '../domain/outcomes.js'
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../http/errors.js'
import type { IdempotencyEntry, IdempotencyStore, StoredResponse, Versioned } from '../storage/types.js'

/**
 * Who is calling, for scoping keys: two callers may pick the same key without meeting. Creates
 * always require an API key (openapi.yaml), so the caller is a key; its id, never its secret.
 */
const callerOf = (request: FastifyRequest): string => (request.caller as Extract<Caller, { kind: 'key' }>).keyId

/** The key of the request: the draft's sf-string ("…") or, leniently, the bare value; undefined when absent. */
export function keyOf (request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key']
  if (typeof raw !== 'string') return undefined
  return raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw
}

export interface CreateOnce<T> {
  request: FastifyRequest
  reply: FastifyReply
  operation: OperationId
  /** The normalised values to be written: two bodies meaning the same record are the same request. */
  values: object
  /** Writes the record, storing the entry `remember` builds in the same transaction. */
  create: (remember?: (created: Versioned<T>) => IdempotencyEntry) => Promise<Versioned<T>>
  /** The success response's headers (Location, ETag) for a created record. */
  headersOf: (created: Versioned<T>) => Record<string, string>
}

export class Idempotency {
  readonly #store: IdempotencyStore
  readonly #ttlMs: number
  // Keys whose first request is being handled in this process; a retry meanwhile gets 409.
  readonly #inFlight = new Set<string>()

  constructor (store: IdempotencyStore, ttlSeconds: number) {
    this.#store = store
    this.#ttlMs = ttlSeconds * 1000
  }

  /** Creates the record once per key: a retry gets the stored 201, never a second record. */
  async create<T> ({ request, reply, operation, values, create, headersOf }: CreateOnce<T>): Promise<T | FastifyReply> {
    const respond = (created: Versioned<T>): T => {
      reply.code(201).headers(headersOf(created))
      return created.record
    }
    const key = keyOf(request)
    if (key === undefined) return respond(await create())

    const scope = `${callerOf(request)} ${operation}`
    const slot = JSON.stringify([scope, key])
    if (this.#inFlight.has(slot)) throw new IdempotencyKeyInUseError()
    // Claimed before the first await, so two requests with one key cannot both pass the lookup.
    this.#inFlight.add(slot)
    try {
      const fingerprint = createHash('sha256').update(JSON.stringify(values)).digest('base64url')
      const replayed = await this.#replay(scope, key, fingerprint, reply)
      if (replayed !== null) return replayed
      try {
        const created = await create(created => ({
          scope,
          key,
          fingerprint,
          expiresAt: Date.now() + this.#ttlMs,
          response: { status: 201, headers: headersOf(created), body: JSON.stringify(created.record) }
        }))
        return respond(created)
      } catch (error) {
        if (!(error instanceof IdempotencyKeyTakenError)) throw error
        // Another node stored the key between our lookup and our write, and has committed: answer as its retry.
        const replayed = await this.#replay(scope, key, fingerprint, reply)
        if (replayed === null) throw new IdempotencyKeyInUseError()
        return replayed
      }
    } finally {
      this.#inFlight.delete(slot)
    }
  }

  /** The stored response to a first request with this key, replayed; null when there is none. */
  async #replay (scope: string, key: string, fingerprint: string, reply: FastifyReply): Promise<FastifyReply | null> {
    const stored = await this.#store.find(scope, key, Date.now())
    if (stored === null) return null
    if (stored.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError()
    return replay(reply, stored.response)
  }
}

function replay (reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply
    .code(response.status)
    .headers({ ...response.headers, 'idempotent-replayed': 'true' })
    .type('application/json; charset=utf-8')
    .send(response.body)
}
