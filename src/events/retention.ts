// Keeps the change feed to its retention: events older than it are pruned at start and then every hour.
import type { FastifyBaseLogger } from 'fastify'
import type { EventFeed } from '../storage/types.js'

const day = 24 * 60 * 60 * 1000
const every = 60 * 60 * 1000

/** Starts pruning; the returned function stops it, waiting for a prune under way. */
export function keepEvents (feed: EventFeed, retentionDays: number, log: FastifyBaseLogger, clock: () => number = Date.now): () => Promise<void> {
  let running: Promise<void> = Promise.resolve()
  const prune = (): void => {
    running = (async () => {
      // Each call deletes a bounded batch, so the write lock is never held for long.
      while (await feed.prune(clock() - retentionDays * day) > 0);
    })().catch((error: Error) => { log.error({ err: error }, 'pruning the change feed failed') })
  }
  prune()
  const timer = setInterval(prune, every).unref()
  return async () => {
    clearInterval(timer)
    await running
  }
}
