// PostgreSQL API keys: each node keeps the few keys in memory for a short while; a revocation tells every node.
import type { ApiKeyInfo } from '../../domain/api-key-types.js'
import { type ApiKeyRow, keyInfo, type StoredKey, storedKey } from '../api-key-rows.js'
import type { ApiKeyRepository } from '../types.js'
import { isoTimestamp } from './table.js'
import { connect, type PipelinedClients, type PostgresSettings } from './connection.js'
import type pg from 'pg'

const channel = 'books_students_api_keys'
const columns = `key_id, name, scopes, secret_hash, ${isoTimestamp('created_at')} AS created_at, ${isoTimestamp('revoked_at')} AS revoked_at`

/**
 * Every request with a key looks it up, so each node keeps what it read for `ttl` ms: a revocation made
 * on another node (or by the keys CLI) reaches this one within that time, however notifications fare.
 * Revocations are also NOTIFYed so that nodes usually forget the key at once; a NOTIFY serialises the
 * commits that send one, which is harmless for an event this rare, and why record writes never send any.
 */
export class PostgresApiKeys implements ApiKeyRepository {
  readonly #reads: PipelinedClients
  readonly #settings: PostgresSettings
  readonly #ttl: number
  readonly #known = new Map<string, { key: StoredKey, until: number }>()
  readonly #revoked = new Set<(keyId: string) => void>()
  #listener: pg.Client | null = null
  #retry: NodeJS.Timeout | null = null
  #closed = false

  constructor (reads: PipelinedClients, settings: PostgresSettings, ttl: number) {
    this.#reads = reads
    this.#settings = settings
    this.#ttl = ttl
  }

  /** Starts listening for revocations; while not listening, the TTL alone bounds how stale a key is. */
  async listen (): Promise<void> {
    if (this.#closed || this.#ttl === 0) return
    try {
      const client = await connect(this.#settings, false)
      const lost = () => {
        if (this.#listener !== client) return
        this.#listener = null
        // Notifications sent while not listening are lost for good: forget everything instead.
        this.#known.clear()
        this.#listenLater()
      }
      client.on('error', lost)
      client.on('end', lost)
      client.on('notification', ({ payload }) => {
        if (payload !== undefined) {
          this.#known.delete(payload)
          this.#tellRevoked(payload)
        }
      })
      this.#listener = client
      await client.query(`LISTEN ${channel}`)
      if (this.#closed) await client.end()
    } catch {
      this.#listenLater()
    }
  }

  /** Tries to listen again in a second; one attempt pending at a time, none once closed. */
  #listenLater (): void {
    if (this.#closed) return
    if (this.#retry !== null) clearTimeout(this.#retry)
    this.#retry = setTimeout(() => { this.listen().catch(() => {}) }, 1000).unref()
  }

  async create ({ keyId, name, scopes, secretHash }: { keyId: string, name: string, scopes: ApiKeyInfo['scopes'], secretHash: Buffer }): Promise<ApiKeyInfo> {
    const { rows } = await this.#reads.query<ApiKeyRow>({
      text: `INSERT INTO api_keys (key_id, name, scopes, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
      values: [keyId, name, scopes.join(' '), secretHash, new Date().toISOString()]
    })
    return keyInfo(rows[0]!)
  }

  async createFirst ({ keyId, name, scopes, secretHash }: { keyId: string, name: string, scopes: ApiKeyInfo['scopes'], secretHash: Buffer }): Promise<ApiKeyInfo | null> {
    // The settings row is the claim, made once in the database's life: of nodes that start together,
    // one inserts it, and the others' inserts wait on its primary key until that commits, then do nothing.
    const { rows } = await this.#reads.query<ApiKeyRow>({
      text: `WITH claim AS (
          INSERT INTO settings (name, value) SELECT 'first_admin_key', $1::bytea WHERE NOT EXISTS (SELECT 1 FROM api_keys)
          ON CONFLICT (name) DO NOTHING RETURNING 1
        )
        INSERT INTO api_keys (key_id, name, scopes, secret_hash, created_at)
        SELECT $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM claim) RETURNING ${columns}`,
      values: [Buffer.from(keyId), keyId, name, scopes.join(' '), secretHash, new Date().toISOString()]
    })
    return rows.length === 0 ? null : keyInfo(rows[0]!)
  }

  async rename (keyId: string, name: string): Promise<void> {
    this.#known.delete(keyId)
    await this.#reads.query({ text: 'UPDATE api_keys SET name = $2 WHERE key_id = $1', values: [keyId, name] })
  }

  async find (keyId: string): Promise<StoredKey | null> {
    const now = Date.now()
    const cached = this.#known.get(keyId)
    if (cached !== undefined && cached.until > now) return cached.key
    const { rows } = await this.#reads.query<ApiKeyRow>({ name: 'api-keys-find', text: `SELECT ${columns} FROM api_keys WHERE key_id = $1`, values: [keyId] })
    const row = rows[0]
    if (row === undefined) return null
    const key = storedKey(row)
    if (this.#ttl > 0) this.#known.set(keyId, { key, until: now + this.#ttl })
    return key
  }

  async list (): Promise<ApiKeyInfo[]> {
    const { rows } = await this.#reads.query<ApiKeyRow>({ text: `SELECT ${columns} FROM api_keys ORDER BY created_at, key_id` })
    return rows.map(keyInfo)
  }

  async revoke (keyId: string): Promise<boolean> {
    this.#known.delete(keyId)
    const { rows } = await this.#reads.query({
      text: `WITH revoked AS (UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL RETURNING key_id)
        SELECT pg_notify('${channel}', key_id) FROM revoked`,
      values: [keyId, new Date().toISOString()]
    })
    // This node's listeners hear at once, notification or not (none is listened for when the TTL is 0).
    if (rows.length > 0) this.#tellRevoked(keyId)
    return rows.length > 0
  }

  onRevoked (listener: (keyId: string) => void): () => void {
    this.#revoked.add(listener)
    return () => this.#revoked.delete(listener)
  }

  #tellRevoked (keyId: string): void {
    for (const listener of this.#revoked) listener(keyId)
  }

  /** Whether the connection that hears revocations is open. */
  get listening (): boolean {
    return this.#listener !== null
  }

  async close (): Promise<void> {
    this.#closed = true
    if (this.#retry !== null) clearTimeout(this.#retry)
    const listener = this.#listener
    this.#listener = null
    await listener?.end().catch(() => {})
  }
}
