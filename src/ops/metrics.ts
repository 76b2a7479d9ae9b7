// Prometheus metrics: request rates, errors and durations, domain counters, storage use, and the process's own.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { StorageUsage, WebhookDisabledReason } from '../storage/types.js'
import type { DeliveryOutcome, WebhookMetrics } from '../webhooks/worker.js'

// Sub-millisecond steps at the bottom: a GET served from SQLite takes about 0.1 ms.
const durationBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const batchBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

// Methods outside this set (Node's parser knows about 30) are counted together, so that no label
// value comes from the client beyond a fixed set.
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'])

type Resource = 'book' | 'student'

interface RouteLabels {
  resource: Resource | null
  /** Label sets of the duration histogram by status class (index 1 to 5), made on first use. */
  byClass: (DurationSeries | undefined)[]
}

// The process's metrics (CPU, memory, event loop, GC) exist once however many apps a process builds:
// each collectDefaultMetrics() starts an event-loop monitor and a GC observer that cannot be stopped.
let processRegistry: Registry | undefined

/**
 * What /metrics shows. Every label value comes from a fixed set (route templates, method, status
 * class, resource, limit name), never from an id, a key or a path a client chose, so the number of
 * series cannot grow with traffic. The request path only bumps numbers; text is made at scrape time.
 */
export class ServiceMetrics implements WebhookMetrics {
  readonly registry = new Registry()
  readonly #duration = new RequestDurations(this.registry)

  readonly #records = new Counter({
    name: 'bsa_records_changed_total',
    help: 'Records created, replaced and deleted, by resource (idempotent replays not included)',
    labelNames: ['resource', 'change'] as const,
    registers: [this.registry]
  })

  readonly #replays = new Counter({
    name: 'bsa_idempotent_replays_total',
    help: 'Responses replayed to a retry with the same Idempotency-Key, by resource',
    labelNames: ['resource'] as const,
    registers: [this.registry]
  })

  readonly #preconditionFailures = new Counter({
    name: 'bsa_precondition_failed_total',
    help: 'Conditional writes refused with 412 because the record had changed, by resource',
    labelNames: ['resource'] as const,
    registers: [this.registry]
  })

  readonly #rateLimited = new Counter({
    name: 'bsa_rate_limited_total',
    help: 'Requests refused with 429, by the limit they exceeded (keyed or anonymous)',
    labelNames: ['limit'] as const,
    registers: [this.registry]
  })

  readonly #rateLimitStoreErrors = new Counter({
    name: 'bsa_rate_limit_store_errors_total',
    help: 'Failed operations of the shared rate-limit store (Redis); each request concerned was counted by this node alone',
    registers: [this.registry]
  })

  readonly #batches = new Histogram({
    name: 'bsa_group_commit_batch_size',
    help: 'Writes committed together in one database transaction (group commit)',
    buckets: batchBuckets,
    registers: [this.registry]
  })

  readonly #deliveries = new Counter({
    name: 'bsa_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this node, by outcome: delivered (2xx), failed (another answer or none; retried), refused (an address webhooks may not reach; nothing sent)',
    labelNames: ['outcome'] as const,
    registers: [this.registry]
  })

  readonly #endpointsDisabled = new Counter({
    name: 'bsa_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints disabled by this node, by reason: gone (410), failing (for WEBHOOK_DISABLE_AFTER_HOURS), key_revoked',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  readonly #routes = new WeakMap<object, RouteLabels>()
  // By the method Node parsed: a few dozen at most.
  readonly #unmatched = new Map<string, RouteLabels>()
  #started = 0
  #finished = 0

  constructor () {
    const metrics = this
    new Gauge({ // eslint-disable-line no-new -- registered by its constructor
      name: 'http_requests_in_flight',
      help: 'Requests received and not yet answered',
      registers: [this.registry],
      collect () { this.set(metrics.#started - metrics.#finished) }
    })
    processRegistry ??= defaultMetrics()
    // Every series from the start, at 0: a rate over a series that appears only with its first failure is blind to that failure.
    for (const outcome of ['delivered', 'failed', 'refused'] as const) this.#deliveries.inc({ outcome }, 0)
    for (const reason of ['gone', 'failing', 'key_revoked'] as const) this.#endpointsDisabled.inc({ reason }, 0)
  }

  /** Event streams open now, and those ended by why, read at scrape time. */
  observeStreams (streams: { size: number, ended: ReadonlyMap<string, number> }): void {
    new Gauge({ // eslint-disable-line no-new -- registered by its constructor
      name: 'bsa_event_streams_open',
      help: 'Event streams (Server-Sent Events) open on this node',
      registers: [this.registry],
      collect () { this.set(streams.size) }
    })
    new Counter({ // eslint-disable-line no-new -- registered by its constructor
      name: 'bsa_event_streams_ended_total',
      help: 'Event streams ended, by reason: client (it left), stalled (it stopped reading and was cut off), max-age, revoked, shutdown, error',
      labelNames: ['reason'],
      registers: [this.registry],
      collect () {
        this.reset()
        for (const [reason, count] of streams.ended) this.inc({ reason }, count)
      }
    })
  }

  /** Database connections and queries, read from the storage at scrape time. */
  observeStorage (storage: { usage (): StorageUsage }): void {
    const gauge = (name: string, help: string, read: (usage: StorageUsage) => number) => new Gauge({
      name,
      help,
      registers: [this.registry],
      collect () { this.set(read(storage.usage())) }
    })
    gauge('bsa_db_connections_open', 'Database connections open now', usage => usage.connections)
    gauge('bsa_db_connections_max', 'Database connections this node may open', usage => usage.maxConnections)
    gauge('bsa_db_queries_in_flight', 'Statements sent to the database and not yet answered', usage => usage.queriesInFlight)
  }

  /** For an onRequest hook: one more request in flight. */
  requestStarted (): void {
    this.#started++
  }

  /** An onResponse hook. */
  readonly requestFinished = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    this.#finished++
    const status = reply.statusCode
    const statusClass = Math.trunc(status / 100)
    const config = request.routeOptions.config as unknown as { url?: string, method?: string }
    // Unrouted requests share one route context, so their label sets are kept by method instead.
    let route = config.url === undefined ? this.#unmatched.get(request.method) : this.#routes.get(config)
    if (route === undefined) {
      route = { resource: resourceOf(config.url), byClass: [] }
      if (config.url === undefined) this.#unmatched.set(request.method, route)
      else this.#routes.set(config, route)
    }
    const series = route.byClass[statusClass] ??= this.#duration.series({
      method: config.method ?? (knownMethods.has(request.method) ? request.method : 'other'),
      // Unrouted requests (404, a malformed URL) share one series whatever their path.
      route: config.url ?? 'unmatched',
      // Node sends only statuses 100 to 599: five values.
      status_class: `${statusClass}xx`
    })
    observe(series, reply.elapsedTime / 1000)
    if (status === 429) this.#rateLimited.inc({ limit: limitOf(reply) })
    else if (route.resource !== null && status !== 200) this.#countChange(route.resource, status, reply)
    else if (route.resource !== null && series.labels.method === 'PUT') this.#records.inc({ resource: route.resource, change: 'replaced' })
    done()
  }

  /** The domain counters a response other than 200 tells of. */
  #countChange (resource: Resource, status: number, reply: FastifyReply): void {
    if (status === 201) {
      if (reply.getHeader('idempotent-replayed') === 'true') this.#replays.inc({ resource })
      else this.#records.inc({ resource, change: 'created' })
    } else if (status === 204) {
      this.#records.inc({ resource, change: 'deleted' })
    } else if (status === 412) {
      this.#preconditionFailures.inc({ resource })
    }
  }

  /** For the storage: a group-commit transaction committed `size` writes. */
  readonly batchCommitted = (size: number): void => {
    this.#batches.observe(size)
  }

  readonly rateLimitStoreError = (): void => {
    this.#rateLimitStoreErrors.inc()
  }

  webhookAttempted (outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ outcome })
  }

  webhookEndpointDisabled (reason: WebhookDisabledReason): void {
    this.#endpointsDisabled.inc({ reason })
  }

  /** The exposition text: this service's metrics, then the process's. */
  async text (): Promise<string> {
    return await this.registry.metrics() + await processRegistry!.metrics()
  }

  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE
}

interface DurationSeries {
  labels: Record<'method' | 'route' | 'status_class', string>
  /** Observations per bucket (not cumulative), the last one above every bound. */
  buckets: Float64Array
  sum: number
  count: number
}

function observe (series: DurationSeries, seconds: number): void {
  let bucket = 0
  while (bucket < durationBuckets.length && seconds > durationBuckets[bucket]!) bucket++
  series.buckets[bucket]!++
  series.sum += seconds
  series.count++
}

/**
 * The request histogram, kept as plain numbers and shown through prom-client's registry (which
 * takes any object with a get() in its format). prom-client's own Histogram hashes the label values
 * on every observation, about 0.5 µs; here each route and status class finds its series once.
 */
class RequestDurations {
  readonly name = 'http_request_duration_seconds'
  readonly help = 'Time from a request\'s arrival to its response, by method, route template and status class; _count is the request count'
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #series: DurationSeries[] = []

  constructor (registry: Registry) {
    registry.registerMetric(this as never)
  }

  series (labels: DurationSeries['labels']): DurationSeries {
    const series = { labels, buckets: new Float64Array(durationBuckets.length + 1), sum: 0, count: 0 }
    this.#series.push(series)
    return series
  }

  get () {
    const values = this.#series.flatMap(({ labels, buckets, sum, count }) => {
      let cumulative = 0
      return [
        ...[...durationBuckets, '+Inf'].map((le, i) => {
          cumulative += buckets[i]!
          return { metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative }
        }),
        { metricName: `${this.name}_sum`, labels, value: sum },
        { metricName: `${this.name}_count`, labels, value: count }
      ]
    })
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}

function defaultMetrics (): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return registry
}

function resourceOf (route: string | undefined): Resource | null {
  if (route === undefined) return null
  if (route.startsWith('/books')) return 'book'
  if (route.startsWith('/api/students')) return 'student'
  return null
}

/** The limit a 429 was for, from the policy header the limiter set (src/access/rate-limit.ts). */
function limitOf (reply: FastifyReply): string {
  return String(reply.getHeader('ratelimit-policy')).startsWith('"anonymous"') ? 'anonymous' : 'keyed'
}
