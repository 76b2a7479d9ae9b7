// Fixed-window rate limiting per API key (per client address when anonymous), with the draft-11 RateLimit fields.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config/index.js'
import { sendProblem } from '../http/problems.js'
import { RedisRateLimitStore } from './rate-limit-redis.js'
import { MemoryRateLimitStore, type RateLimitStore } from './rate-limit-store.js'

export interface RateLimitHooks {
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>
  /** Told of every failed operation of a shared store (for an error counter); see RedisStoreOptions. */
  onStoreError?: (error: Error) => void
}

/** Redis shared by all nodes when REDIS_URL is set, this process's memory otherwise; the one place that knows which stores exist. */
export async function openRateLimitStore (config: Pick<Config, 'redisUrl' | 'redisKeyPrefix' | 'redisTimeout'>, hooks: RateLimitHooks): Promise<RateLimitStore> {
  if (config.redisUrl === null) return new MemoryRateLimitStore()
  return RedisRateLimitStore.open({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix, timeout: config.redisTimeout, ...hooks })
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Counts `cost` more requests against the caller's quota (an import, by its rows) and updates the
     * RateLimit field; resolves to the seconds until the window ends once the quota is spent, else null.
     */
    chargeQuota: (cost: number) => Promise<number | null>
  }
}

/** Runs after the caller is identified, so a key's quota follows the key and not the address. */
export function rateLimit (config: Config, store: RateLimitStore, clock: () => number): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async (request, reply) => {
    const { caller } = request
    const [policy, limit, partition] = caller.kind === 'key'
      ? ['keyed', config.rateLimit, `key:${caller.keyId}`]
      : ['anonymous', config.rateLimitAnonymous, `address:${request.ip}`]
    const counted = async (cost: number): Promise<number | null> => {
      const now = clock()
      const { count, resetAt } = await store.hit(partition, limit, now, cost)
      const resetIn = Math.max(1, Math.ceil((resetAt - now) / 1000))
      reply.header('ratelimit-policy', `"${policy}";q=${limit.requests};w=${limit.seconds}`)
      reply.header('ratelimit', `"${policy}";r=${Math.max(0, limit.requests - count)};t=${resetIn}`)
      return count > limit.requests ? resetIn : null
    }
    request.chargeQuota = counted
    const resetIn = await counted(1)
    if (resetIn !== null) {
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
