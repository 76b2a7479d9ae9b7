// API keys: their format, scopes and hashing; only a key's hash is ever stored, and it is compared in constant time.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import { allScopes, type ApiKeyInfo, type Scope } from '../domain/api-key-types.js'
import type { ApiKeyRepository } from '../storage/types.js'

// Callers take the key vocabulary from here with the key logic; storage imports api-key-types.js directly.
export { allScopes, type ApiKeyInfo, isScope, type Scope } from '../domain/api-key-types.js'

/**
 * `bsk_<id>_<secret>`: the public id finds the stored row, the 256-bit secret proves possession.
 * The prefix makes a leaked key easy to recognise (secret scanners, logs).
 */
const keyPattern = /^bsk_([0-9a-f]{16})_([\w-]{43})$/

export function newKey (): { keyId: string, key: string, secretHash: Buffer } {
  const keyId = randomBytes(8).toString('hex')
  const secret = randomBytes(32).toString('base64url')
  return { keyId, key: `bsk_${keyId}_${secret}`, secretHash: hashSecret(secret) }
}

/** A plain SHA-256 suffices: the secret is 256 random bits, so there is nothing to brute-force. */
export function hashSecret (secret: string): Buffer {
  // The one-shot digest: half the cost of createHash() for a short input, paid on every request with a key.
  return hash('sha256', secret, 'buffer')
}

export function parseKey (key: string): { keyId: string, secret: string } | null {
  const match = keyPattern.exec(key)
  return match === null ? null : { keyId: match[1]!, secret: match[2]! }
}

/** Compares hashes of equal length, so the time taken says nothing about how much matched. */
export function sameSecret (secret: string, storedHash: Buffer): boolean {
  return timingSafeEqual(hashSecret(secret), storedHash)
}

/** Creates and stores a key; the returned `key` is the only time its secret exists outside the caller's hands. */
export async function createKey (apiKeys: ApiKeyRepository, name: string, scopes: Scope[]): Promise<ApiKeyInfo & { key: string }> {
  const { keyId, key, secretHash } = newKey()
  return { ...await apiKeys.create({ keyId, name, scopes, secretHash }), key }
}

/** The first admin key's name once it was shown, and while it is not yet. */
export const firstKeyName = 'first admin key'
export const unshownFirstKeyName = 'first admin key (not shown)'

/**
 * On the first start (no key ever stored, no ADMIN_API_KEY) there would be no way in: create an admin
 * key and hand it back once to be printed, then `shown()` to mark it so. Null when a way in already
 * exists, or when another process starting on the same database made the first key. Called by a start
 * that already serves, so that the start that makes the key is the one that prints it.
 */
export async function firstAdminKey (adminApiKey: string | null, apiKeys: ApiKeyRepository): Promise<{ key: string, shown: () => Promise<void> } | null> {
  if (adminApiKey !== null) return null
  const { keyId, key, secretHash } = newKey()
  const created = await apiKeys.createFirst({ keyId, name: unshownFirstKeyName, scopes: [...allScopes], secretHash })
  return created === null ? null : { key, shown: () => apiKeys.rename(keyId, firstKeyName) }
}

/**
 * First keys stored but never shown: their start stopped between storing and printing. Nobody holds
 * their secret; the operator is told to make a key with the CLI and revoke these.
 */
export async function unshownFirstKeys (apiKeys: ApiKeyRepository): Promise<ApiKeyInfo[]> {
  return (await apiKeys.list()).filter(key => key.name === unshownFirstKeyName && key.revoked_at === null)
}
