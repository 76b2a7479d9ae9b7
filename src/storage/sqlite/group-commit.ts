// SQLite group commit: one transaction per event-loop tick, a savepoint per write.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'

interface PendingWrite {
  write: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: the writes that arrive within one event-loop tick run in ONE transaction, each in a
 * savepoint of its own (a db.transaction() function called inside a transaction is one), so a write
 * that fails (409, 412) rolls back alone. A commit is the dearest part of a write, and one commit for
 * the batch instead of one per write is what pays (issue 6). Every write is acknowledged only after
 * the COMMIT, so an acknowledged write is as durable as before; a failed COMMIT fails every write of
 * the batch. The transaction never spans an await: the batch runs synchronously from BEGIN to COMMIT.
 */
export class GroupCommit {
  readonly #db: Database.Database
  readonly #begin: Statement<[]>
  readonly #commit: Statement<[]>
  readonly #rollback: Statement<[]>
  readonly #onBatch: (size: number) => void
  readonly #onCommit: () => void
  #queue: PendingWrite[] = []

  /** `onCommit`: told after each batch commits, before its writers hear of it. */
  constructor (db: Database.Database, onCommit: () => void, onBatch: (size: number) => void = () => {}) {
    this.#db = db
    this.#onCommit = onCommit
    this.#onBatch = onBatch
    // IMMEDIATE takes the write lock before the first read, so a check and its write see the same row
    // even if another connection (another process) writes to the file.
    this.#begin = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#rollback = db.prepare('ROLLBACK')
  }

  /** Runs `write` (a db.transaction() function, so a savepoint here) in the next batch. */
  run<R> (write: () => R): Promise<R> {
    return new Promise((resolve, reject) => {
      // setImmediate runs after the poll phase, so every request read in this tick joins the batch.
      if (this.#queue.length === 0) setImmediate(() => this.flush())
      this.#queue.push({ write, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  /** Commits the pending writes now (also before the database closes), then settles their promises. */
  flush (): void {
    const batch = this.#queue
    if (batch.length === 0) return
    this.#queue = []
    const outcomes: { ok: boolean, value: unknown }[] = []
    try {
      this.#begin.run()
      for (const { write } of batch) {
        try {
          outcomes.push({ ok: true, value: write() })
        } catch (error) {
          // Some failures (disk full, I/O error, a trigger's RAISE(ROLLBACK)) end the whole transaction:
          // the batch's earlier writes are gone and later ones would commit on their own, so stop here.
          if (!this.#db.inTransaction) throw error
          outcomes.push({ ok: false, value: error })
        }
      }
      this.#commit.run()
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run()
      for (const pending of batch) pending.reject(error)
      return
    }
    this.#onBatch(batch.length)
    this.#onCommit()
    batch.forEach((pending, i) => {
      const { ok, value } = outcomes[i]!
      if (ok) pending.resolve(value)
      else pending.reject(value)
    })
  }
}
