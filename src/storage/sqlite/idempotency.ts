// SQLite idempotency entries: stored in the transaction of the record they belong to.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { IdempotencyKeyTakenError } from '../../domain/outcomes.js'
import type { IdempotencyEntry, IdempotencyStore } from '../types.js'

/** Idempotency entries: stored with their record, forgotten once expired (swept on every keyed create). */
export class SqliteIdempotency implements IdempotencyStore {
  readonly #find: Statement<[string, string, number], { fingerprint: string, status: number, headers: string, body: string }>
  readonly #insert: Statement<[Omit<IdempotencyEntry, 'response'> & { status: number, headers: string, body: string }]>
  readonly #sweep: Statement<[number]>
  readonly #release: Statement<[string, string]>

  constructor (db: Database.Database) {
    this.#find = db.prepare('SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = ? AND key = ? AND expires_at > ?')
    this.#insert = db.prepare(`INSERT INTO idempotency_keys (scope, key, fingerprint, status, headers, body, expires_at)
      VALUES (@scope, @key, @fingerprint, @status, @headers, @body, @expiresAt)`)
    // The index on expires_at keeps this cheap, so no separate cleanup job is needed.
    this.#sweep = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?')
    this.#release = db.prepare('DELETE FROM idempotency_keys WHERE scope = ? AND key = ?')
  }

  async find (scope: string, key: string, now: number) {
    const row = this.#find.get(scope, key, now)
    if (row === undefined) return null
    return { fingerprint: row.fingerprint, response: { status: row.status, headers: JSON.parse(row.headers), body: row.body } }
  }

  /** Call inside the record's transaction. */
  store ({ response, ...entry }: IdempotencyEntry, now: number): void {
    this.#sweep.run(now)
    try {
      this.#insert.run({ ...entry, status: response.status, headers: JSON.stringify(response.headers), body: response.body })
    } catch (error) {
      // Another process on the same file stored the key first; the failed statement wrote nothing.
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new IdempotencyKeyTakenError()
      throw error
    }
  }

  /** Gives back a key `store` claimed in this transaction for a record that could not be written. */
  release ({ scope, key }: IdempotencyEntry): void {
    this.#release.run(scope, key)
  }

  sweep (now: number): void {
    this.#sweep.run(now)
  }
}
