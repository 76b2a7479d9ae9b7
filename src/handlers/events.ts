// Handlers of the change feed: a page of events, and the live stream; a key sees the events of what it may read.
import type { FastifyRequest } from 'fastify'
import type { ServiceHandlers } from '../contract/api-types.js'
import { CursorGoneError, MissingScopeError, TooManyStreamsError, ValidationError } from '../http/errors.js'
import { readScopeOf } from '../events/scopes.js'
import type { EventStreams } from '../events/streams.js'
import { eventJson, eventTypes } from '../storage/events.js'
import type { ApiKeyRepository, EventFeed } from '../storage/types.js'

type EventHandlers = Pick<ServiceHandlers, 'listEvents' | 'streamEvents'>

const json = 'application/json; charset=utf-8'

/** The event types the request asks for (every type its key may read when it names none). */
function typesOf (request: FastifyRequest, asked: string[] | undefined): string[] {
  // The security handler let only keys through.
  const scopes = (request.caller as { scopes: readonly string[] }).scopes
  if (asked === undefined) return eventTypes.filter(type => scopes.includes(readScopeOf(type)))
  // The contract's pattern admits only known types, comma-separated.
  const types = [...new Set(asked.flatMap(list => list.split(',')))]
  const unreadable = types.find(type => !scopes.includes(readScopeOf(type)))
  if (unreadable !== undefined) throw new MissingScopeError([readScopeOf(unreadable)])
  return types
}

export interface EventHandlerOptions {
  retentionDays: number
}

export function eventHandlers (feed: EventFeed, streams: EventStreams, apiKeys: ApiKeyRepository, { retentionDays }: EventHandlerOptions): EventHandlers {
  /** The checked position to read after: `given`, or `start` when none was given. */
  async function startingPoint (given: string | undefined, parameter: 'after' | 'Last-Event-ID', start: () => Promise<string>): Promise<string> {
    if (given === undefined) return start()
    const state = await feed.check(given)
    if (state === 'gone') throw new CursorGoneError(retentionDays)
    if (state === 'invalid') {
      throw new ValidationError(parameter === 'after' ? 'querystring' : 'headers', [{ parameter, detail: 'is not a position of this feed' }])
    }
    return given
  }

  return {
    async listEvents (request, reply) {
      const types = typesOf(request, request.query.types)
      const after = await startingPoint(request.query.after, 'after', () => feed.oldest())
      // The contract's default (100) fills an absent limit during validation.
      const { limit = 100 } = request.query
      const page = await feed.read(after, types, limit)
      const items = page.events.map(event => eventJson(event.position, event.envelope)).join(',')
      return reply.type(json).send(`{"items":[${items}],"next_cursor":"${page.next}"}`)
    },

    async streamEvents (request, reply) {
      const types = typesOf(request, request.query.types)
      const lastEventId = request.headers['last-event-id'] as string | undefined
      const after = lastEventId !== undefined
        ? await startingPoint(lastEventId, 'Last-Event-ID', () => feed.head())
        : await startingPoint(request.query.after, 'after', () => feed.head())
      const stream = reply
        .type('text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        // nginx and its kin would otherwise hold frames back to fill their buffers.
        .header('x-accel-buffering', 'no')
      // HEAD asks what a GET would answer: the headers, and no stream to hold open.
      if (request.method === 'HEAD') return stream.send()
      const { keyId } = request.caller as { keyId: string }
      if (!streams.admits(keyId)) {
        reply.header('retry-after', 10)
        throw new TooManyStreamsError(streams.perKey)
      }
      const body = streams.open({
        keyId,
        types,
        after,
        // ADMIN_API_KEY is the operator's and cannot be revoked through the API; a stored key can.
        stillAuthorised: async () => keyId === 'admin' || (await apiKeys.find(keyId))?.revoked_at === null,
        onError: error => request.log.error({ err: error }, 'event stream read failed')
      })
      return stream.send(body)
    }
  }
}
