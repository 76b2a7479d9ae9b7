// SQLite group commit: the writes of a few event-loop turns in one transaction, with no savepoint per write.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { Refusal } from '../../domain/outcomes.js'

interface PendingWrite {
  write: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** What a batch's writes leave to be written once, just before its COMMIT (a search index). */
export interface BatchWork {
  write (): void
  /** The batch rolled back: forget what its writes left. */
  discard (): void
}

type Outcome = { ok: true, value: unknown } | { ok: false, error: unknown }

/** The writes' own refusals (a value taken, a revision not current, a key another process stored): a write throws them having written nothing. */
const isRefusal = (error: unknown): boolean => error instanceof Refusal

/** At most this many turns of the event loop, and this long, does a batch wait for more writes to join it. */
export const companyTurns = 3
export const companyWaitMs = 3
/** A batch this large goes without waiting further: its COMMIT is already shared enough. */
export const fullBatch = 32

/** A write failed for a reason of its own after it may have written: its batch must roll back. */
class WriteFailed extends Error {}

/** What the write whose transaction failed is told. */
const reason = (error: unknown): unknown => error instanceof WriteFailed ? error.cause : error

/**
 * Group commit: the writes that arrive within a few event-loop turns run in ONE transaction. A commit is
 * the dearest part of a write, and one commit for the batch instead of one per write is what pays
 * (issue 6). A write refuses (a Refusal: a value taken, a revision not current) before it writes anything, or undoes what it wrote, so a refusal
 * touches no neighbour and no write needs a savepoint of its own (a savepoint per write cost some 15 µs,
 * and more through the search index: BENCHMARKS.md). Any other error rolls the batch back, and its
 * writes run again one transaction each, so that the failing one fails alone. Every write is
 * acknowledged only after its COMMIT, and a failed COMMIT fails every write of its transaction. A
 * transaction never spans an await: it runs synchronously from BEGIN to COMMIT.
 */
export class GroupCommit {
  readonly #db: Database.Database
  readonly #begin: Statement<[]>
  readonly #commit: Statement<[]>
  readonly #rollback: Statement<[]>
  readonly #onBatch: (size: number) => void
  readonly #onCommit: () => void
  readonly #clock: () => number
  readonly #work: BatchWork[] = []
  #queue: PendingWrite[] = []

  /** `onCommit`: told after each transaction commits, before its writers hear of it; `clock`: what companyWaitMs is measured on (a test's own). */
  constructor (db: Database.Database, onCommit: () => void, onBatch: (size: number) => void = () => {}, clock: () => number = () => performance.now()) {
    this.#db = db
    this.#onCommit = onCommit
    this.#onBatch = onBatch
    this.#clock = clock
    // IMMEDIATE takes the write lock before the first read, so a check and its write see the same row
    // even if another connection (another process) writes to the file.
    this.#begin = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#rollback = db.prepare('ROLLBACK')
  }

  /** Work every batch does before its COMMIT. */
  join (work: BatchWork): void {
    this.#work.push(work)
  }

  /** Runs `write` in the next batch. It must throw only refusals (Refusal) once it has written: see the class. */
  run<R> (write: () => R): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0) this.#awaitCompany(this.#clock(), companyTurns)
      this.#queue.push({ write, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  /**
   * Flushes after a few turns of the event loop, or sooner once the batch is full or has waited
   * companyWaitMs: a COMMIT costs the same for one write as for thirty, and when reads and writes come
   * mixed, one turn's batch held one or two writes (the mix cost 1.9x its parts: "The mix" in
   * docs/benchmarks-history.md). A turn lasts as long as the requests it reads, so the wait grows with
   * the load that fills it; on an idle loop the turns pass at once. setImmediate runs after the poll
   * phase: every request read in the turn joins the batch.
   */
  #awaitCompany (since: number, turns: number): void {
    setImmediate(() => {
      const waits = turns > 1 && this.#queue.length > 0 && this.#queue.length < fullBatch && this.#clock() - since < companyWaitMs
      if (waits) this.#awaitCompany(since, turns - 1)
      else this.flush()
    })
  }

  /** Commits the pending writes now (also before the database closes), then settles their promises. */
  flush (): void {
    const batch = this.#queue
    if (batch.length === 0) return
    this.#queue = []
    this.#onBatch(batch.length)
    let outcomes: Outcome[]
    try {
      outcomes = this.#transaction(batch)
    } catch (error) {
      if (!(error instanceof WriteFailed) || batch.length === 1) {
        for (const pending of batch) pending.reject(reason(error))
        return
      }
      // One write failed with its neighbours' work in the transaction: each on its own now.
      outcomes = batch.map(pending => {
        try {
          return this.#transaction([pending])[0]!
        } catch (error) {
          return { ok: false, error: reason(error) }
        }
      })
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) pending.resolve(outcome.value)
      else pending.reject(outcome.error)
    })
  }

  /** Runs the writes from BEGIN to COMMIT; throws (rolled back) when the transaction cannot commit them all as run. */
  #transaction (batch: PendingWrite[]): Outcome[] {
    const outcomes: Outcome[] = []
    try {
      this.#begin.run()
      for (const { write } of batch) {
        try {
          outcomes.push({ ok: true, value: write() })
        } catch (error) {
          // Some failures (disk full, I/O error, a trigger's RAISE(ROLLBACK)) end the whole transaction.
          if (!this.#db.inTransaction) throw error
          if (!isRefusal(error)) throw new WriteFailed('a write failed', { cause: error })
          outcomes.push({ ok: false, error })
        }
      }
      for (const work of this.#work) work.write()
      this.#commit.run()
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run()
      for (const work of this.#work) work.discard()
      throw error
    }
    this.#onCommit()
    return outcomes
  }
}
