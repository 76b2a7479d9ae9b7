// Fixed-window rate limiting per API key (per client address when anonymous), with the draft-11 RateLimit fields.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config, RateLimit } from './config.js'
import { sendProblem } from './problems.js'

interface Window {
  count: number
  resetAt: number
}

/**
 * Counts requests per partition in fixed windows. @fastify/rate-limit counts just as well but can
 * only emit the X-RateLimit-* or pre-draft-07 field names, and does not expose its counters to set
 * draft-11 `RateLimit`/`RateLimit-Policy` fields; this is the small part of it we need, in memory.
 */
export class RateLimiter {
  readonly #windows = new Map<string, Window>()
  #sweepAt = 0

  constructor (private readonly now: () => number) {}

  hit (partition: string, limit: RateLimit): { allowed: boolean, remaining: number, resetIn: number } {
    const now = this.now()
    if (now >= this.#sweepAt) {
      // Expired windows are dropped now and then, so a flood from many addresses cannot grow the map for ever.
      for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key)
      this.#sweepAt = now + 60_000
    }
    let window = this.#windows.get(partition)
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + limit.seconds * 1000 }
      this.#windows.set(partition, window)
    }
    window.count++
    return {
      allowed: window.count <= limit.requests,
      remaining: Math.max(0, limit.requests - window.count),
      resetIn: Math.max(1, Math.ceil((window.resetAt - now) / 1000))
    }
  }
}

/** Runs after the caller is identified, so a key's quota follows the key and not the address. */
export function rateLimit (config: Config, limiter: RateLimiter): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async (request, reply) => {
    const { caller } = request
    const [policy, limit, partition] = caller.kind === 'key'
      ? ['keyed', config.rateLimit, `key:${caller.keyId}`]
      : ['anonymous', config.rateLimitAnonymous, `address:${request.ip}`]
    const { allowed, remaining, resetIn } = limiter.hit(partition, limit)
    reply.header('ratelimit-policy', `"${policy}";q=${limit.requests};w=${limit.seconds}`)
    reply.header('ratelimit', `"${policy}";r=${remaining};t=${resetIn}`)
    if (!allowed) {
      reply.header('retry-after', resetIn)
      return sendProblem(reply, {
        type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
        status: 429,
        detail: `Request quota exceeded; retry in ${resetIn} seconds`,
        'violated-policies': [policy]
      })
    }
  }
}
