// The API key vocabulary: scopes, and a stored key as the operator sees it.
// Its own module, in the domain, so that the key logic (src/access/api-keys.ts) and the storage interface both import it, and not each other.
export const allScopes = ['books:read', 'books:write', 'students:read', 'students:write', 'webhooks:manage'] as const
export type Scope = typeof allScopes[number]

export const isScope = (value: string): value is Scope => (allScopes as readonly string[]).includes(value)

/** A stored key as the operator sees it: never the secret, never its hash. */
export interface ApiKeyInfo {
  key_id: string
  name: string
  scopes: Scope[]
  created_at: string
  revoked_at: string | null
}
