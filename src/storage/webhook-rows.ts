// Webhook endpoint rows as both engines read them, turned into what the repository returns, and the cap on how many there are.
import type { ClaimedDelivery, StoredWebhookEndpoint, WebhookDisabledReason } from './types.js'

/** An endpoint was not stored: its key (`cap: 'key'`) or the deployment holds as many as it may; `held` is how many the key has. */
export class EndpointCapError extends Error {
  override name = 'EndpointCapError'
  readonly cap: 'key' | 'deployment'
  readonly held: number

  constructor (cap: 'key' | 'deployment', held: number) {
    super(`The ${cap === 'key' ? 'key' : 'deployment'} holds as many webhook endpoints as it may`)
    this.cap = cap
    this.held = held
  }
}

export interface WebhookEndpointRow {
  endpoint_id: string
  url: string
  /** Space-separated. */
  types: string
  description: string | null
  key_id: string
  secret: string
  previous_secret: string | null
  /** PostgreSQL's bigint arrives as text. */
  previous_secret_expires_at: number | string | null
  status: 'enabled' | 'disabled'
  disabled_reason: WebhookDisabledReason | null
  failing_since: number | string | null
  created_at: string
  position: string
  imported_position: string
}

const millis = (value: number | string | null): number | null => value === null ? null : Number(value)

export function storedEndpoint (row: WebhookEndpointRow): StoredWebhookEndpoint {
  return {
    endpointId: row.endpoint_id,
    url: row.url,
    types: row.types.split(' '),
    description: row.description,
    keyId: row.key_id,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: millis(row.previous_secret_expires_at),
    status: row.status,
    disabledReason: row.disabled_reason,
    failingSince: millis(row.failing_since),
    createdAt: row.created_at,
    positions: { live: row.position, imported: row.imported_position }
  }
}

/** A claimed delivery's columns, beside its endpoint's. */
export interface ClaimedRow extends WebhookEndpointRow {
  delivery_id: number | string
  delivery_position: string
  body: string
  attempts: number
}

export function claimedDelivery (row: ClaimedRow): ClaimedDelivery {
  return {
    deliveryId: String(row.delivery_id),
    endpoint: storedEndpoint(row),
    position: row.delivery_position,
    body: row.body,
    attempts: row.attempts
  }
}
