// A table's FTS5 index, written by the service once per batch instead of by triggers in every write.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'

/**
 * FTS5 writes the terms it holds out as a segment of their own whenever a savepoint opens, and a
 * trigger runs inside its statement's: triggers made a segment per write, merged later, about 30 µs a
 * create (docs/benchmarks-history.md, where the time goes). The writes of a batch leave their changes here, and
 * the batch writes them just before its COMMIT, in the same transaction, so a search finds a write
 * as soon as it is acknowledged. In rowid order (FTS5 also writes out what it holds when a rowid goes
 * backwards), the changes of one row in the order they were made.
 */
export class SqliteSearchIndex {
  readonly #index: Statement<unknown[]>
  readonly #unindex: Statement<unknown[]>
  /** Each change: whether it indexes (or unindexes), the row's seq, and its searched columns' values. */
  #pending: [index: boolean, seq: number, values: unknown[]][] = []

  constructor (db: Database.Database, table: string, searched: readonly string[]) {
    const fts = `${table}_fts`
    const slots = searched.map(() => '?').join(', ')
    this.#index = db.prepare(`INSERT INTO ${fts} (rowid, ${searched.join(', ')}) VALUES (?, ${slots})`)
    // An external-content index forgets a row given the values it indexed for it.
    this.#unindex = db.prepare(`INSERT INTO ${fts} (${fts}, rowid, ${searched.join(', ')}) VALUES ('delete', ?, ${slots})`)
  }

  /** The row `seq` now holds these searched values. */
  indexed (seq: number, values: unknown[]): void {
    this.#pending.push([true, seq, values])
  }

  /** The row `seq`, which held these searched values, holds them no more. */
  unindexed (seq: number, values: unknown[]): void {
    this.#pending.push([false, seq, values])
  }

  /** Writes the batch's changes; called in its transaction, before COMMIT. */
  write (): void {
    // Array sort is stable: a row's changes keep their order.
    const pending = this.#pending.sort((a, b) => a[1] - b[1])
    this.#pending = []
    for (const [index, seq, values] of pending) (index ? this.#index : this.#unindex).run(seq, ...values)
  }

  /** Drops the batch's changes: it rolled back. */
  discard (): void {
    this.#pending = []
  }
}
