// An API key as both engines store it: one row shape, read into what callers see.
import { type ApiKeyInfo, isScope } from '../domain/api-key-types.js'

export interface ApiKeyRow {
  key_id: string
  name: string
  /** The scopes, space-separated. */
  scopes: string
  secret_hash: Buffer
  created_at: string
  revoked_at: string | null
}

/** A key with its secret's hash, as ApiKeyRepository.find returns it. */
export type StoredKey = ApiKeyInfo & { secretHash: Buffer }

export function keyInfo (row: ApiKeyRow): ApiKeyInfo {
  return { key_id: row.key_id, name: row.name, scopes: row.scopes.split(' ').filter(isScope), created_at: row.created_at, revoked_at: row.revoked_at }
}

export const storedKey = (row: ApiKeyRow): StoredKey => ({ ...keyInfo(row), secretHash: row.secret_hash })
