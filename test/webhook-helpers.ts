// Test doubles for webhooks: an in-memory EventFeed, a loopback receiver, a fake clock, a plain HMAC check.
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { eventEnvelope, type EventType } from '../src/storage/events.js'
import type { EventFeed, EventLane, PositionState, StoredEvent } from '../src/storage/types.js'
import type { Clock } from '../src/webhooks/worker.js'

/** An EventFeed in memory: positions are zero-padded numbers, 'gone' ones can be declared. */
export class FakeFeed implements EventFeed {
  readonly events: Array<StoredEvent & { lane: EventLane }> = []
  readonly gone = new Set<string>()
  readonly #listeners = new Set<() => void>()

  add (type: EventType, id = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60', lane: EventLane = 'live'): StoredEvent {
    const event = {
      position: String(this.events.length + 1).padStart(16, '0'),
      type,
      lane,
      envelope: eventEnvelope(type, `/books/${id}`, '2026-11-24T00:00:00.000Z', id, this.events.length + 1, { title: 'Dune' })
    }
    this.events.push(event)
    for (const listener of this.#listeners) listener()
    return event
  }

  async head () { return String(this.events.length).padStart(16, '0') }
  async oldest () { return '0'.padStart(16, '0') }
  async check (position: string): Promise<PositionState> { return this.gone.has(position) ? 'gone' : 'current' }
  async read (after: string, types: readonly string[], limit: number, lane?: EventLane) {
    const rest = this.events.filter(e => e.position > after)
    const page = rest.slice(0, limit)
    const next = page.length === limit ? page.at(-1)!.position : await this.head()
    const picked = page.filter(e => types.includes(e.type) && (lane === undefined || e.lane === lane))
    return { events: picked.map(({ lane: _, ...event }) => event), next, more: page.length === limit }
  }

  async prune () { return 0 }
  onCommit (listener: () => void) {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }
}

export interface Received { headers: IncomingHttpHeaders, body: string }

/** An HTTP receiver on 127.0.0.1 answering each request with what `answer` returns (status, headers, delay). */
export async function receiver (t: Test, answer: (count: number) => { status: number, headers?: Record<string, string>, hang?: boolean } = () => ({ status: 204 })) {
  const received: Received[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', chunk => { body += chunk })
    request.on('end', () => {
      received.push({ headers: request.headers, body })
      const { status, headers = {}, hang = false } = answer(received.length)
      if (hang) return
      response.writeHead(status, headers).end('x'.repeat(10_000))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received }
}

/** A clock the test moves; timers never fire by themselves (tests call runOnce). */
export function fakeClock (start = Date.parse('2026-11-24T00:00:00Z')): Clock & { advance (ms: number): void } {
  let now = start
  return { now: () => now, setTimeout: () => null, clearTimeout: () => {}, advance: ms => { now += ms } }
}

/** Standard Webhooks' check, written out independently of the service's signing code. */
export function verifies (secret: string, headers: IncomingHttpHeaders, body: string): boolean[] {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64')
  return String(headers['webhook-signature']).split(' ').map(s => s === `v1,${expected}`)
}
