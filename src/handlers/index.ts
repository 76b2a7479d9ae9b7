// Composes the per-resource handlers into the one object fastify-openapi-glue routes operationIds to.
import type { ServiceHandlers } from '../contract/api-types.js'
import { CursorCodec } from '../http/cursor.js'
import type { EventStreams } from '../events/streams.js'
import type { Repositories } from '../storage/types.js'
import { bookHandlers } from './books.js'
import { eventHandlers } from './events.js'
import { webhookHandlers } from './webhooks.js'
import type { AddressPolicy } from '../webhooks/address-policy.js'
import type { Exports } from './export.js'
import { type ImportHandlerOptions, importHandlers } from './imports.js'
import { Idempotency } from './idempotency.js'
import { studentHandlers } from './students.js'

export interface HandlerOptions {
  idempotencyTtlSeconds: number
  /** This node's running exports, and their limits. */
  exports: Exports
  imports: Omit<ImportHandlerOptions, 'imports'>
  /** The live event streams of this process. */
  streams: EventStreams
  eventRetentionDays: number
  /** WEBHOOK_ENDPOINTS_MAX */
  webhookEndpointsMax: number
  /** WEBHOOK_ENDPOINTS_PER_KEY */
  webhookEndpointsPerKey: number
  /** The SSRF guard webhook URLs are registered through. */
  addressPolicy: AddressPolicy
  /** Milliseconds since the epoch. */
  clock: () => number
}

export async function serviceHandlers (repositories: Repositories, options: HandlerOptions): Promise<ServiceHandlers> {
  const lists = { cursors: new CursorCodec(await repositories.cursorSecret()), exports: options.exports }
  const idempotency = new Idempotency(repositories.idempotency, options.idempotencyTtlSeconds)
  return {
    ...bookHandlers(repositories.books, lists, idempotency),
    ...studentHandlers(repositories.students, lists, idempotency),
    ...importHandlers({ imports: repositories.imports, ...options.imports }),
    ...eventHandlers(repositories.events, options.streams, repositories.apiKeys, { retentionDays: options.eventRetentionDays }),
    ...webhookHandlers({ webhooks: repositories.webhooks, events: repositories.events, policy: options.addressPolicy, max: options.webhookEndpointsMax, perKey: options.webhookEndpointsPerKey, clock: options.clock })
  }
}
