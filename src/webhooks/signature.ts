// Standard Webhooks signatures: HMAC-SHA256 of "<id>.<timestamp>.<body>" under each `whsec_` secret.
import { createHmac, randomBytes } from 'node:crypto'

/** A new secret: 32 random bytes, as Standard Webhooks writes them. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

export function sign (secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** The `webhook-signature` value: one signature per secret still in use, space-separated. */
export function signatures (secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map(secret => sign(secret, id, timestamp, body)).join(' ')
}
