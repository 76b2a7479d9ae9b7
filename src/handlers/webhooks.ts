// Handlers of the webhook-endpoint operations: registration (checked against the caller's rights and the SSRF guard) and management.
import { uuidv7 } from 'uuidv7'
import type { ServiceHandlers, WebhookEndpoint } from '../contract/api-types.js'
import type { Caller } from '../access/auth.js'
import { ApiError, NotFoundError } from '../http/errors.js'
import { allScopes } from '../access/api-keys.js'
import type { EndpointOwner, EventFeed, StoredWebhookEndpoint, WebhookRepository } from '../storage/types.js'
import { EndpointCapError } from '../storage/webhook-rows.js'
import { type AddressPolicy, RefusedUrlError } from '../webhooks/address-policy.js'
import { readScopeOf } from '../events/scopes.js'
import { newSecret } from '../webhooks/signature.js'
import { recordId } from './input.js'

type WebhookHandlers = Pick<ServiceHandlers, 'listWebhookEndpoints' | 'createWebhookEndpoint' | 'getWebhookEndpoint' | 'deleteWebhookEndpoint' | 'rotateWebhookSecret' | 'enableWebhookEndpoint'>

export interface WebhookHandlerOptions {
  webhooks: WebhookRepository
  events: EventFeed
  policy: AddressPolicy
  /** WEBHOOK_ENDPOINTS_MAX */
  max: number
  /** WEBHOOK_ENDPOINTS_PER_KEY: an admin key has none of its own. */
  perKey: number
  /** Milliseconds since the epoch. */
  clock: () => number
}

/** How long a rotated-out secret still signs deliveries, so receivers can switch at any moment in between. */
const overlap = 24 * 3600 * 1000

const iso = (millis: number | null): string | null => millis === null ? null : new Date(millis).toISOString()

function view (endpoint: StoredWebhookEndpoint): WebhookEndpoint {
  return {
    endpoint_id: endpoint.endpointId,
    url: endpoint.url,
    types: endpoint.types,
    description: endpoint.description,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    failing_since: iso(endpoint.failingSince),
    created_at: endpoint.createdAt
  }
}

/** Each type (a known one: the contract's enum) must be readable by the registering key (the admin key reads all). */
function checkTypes (types: string[], caller: Caller): void {
  // The security handler let only keys through.
  const scopes = (caller as { scopes: readonly string[] }).scopes
  const missing = [...new Set(types.map(readScopeOf))].filter(scope => !scopes.includes(scope))
  if (missing.length > 0) {
    throw new ApiError(403, '/problems/missing-scope', `Receiving these event types needs the scope ${missing.join(', ')}, which this API key lacks`)
  }
}

/**
 * Whose endpoints the caller reaches: those its key registered; an admin key (one holding every scope, as
 * ADMIN_API_KEY and the first admin key do) reaches every endpoint, including those of revoked keys.
 * Another key's endpoint is answered as absent (404), so that its id, URL and secret stay that key's.
 */
function ownerFor (caller: Caller): EndpointOwner {
  // securityHandlers let only keys through to these operations.
  const { keyId, scopes } = caller as Extract<Caller, { kind: 'key' }>
  return allScopes.every(scope => scopes.includes(scope)) ? null : keyId
}

/**
 * The 409 for a registration past a cap, in terms its caller can act on: a key at its own cap is told
 * how many it has; a full deployment is not counted (a key sees only its own endpoints), and a key is
 * pointed at what it may delete, or at the operator when it has none.
 */
function tooManyEndpoints ({ cap, held }: EndpointCapError, owner: EndpointOwner): ApiError {
  const detail = cap === 'key'
    ? `This API key already has ${held} webhook endpoints, as many as one key may have; delete one it no longer uses (GET /webhook-endpoints lists them)`
    : owner === null
      ? 'This deployment has as many webhook endpoints as it allows; delete one no longer used (GET /webhook-endpoints lists them all), or raise WEBHOOK_ENDPOINTS_MAX'
      : held > 0
        ? 'This deployment has as many webhook endpoints as it allows; delete one of this key\'s that it no longer uses (GET /webhook-endpoints lists them), or ask the service\'s operator for room'
        : 'This deployment has as many webhook endpoints as it allows, none of them this key\'s; ask the service\'s operator for room'
  return new ApiError(409, '/problems/too-many-webhook-endpoints', detail)
}

export function webhookHandlers ({ webhooks, events, policy, max, perKey, clock }: WebhookHandlerOptions): WebhookHandlers {
  async function found (id: string, endpoint: Promise<StoredWebhookEndpoint | null>): Promise<StoredWebhookEndpoint> {
    const result = await endpoint
    if (result === null) throw new NotFoundError('webhook endpoint', id)
    return result
  }

  return {
    async listWebhookEndpoints (request) {
      return { items: (await webhooks.list(ownerFor(request.caller))).map(view) }
    },

    async createWebhookEndpoint (request, reply) {
      const { url, types, description = null } = request.body
      checkTypes(types, request.caller)
      try {
        await policy.check(url)
      } catch (error) {
        if (!(error instanceof RefusedUrlError)) throw error
        throw new ApiError(400, '/problems/refused-webhook-url', 'The webhook URL cannot be delivered to', [{ detail: error.message, pointer: '#/url' }], 'Refused webhook URL')
      }
      const secret = newSecret()
      const owner = ownerFor(request.caller)
      let endpoint: StoredWebhookEndpoint
      try {
        endpoint = await webhooks.create({
          endpointId: uuidv7(),
          url,
          types,
          description,
          // securityHandlers let only keys through to this operation.
          keyId: (request.caller as Extract<Caller, { kind: 'key' }>).keyId,
          secret,
          createdAt: new Date(clock()).toISOString(),
          // A new endpoint receives what happens from now on.
          position: await events.head()
        }, max, owner === null ? undefined : perKey)
      } catch (error) {
        if (error instanceof EndpointCapError) throw tooManyEndpoints(error, owner)
        throw error
      }
      reply.code(201).header('location', `/webhook-endpoints/${endpoint.endpointId}`)
      return { endpoint: view(endpoint), secret, previous_secret_expires_at: null }
    },

    async getWebhookEndpoint (request) {
      const id = recordId(request.params.endpoint_id)
      return view(await found(id, webhooks.get(id, ownerFor(request.caller))))
    },

    async deleteWebhookEndpoint (request, reply) {
      const id = recordId(request.params.endpoint_id)
      if (!await webhooks.delete(id, ownerFor(request.caller))) throw new NotFoundError('webhook endpoint', id)
      return reply.code(204).send()
    },

    async rotateWebhookSecret (request) {
      const id = recordId(request.params.endpoint_id)
      const secret = newSecret()
      const expires = clock() + overlap
      const endpoint = await found(id, webhooks.rotate(id, ownerFor(request.caller), secret, expires))
      return { endpoint: view(endpoint), secret, previous_secret_expires_at: iso(expires) }
    },

    async enableWebhookEndpoint (request) {
      const id = recordId(request.params.endpoint_id)
      const owner = ownerFor(request.caller)
      const current = await found(id, webhooks.get(id, owner))
      // Enabling an enabled endpoint changes nothing (its queue and cursor stay).
      if (current.status === 'enabled') return view(current)
      return view(await found(id, webhooks.enable(id, owner, await events.head())))
    }
  }
}
