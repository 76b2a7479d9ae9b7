// Where rate-limit counters live: the interface every store meets, and the per-process one in memory.
import type { RateLimit } from '../config/index.js'

/** A partition's fixed window after one more request. */
export interface WindowCount {
  /** Requests counted in the window, this one included. */
  count: number
  /** Milliseconds since the epoch, on the caller's clock, at which the window ends. */
  resetAt: number
}

/**
 * Counts requests per partition in fixed windows that start with a partition's first request.
 * The limiter (src/access/rate-limit.ts) turns the count into headers and 429s, so every store gives the
 * same answers to the client.
 */
export interface RateLimitStore {
  /** Counts one request (or `cost` of them); never rejects, so that counting can never turn a request into a 500. */
  hit (partition: string, limit: RateLimit, now: number, cost?: number): Promise<WindowCount>
  /** Resolves when the store can count right now (for a readiness check); rejects with the reason otherwise. */
  probe (): Promise<void>
  close (): Promise<void>
}

/**
 * The counters of this process alone: the store of a single node, and the stand-in for a shared
 * store while that one is unreachable. @fastify/rate-limit counts just as well but can only emit the
 * X-RateLimit-* or pre-draft-07 field names, and does not expose its counters to set draft-11 fields.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, WindowCount>()
  #sweepAt = 0

  /** The synchronous core, for callers that are already asynchronous and need no extra turn. */
  count (partition: string, limit: RateLimit, now: number, cost = 1): WindowCount {
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
    window.count += cost
    return { count: window.count, resetAt: window.resetAt }
  }

  async hit (partition: string, limit: RateLimit, now: number, cost = 1): Promise<WindowCount> {
    return this.count(partition, limit, now, cost)
  }

  async probe (): Promise<void> {}

  async close (): Promise<void> {
    this.#windows.clear()
  }
}
