// PostgreSQL idempotency entries: claimed with their record (see table.ts), looked up here, swept now and then.
import type { IdempotencyStore } from '../types.js'
import type { PipelinedClients } from './connection.js'

export class PostgresIdempotency implements IdempotencyStore {
  readonly #reads: PipelinedClients

  constructor (reads: PipelinedClients) {
    this.#reads = reads
  }

  async find (scope: string, key: string, now: number) {
    const { rows } = await this.#reads.query<{ fingerprint: string, status: number, headers: string, body: string }>({
      name: 'idempotency-find',
      text: 'SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at > $3',
      values: [scope, key, now]
    })
    const row = rows[0]
    if (row === undefined) return null
    return { fingerprint: row.fingerprint, response: { status: row.status, headers: JSON.parse(row.headers), body: row.body } }
  }

  /**
   * Deletes up to `batch` expired entries; any node may run it at any time. A keyed create takes over
   * an expired entry of its own key, so this only bounds the table's size. (PostgreSQL's DELETE has no
   * LIMIT, hence the ctid subquery.)
   */
  async sweep (now: number, batch = 1000): Promise<number> {
    const { rowCount } = await this.#reads.query({
      name: 'idempotency-sweep',
      text: 'DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)',
      values: [now, batch]
    })
    // A DELETE always reports its count (pg types it nullable for statements that have none).
    return rowCount!
  }
}
