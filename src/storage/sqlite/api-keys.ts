// SQLite API keys, kept in memory until one changes.
import type Database from 'better-sqlite3'
import { type ApiKeyRow, keyInfo, type StoredKey, storedKey } from '../api-key-rows.js'
import type { ApiKeyRepository } from '../types.js'
import type { ExternalWrites } from './external-writes.js'

export function sqliteApiKeys (db: Database.Database, external: ExternalWrites): ApiKeyRepository {
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
      return revoke.run(new Date().toISOString(), keyId).changes > 0
    }
  }
}
