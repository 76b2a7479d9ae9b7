// The webhook delivery worker: queues new feed events per endpoint, then makes the due attempts, signed and retried.
import { setMaxListeners } from 'node:events'
import type { Config } from '../config/index.js'
import { eventJson } from '../storage/events.js'
import { type ClaimedDelivery, eventLanes, type Repositories, type StoredWebhookEndpoint, type WebhookDisabledReason } from '../storage/types.js'
import type { AddressPolicy } from './address-policy.js'
import { readScopeOf } from '../events/scopes.js'
import { send } from './send.js'
import { signatures } from './signature.js'

/** Time as the worker sees it; tests pass a fake one to walk the retry schedule. */
export interface Clock {
  now (): number
  setTimeout (callback: () => void, ms: number): unknown
  clearTimeout (handle: unknown): void
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: handle => clearTimeout(handle as NodeJS.Timeout)
}

const second = 1000
const hour = 3600 * second
/** After the first, second, … failed attempt; the last delay repeats. */
export const retrySchedule = [5 * second, 5 * 60 * second, 30 * 60 * second, 2 * hour, 5 * hour, 10 * hour] as const

/** The wait after `attempts` failed attempts, ±10 % so that endpoints that failed together do not retry together. */
export function retryDelay (attempts: number, random: () => number): number {
  const base = retrySchedule[Math.min(attempts, retrySchedule.length) - 1]!
  return Math.round(base * (0.9 + 0.2 * random()))
}

/** How an attempt ended: a 2xx, any other answer or none, or an address the policy refused at connection (nothing sent). */
export type DeliveryOutcome = 'delivered' | 'failed' | 'refused'

/** What the worker counts (ServiceMetrics, when metrics are on). */
export interface WebhookMetrics {
  webhookAttempted (outcome: DeliveryOutcome): void
  webhookEndpointDisabled (reason: WebhookDisabledReason): void
}

export type WorkerConfig = Pick<Config, 'adminApiKey' | 'webhookTimeout' | 'webhookDisableAfterHours' | 'webhookPollInterval'>

export interface WorkerOptions {
  repositories: Pick<Repositories, 'webhooks' | 'apiKeys' | 'events'>
  policy: AddressPolicy
  config: WorkerConfig
  clock?: Clock
  /** Math.random unless given (tests fix the jitter). */
  random?: (() => number) | undefined
  log: { warn (details: object, message: string): void }
  metrics?: WebhookMetrics | null | undefined
}

/** Events read per page and pages per lane of an endpoint per round: one endpoint far behind cannot hold up the rest. */
const pageSize = 100
const pagesPerRound = 10
/**
 * The most deliveries a lane of an endpoint holds queued: beyond it, what the receiver has not taken
 * waits in the feed. A receiver down for days costs no table of copies, and a live event waits behind
 * at most this many of its endpoint's (its lane's, in fact: an import's go on their own lane).
 */
export const laneBacklog = 1000
/** Deliveries claimed at once by one node, each round. */
const batch = 20
/**
 * How soon after this process commits events the worker runs: not at once, so that one run serves
 * every commit in between. A run per commit (a list of endpoints and a claim) cost each write some
 * 10 µs on SQLite and 70 µs on PostgreSQL with no endpoint registered (docs/benchmarks-history.md, issue 14).
 */
export const commitDelay = 50

export class WebhookWorker {
  readonly #repositories: WorkerOptions['repositories']
  readonly #policy: AddressPolicy
  readonly #config: WorkerConfig
  readonly #clock: Clock
  readonly #random: () => number
  readonly #log: WorkerOptions['log']
  readonly #metrics: WebhookMetrics | null
  /** Longer than an attempt can take, so a lease runs out only for a node that died or stopped mid-attempt. */
  readonly #lease: number
  readonly #abort = new AbortController()
  #timer: unknown = null
  #running: Promise<void> | null = null
  /** Whether the timer set is a commit's (due within commitDelay), not the poll's. */
  #soon = false
  #unsubscribe: () => void = () => {}

  constructor ({ repositories, policy, config, clock = systemClock, random = Math.random, log, metrics = null }: WorkerOptions) {
    this.#repositories = repositories
    this.#policy = policy
    this.#config = config
    this.#clock = clock
    this.#random = random
    this.#log = log
    this.#metrics = metrics
    // Every attempt of a batch listens to this one signal until its socket has closed, which can be just after the
    // next batch began: up to two batches' worth is the design, not a leak (Node warns past 10).
    setMaxListeners(2 * batch, this.#abort.signal)
    this.#lease = config.webhookTimeout * 2 + 30 * second
  }

  /** Runs now, then every WEBHOOK_POLL_MS, and whenever this process commits events. */
  start (): void {
    this.#unsubscribe = this.#repositories.events.onCommit(() => this.#committed())
    this.#wake()
  }

  // Not called once stopped: stop() unsubscribes. A commit during a run waits for the next commit or
  // the poll (WEBHOOK_POLL_MS), whichever comes first: deliveries are asynchronous and retried anyway.
  #committed (): void {
    if (this.#running === null && !this.#soon) this.#schedule(commitDelay)
  }

  #schedule (delay: number): void {
    this.#clock.clearTimeout(this.#timer)
    this.#soon = delay === commitDelay
    this.#timer = this.#clock.setTimeout(() => this.#wake(), delay)
  }

  #wake (): void {
    if (this.#abort.signal.aborted) return
    this.#clock.clearTimeout(this.#timer)
    this.#soon = false
    this.#running = this.runOnce()
      .catch(error => this.#log.warn({ err: error }, 'webhook delivery run failed'))
      .finally(() => {
        this.#running = null
        if (!this.#abort.signal.aborted) this.#schedule(this.#config.webhookPollInterval)
      })
  }

  /** Stops: attempts in flight are aborted (their leases run out, and they are made again later) and awaited. */
  async stop (): Promise<void> {
    this.#abort.abort()
    this.#unsubscribe()
    this.#clock.clearTimeout(this.#timer)
    await this.#running
  }

  /**
   * One run, in rounds until nothing is left to queue or due: each round queues what the feed has for
   * every enabled endpoint, then makes one batch of attempts. An event committed during a long run is
   * queued at the next round, not after the run.
   */
  async runOnce (): Promise<void> {
    for (;;) {
      let more = false
      for (const endpoint of await this.#repositories.webhooks.list(null)) {
        if (endpoint.status === 'enabled' && await this.#fanOut(endpoint)) more = true
      }
      const now = this.#clock.now()
      const claimed = await this.#repositories.webhooks.claim(now, now + this.#lease, batch)
      await Promise.all(claimed.map(delivery => this.#attempt(delivery)))
      if ((claimed.length < batch && !more) || this.#abort.signal.aborted) return
    }
  }

  /** The types the registering key may read, or null when the key is gone or revoked. */
  async #readable (endpoint: StoredWebhookEndpoint): Promise<string[] | null> {
    if (endpoint.keyId === 'admin') return this.#config.adminApiKey === null ? null : endpoint.types
    const key = await this.#repositories.apiKeys.find(endpoint.keyId)
    if (key === null || key.revoked_at !== null) return null
    return endpoint.types.filter(type => key.scopes.includes(readScopeOf(type)))
  }

  /** Queues what each lane of the endpoint has in the feed, a bounded amount; true when a lane may have more. */
  async #fanOut (endpoint: StoredWebhookEndpoint): Promise<boolean> {
    const { events, webhooks } = this.#repositories
    const types = await this.#readable(endpoint)
    if (types === null) {
      await this.#disable(endpoint, 'key_revoked')
      return false
    }
    let left = false
    for (const lane of eventLanes) {
      const queue = { endpointId: endpoint.endpointId, lane, max: laneBacklog }
      let from = endpoint.positions[lane]
      if (await events.check(from) !== 'current') {
        // Pruned past it (or a restored database): nothing can be queued for what is gone; go on from now.
        this.#log.warn({ endpoint: endpoint.endpointId, lane }, 'webhook endpoint fell behind the feed\'s retention; its missed events are skipped')
        await webhooks.enqueue({ ...queue, from, to: await events.head(), events: [], now: this.#clock.now(), max: Number.MAX_SAFE_INTEGER })
        continue
      }
      for (let pages = 1; ; pages++) {
        const { events: found, next, more } = await events.read(from, types, pageSize, lane)
        if (next === from) break
        const queued = found.map(event => ({ position: event.position, body: eventJson(event.position, event.envelope) }))
        // Another node moved the cursor first (it has queued these, and carries on from there), or the lane is full.
        if (!await webhooks.enqueue({ ...queue, from, to: next, events: queued, now: this.#clock.now() }) || !more) break
        from = next
        if (pages === pagesPerRound) {
          left = true
          break
        }
      }
    }
    return left
  }

  async #attempt (delivery: ClaimedDelivery): Promise<void> {
    const { endpoint } = delivery
    const { webhooks } = this.#repositories
    if (await this.#readable(endpoint) === null) return this.#disable(endpoint, 'key_revoked')
    const now = this.#clock.now()
    const timestamp = Math.floor(now / second)
    const secrets = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt! > now
      ? [endpoint.secret, endpoint.previousSecret]
      : [endpoint.secret]
    const headers = {
      'content-type': 'application/json',
      'webhook-id': delivery.position,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatures(secrets, delivery.position, timestamp, delivery.body)
    }
    const result = await send(this.#policy, endpoint.url, headers, delivery.body, this.#config.webhookTimeout, this.#abort.signal, now)
    // Stopping: the lease runs out and the attempt is made again, by this node after a restart or by another.
    if (this.#abort.signal.aborted) return
    this.#metrics?.webhookAttempted(result.error === '' ? 'delivered' : result.refused === true ? 'refused' : 'failed')
    if (result.error === '') return webhooks.succeeded(delivery)
    if (result.status === 410) return this.#disable(endpoint, 'gone')
    const failingSince = endpoint.failingSince ?? now
    if (now - failingSince >= this.#config.webhookDisableAfterHours * hour) return this.#disable(endpoint, 'failing')
    const nextAttemptAt = now + Math.max(retryDelay(delivery.attempts, this.#random), result.retryAfter ?? 0)
    // One line per run of failures, not per attempt: an endpoint down for a day would otherwise log
    // every retry of every event. Never the URL (it may carry a token), the secret or the body.
    if (await webhooks.failed(delivery, { status: result.status, error: result.error, nextAttemptAt, now })) {
      this.#log.warn({ endpoint: endpoint.endpointId, status: result.status, error: result.error },
        'webhook delivery failed; retried with backoff until one succeeds or the endpoint is disabled')
    }
  }

  /** Disables the endpoint, then logs and counts it once, whichever node or delivery got there first. */
  async #disable (endpoint: StoredWebhookEndpoint, reason: WebhookDisabledReason): Promise<void> {
    if (!await this.#repositories.webhooks.disable(endpoint.endpointId, reason)) return
    this.#metrics?.webhookEndpointDisabled(reason)
    this.#log.warn({ endpoint: endpoint.endpointId, reason }, 'webhook endpoint disabled: nothing is delivered to it until it is enabled again')
  }
}
