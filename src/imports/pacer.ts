// Shares the event loop with other requests while a long piece of work (an upload read) runs: a turn every few milliseconds.
import { setImmediate } from 'node:timers/promises'

/**
 * Called between steps of the work (a chunk, a row): a promise to await when the work has had the loop for
 * `budgetMs` since its last turn, null otherwise (the common case, which costs only a clock read).
 * Time, not a count of steps, decides: a row may cost a microsecond or, never ending, every chunk of a
 * file; either way other requests wait at most about `budgetMs`.
 */
export type Pacer = () => Promise<void> | null

export interface PacerOptions {
  /** Milliseconds of work between two turns. */
  budgetMs?: number
  /** A monotonic clock in milliseconds. */
  clock?: () => number
  /** Gives the loop a turn: by default, resumes after the I/O and timers that are due. */
  turn?: () => Promise<unknown>
}

/** Milliseconds an upload may hold the event loop before other requests get a turn. */
export const loopBudgetMs = 4

export function pacer ({ budgetMs = loopBudgetMs, clock = () => performance.now(), turn = () => setImmediate() }: PacerOptions = {}): Pacer {
  let since = clock()
  return () => {
    if (clock() - since < budgetMs) return null
    return turn().then(() => { since = clock() })
  }
}
