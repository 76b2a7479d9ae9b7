// The change feed, its event streams, and the webhooks that deliver it.
import { parseAllowlist } from '../domain/addresses.js'
import { concern } from './concern.js'
import { integer, list } from './parse.js'

function allowed (entry: string): boolean {
  try {
    parseAllowlist([entry])
    return true
  } catch {
    return false
  }
}

export const events = concern({
  title: 'Change feed and webhooks',
  about: 'How long the change feed keeps events, what its streams may cost, and where and how webhooks deliver them (see [Changes](changes.md)).',
  variables: {
    eventRetentionDays: { name: 'EVENTS_RETENTION_DAYS', default: '30', reader: integer(1, 3650), meaning: 'days the change feed keeps events (pruned hourly); an older cursor is a 410' },
    eventsPoll: { name: 'EVENTS_POLL_MS', default: '250', reader: integer(10, 60_000), meaning: 'ms between looks for events committed by other processes or nodes (this process\'s own writes wake streams at once)' },
    eventStreamHeartbeat: { name: 'EVENT_STREAM_HEARTBEAT_MS', default: '15000', reader: integer(10, 600_000), meaning: 'ms between a stream\'s heartbeat comments; each also re-checks its key' },
    eventStreamStall: { name: 'EVENT_STREAM_STALL_MS', default: '10000', reader: integer(10, 600_000), meaning: 'ms a stream\'s client may leave frames unread before it is cut off' },
    eventStreamMaxAge: { name: 'EVENT_STREAM_MAX_AGE_MS', default: String(60 * 60 * 1000), reader: integer(100, 86_400_000), meaning: 'ms a stream lasts at most; its client then reconnects with its last id' },
    eventStreamsPerKey: { name: 'EVENT_STREAMS_PER_KEY', default: '5', reader: integer(1, 10_000), meaning: 'streams one API key may hold open at once (429 beyond)' },
    webhookAllowedAddresses: { name: 'WEBHOOK_ALLOWED_ADDRESSES', default: '', reader: list('IP addresses or CIDR ranges, comma-separated', 'IP addresses or CIDR ranges', allowed), meaning: 'addresses webhooks may reach although not public; only these may also be reached over plain http or on ports other than 80 and 443' },
    // Standard Webhooks' advice, and what openapi.yaml promises receivers.
    webhookTimeout: { name: 'WEBHOOK_TIMEOUT_MS', default: '15000', reader: integer(100, 120_000), meaning: 'ms a webhook receiver has to answer' },
    // Five days, as Svix does: long enough to ride out a receiver's long weekend.
    webhookDisableAfterHours: { name: 'WEBHOOK_DISABLE_AFTER_HOURS', default: '120', reader: integer(1, 8760), meaning: 'hours of failing deliveries, with no success, after which an endpoint is disabled' },
    webhookEndpointsMax: { name: 'WEBHOOK_ENDPOINTS_MAX', default: '100', reader: integer(1, 1000), meaning: 'webhook endpoints the deployment may have; registering one more is a 409' },
    // A tenth of the deployment's: a few receivers per integration, and no one key can take them all.
    webhookEndpointsPerKey: { name: 'WEBHOOK_ENDPOINTS_PER_KEY', default: '10', reader: integer(1, 1000), meaning: 'webhook endpoints one API key may have registered (an admin key: any number, within `WEBHOOK_ENDPOINTS_MAX`); registering one more is a 409' },
    webhookPollInterval: { name: 'WEBHOOK_POLL_MS', default: '1000', reader: integer(0, 600_000), meaning: 'ms between this node\'s webhook delivery runs (also woken by its own writes); `0`: this node delivers nothing' }
  }
})
