// SQLite API keys, kept in memory until one changes.
import type Database from 'better-sqlite3'
import { type ApiKeyRow, keyInfo, type StoredKey, storedKey } from '../api-key-rows.js'
import type { ApiKeyRepository } from '../types.js'
import type { ExternalWrites } from './external-writes.js'

/** How often, while anyone listens for revocations, the file is looked at for those of other processes (`npm run keys`). */
export const revocationPoll = 250

export function sqliteApiKeys (db: Database.Database, external: ExternalWrites): ApiKeyRepository & { close (): void } {
  // Every request with a key reads its row; the few keys there are stay in memory until one changes.
  const known = external.watch(new Map<string, StoredKey>())
  const insert = db.prepare<[ApiKeyRow]>(
    'INSERT INTO api_keys (key_id, name, scopes, secret_hash, created_at, revoked_at) VALUES (@key_id, @name, @scopes, @secret_hash, @created_at, @revoked_at)'
  )
  const find = db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE key_id = ?')
  const list = db.prepare<[], ApiKeyRow>('SELECT * FROM api_keys ORDER BY created_at, key_id')
  const revoke = db.prepare<[string, string]>('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL')
  const rename = db.prepare<[string, string]>('UPDATE api_keys SET name = ? WHERE key_id = ?')
  // The settings row is the claim, made once in the database's life; IMMEDIATE takes the write lock
  // before the check, so another process starting on the same file waits and then finds the key.
  const firstTaken = db.prepare<[], number>("SELECT EXISTS (SELECT 1 FROM api_keys) OR EXISTS (SELECT 1 FROM settings WHERE name = 'first_admin_key')").pluck()
  const claimFirst = db.prepare<[Buffer]>("INSERT INTO settings (name, value) VALUES ('first_admin_key', ?)")
  const createFirst = db.transaction((row: ApiKeyRow): boolean => {
    if (firstTaken.get() === 1) return false
    claimFirst.run(Buffer.from(row.key_id))
    insert.run(row)
    return true
  })
  const revokedIds = db.prepare<[], string>('SELECT key_id FROM api_keys WHERE revoked_at IS NOT NULL').pluck()
  // Changes only when another connection commits: most looks end here, at a third of a point lookup's cost.
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
  const listeners = new Set<(keyId: string) => void>()
  const tell = (keyId: string) => { for (const listener of listeners) listener(keyId) }
  let watch: { timer: NodeJS.Timeout, version: number, revoked: Set<string> } | null = null
  /** Revocations other processes committed since the last look. */
  const look = () => {
    // A listener told of a revocation may stop listening, and so end the watch, while this loop runs.
    const seen = watch!
    const version = dataVersion.get()!
    if (version !== seen.version) {
      seen.version = version
      for (const keyId of revokedIds.all()) {
        if (seen.revoked.has(keyId)) continue
        seen.revoked.add(keyId)
        tell(keyId)
      }
    }
  }
  const stopWatching = () => {
    if (watch !== null) clearInterval(watch.timer)
    watch = null
  }
  return {
    async create ({ keyId, name, scopes, secretHash }) {
      const row = { key_id: keyId, name, scopes: scopes.join(' '), secret_hash: secretHash, created_at: new Date().toISOString(), revoked_at: null }
      insert.run(row)
      known.clear()
      return keyInfo(row)
    },
    async createFirst ({ keyId, name, scopes, secretHash }) {
      const row = { key_id: keyId, name, scopes: scopes.join(' '), secret_hash: secretHash, created_at: new Date().toISOString(), revoked_at: null }
      if (!createFirst.immediate(row)) return null
      known.clear()
      return keyInfo(row)
    },
    async rename (keyId, name) {
      rename.run(name, keyId)
      known.clear()
    },
    async find (keyId) {
      external.check()
      const cached = known.get(keyId)
      if (cached !== undefined) return cached
      const row = find.get(keyId)
      if (row === undefined) return null
      const found = storedKey(row)
      known.set(keyId, found)
      return found
    },
    async list () {
      return list.all().map(keyInfo)
    },
    async revoke (keyId) {
      known.clear()
      const revoked = revoke.run(new Date().toISOString(), keyId).changes > 0
      if (revoked) {
        watch?.revoked.add(keyId)
        tell(keyId)
      }
      return revoked
    },
    onRevoked (listener) {
      listeners.add(listener)
      // What is revoked already is no news; the file is looked at only while someone listens.
      watch ??= { timer: setInterval(look, revocationPoll).unref(), version: dataVersion.get()!, revoked: new Set(revokedIds.all()) }
      return () => {
        if (listeners.delete(listener) && listeners.size === 0) stopWatching()
      }
    },
    /** Stops looking at the file (before it closes). */
    close: stopWatching
  }
}
