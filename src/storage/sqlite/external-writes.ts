// Empties the SQLite engine's caches when another connection commits to the same file.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'

/**
 * Notices commits made by other connections to the file (the keys CLI, sqlite3, another process) so
 * that caches never outlive them. PRAGMA data_version changes only for such commits; reading it costs
 * about a third of a point lookup, so it is read at most once per event-loop turn: a request is
 * answered from state no older than the turn in which it was read from its socket.
 */
export class ExternalWrites {
  readonly #dataVersion: Statement<[], number>
  readonly #caches: { clear (): void }[] = []
  #seen: number
  #checkedThisTurn = false
  readonly #endTurn = () => { this.#checkedThisTurn = false }

  constructor (db: Database.Database) {
    this.#dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
    this.#seen = this.#dataVersion.get()!
  }

  /** A cache to empty whenever another connection commits. */
  watch<C extends { clear (): void }> (cache: C): C {
    this.#caches.push(cache)
    return cache
  }

  /** Call before answering from a cache. */
  check (): void {
    if (this.#checkedThisTurn) return
    this.#checkedThisTurn = true
    setImmediate(this.#endTurn)
    const version = this.#dataVersion.get()!
    if (version === this.#seen) return
    this.#seen = version
    for (const cache of this.#caches) cache.clear()
  }
}
