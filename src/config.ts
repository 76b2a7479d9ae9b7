// The service's configuration: one typed value, read from the environment and validated once at start.
import type { Synchronous } from './storage/sqlite/database.js'
import { parseAllowlist } from './webhooks/address-policy.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export interface Config {
  /** TCP port to listen on (`PORT`). */
  port: number
  /** Interface to bind (`HOST`); loopback by default so nothing is exposed by accident. */
  host: string
  /**
   * The URL clients reach the service at (`PUBLIC_URL`, e.g. behind a proxy), named as the first server
   * of the served document; null names the address the server listens on (HOST and PORT).
   */
  publicUrl: string | null
  /** SQLite file (`DATABASE_PATH`, or `DATABASE_URL` when it is a path), or `:memory:` for a throw-away database. */
  databasePath: string
  /** PostgreSQL to use instead of SQLite (`DATABASE_URL=postgres://…`); null keeps SQLite. */
  postgresUrl: string | null
  /** Connections each node's PostgreSQL pool may open (`PG_POOL_MAX`), beside the group-commit and notification ones. */
  pgPoolMax: number
  /** Milliseconds to wait for a PostgreSQL connection (`PG_CONNECT_TIMEOUT_MS`), at start and from the pool. */
  pgConnectTimeout: number
  /** Milliseconds a PostgreSQL statement may run before it is cancelled (`PG_STATEMENT_TIMEOUT_MS`). */
  pgStatementTimeout: number
  /** Milliseconds a node may answer from its API-key cache (`API_KEY_CACHE_TTL_MS`): how long a revocation takes to reach every node. */
  apiKeyCacheTtl: number
  /** pino log level (`LOG_LEVEL`). */
  logLevel: LogLevel
  /** Largest accepted request body in bytes (`BODY_LIMIT`). */
  bodyLimit: number
  /** SQLite synchronous mode (`DATABASE_SYNCHRONOUS`): `normal` survives a process crash, `full` also a power loss. */
  databaseSynchronous: Synchronous
  /**
   * Records of each table kept in memory for reads (`RECORD_CACHE_SIZE`); 0 reads every one from the
   * database. Off by default on PostgreSQL, where another node may have written since.
   */
  recordCacheSize: number
  /** How long an Idempotency-Key and its response are kept (`IDEMPOTENCY_TTL_SECONDS`). */
  idempotencyTtlSeconds: number
  /** An all-scopes key set by the operator (`ADMIN_API_KEY`); never stored, only compared. */
  adminApiKey: string | null
  /** Whether anonymous callers may read books (`PUBLIC_BOOK_READS`); students are never public. */
  publicBookReads: boolean
  /** Requests per window for callers with an API key (`RATE_LIMIT`, `<requests>/<seconds>`). */
  rateLimit: RateLimit
  /** Requests per window for each client address without a key (`RATE_LIMIT_ANONYMOUS`). */
  rateLimitAnonymous: RateLimit
  /** Redis that holds the rate-limit counters of every node (`REDIS_URL`); null counts in each process. */
  redisUrl: string | null
  /** Prefix of the counters' Redis keys (`REDIS_KEY_PREFIX`), so that several deployments can share one Redis. */
  redisKeyPrefix: string
  /** Milliseconds a request waits for Redis (`REDIS_TIMEOUT_MS`), connecting or counting, before it counts in the process. */
  redisTimeout: number
  /** Browser origins allowed by CORS (`CORS_ORIGINS`, comma-separated); empty turns CORS off. */
  corsOrigins: string[]
  /** Milliseconds a client has to send the request headers (`HEADERS_TIMEOUT`). */
  headersTimeout: number
  /** Milliseconds a client has to send the whole request (`REQUEST_TIMEOUT`). */
  requestTimeout: number
  /** Milliseconds an idle keep-alive connection stays open (`KEEP_ALIVE_TIMEOUT`). */
  keepAliveTimeout: number
  /** Open connections accepted at once (`MAX_CONNECTIONS`); further ones are dropped. */
  maxConnections: number
  /**
   * Where health checks and metrics are served (`OPS_PORT`): a port of their own (0 picks a free one),
   * `public` for the API's port (metrics then need METRICS_TOKEN), or `off`.
   */
  opsPort: number | 'public' | 'off'
  /** Interface the ops port binds (`OPS_HOST`); loopback by default, the pod's address on Kubernetes. */
  opsHost: string
  /** Open connections the ops port accepts at once (`OPS_MAX_CONNECTIONS`); further ones are dropped. */
  opsMaxConnections: number
  /** Bearer token that /metrics requires (`METRICS_TOKEN`); never an API key. Required when OPS_PORT=public. */
  metricsToken: string | null
  /** Whether requests are counted and timed for /metrics (`METRICS`). */
  metrics: boolean
  /** Milliseconds the readiness check waits for the database, and Redis when set, to answer (`READY_TIMEOUT_MS`). */
  readyTimeout: number
  /**
   * Milliseconds a node keeps serving after SIGTERM while it reports not-ready (`SHUTDOWN_DRAIN_MS`),
   * so that a load balancer stops sending before the listener closes.
   */
  shutdownDrain: number
  /** OpenTelemetry tracing, from the standard `OTEL_*` variables; null (the default) traces nothing. */
  tracing: TracingConfig | null
  /** Days the change feed keeps events (`EVENTS_RETENTION_DAYS`); a cursor older than that is 410. */
  eventRetentionDays: number
  /** Milliseconds between an event stream's heartbeat comments, each also re-checking its key (`EVENT_STREAM_HEARTBEAT_MS`). */
  eventStreamHeartbeat: number
  /** Milliseconds a stream's client may stop reading before the stream is cut off (`EVENT_STREAM_STALL_MS`). */
  eventStreamStall: number
  /** Milliseconds an event stream lasts at most before the server ends it, and the client resumes (`EVENT_STREAM_MAX_AGE_MS`). */
  eventStreamMaxAge: number
  /** Event streams one API key may hold open at once (`EVENT_STREAMS_PER_KEY`). */
  eventStreamsPerKey: number
  /** Milliseconds between looks for events other processes or nodes committed (`EVENTS_POLL_MS`); this process's own wake streams at once. */
  eventsPoll: number
  /**
   * Addresses webhooks may reach although not public (`WEBHOOK_ALLOWED_ADDRESSES`, comma-separated IPs
   * or CIDRs); only these may also be reached over plain http or on ports other than 80 and 443.
   */
  webhookAllowedAddresses: string[]
  /** Milliseconds a webhook receiver has to answer (`WEBHOOK_TIMEOUT_MS`). */
  webhookTimeout: number
  /** Hours of failing deliveries, without a success, after which an endpoint is disabled (`WEBHOOK_DISABLE_AFTER_HOURS`). */
  webhookDisableAfterHours: number
  /** Webhook endpoints the deployment may have (`WEBHOOK_ENDPOINTS_MAX`); registering one more is a 409. */
  webhookEndpointsMax: number
  /** Milliseconds between this node's delivery runs (`WEBHOOK_POLL_MS`); 0: this node delivers nothing. */
  webhookPollInterval: number
}

/** The samplers of the OpenTelemetry specification that the SDK implements (`OTEL_TRACES_SAMPLER`). */
export type TraceSampler = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'
const traceSamplers: readonly TraceSampler[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']

export interface TracingConfig {
  /** `service.name` of the spans (`OTEL_SERVICE_NAME`). */
  serviceName: string
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`, `key=value,…`), e.g. deployment.environment.name. */
  resourceAttributes: Record<string, string>
  /**
   * Where spans are sent by OTLP over HTTP (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or
   * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`); null when `OTEL_TRACES_EXPORTER` does not name otlp.
   */
  otlpEndpoint: string | null
  /** Whether spans are also printed on stdout (`OTEL_TRACES_EXPORTER=console`), to try tracing out. */
  console: boolean
  /** Which traces are recorded (`OTEL_TRACES_SAMPLER`); by default the caller's decision, else all. */
  sampler: TraceSampler
  /** The share of traces a traceidratio sampler records (`OTEL_TRACES_SAMPLER_ARG`, 0 to 1). */
  samplerRatio: number
}

export interface RateLimit {
  requests: number
  seconds: number
}

export const defaults: Readonly<Config> = {
  port: 3000,
  host: '127.0.0.1',
  publicUrl: null,
  databasePath: './data/books-students.sqlite',
  postgresUrl: null,
  pgPoolMax: 4,
  pgConnectTimeout: 2_000,
  pgStatementTimeout: 5_000,
  apiKeyCacheTtl: 2_000,
  logLevel: 'info',
  bodyLimit: 64 * 1024,
  databaseSynchronous: 'normal',
  // About 10 MB per table: the hot part of a large collection, all of a small one.
  recordCacheSize: 10_000,
  idempotencyTtlSeconds: 24 * 60 * 60,
  adminApiKey: null,
  publicBookReads: true,
  // A real client rarely needs 10 requests a second; a flood meets 429 within a second.
  rateLimit: { requests: 600, seconds: 60 },
  rateLimitAnonymous: { requests: 120, seconds: 60 },
  redisUrl: null,
  redisKeyPrefix: 'rl:',
  // A local or same-zone Redis answers in well under a millisecond; this only bounds a dead or hung one.
  redisTimeout: 250,
  corsOrigins: [],
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  maxConnections: 1024,
  // Prometheus' registered default port for exporters of this kind.
  opsPort: 9464,
  opsHost: '127.0.0.1',
  // Probes and a scraper or two: a few connections at a time.
  opsMaxConnections: 64,
  metricsToken: null,
  metrics: true,
  readyTimeout: 1_000,
  // Long enough for a load balancer's health checks (Kubernetes: every 10 s by default, endpoints
  // updated within a few seconds of not-ready) to take the node out before it stops listening.
  shutdownDrain: 5_000,
  tracing: null,
  eventRetentionDays: 30,
  eventStreamHeartbeat: 15_000,
  eventStreamStall: 10_000,
  eventStreamMaxAge: 60 * 60 * 1000,
  eventStreamsPerKey: 5,
  eventsPoll: 250,
  webhookAllowedAddresses: [],
  // Standard Webhooks' advice, and what openapi.yaml promises receivers.
  webhookTimeout: 15_000,
  // Five days, as Svix does: long enough to ride out a receiver's long weekend.
  webhookDisableAfterHours: 120,
  webhookEndpointsMax: 100,
  webhookPollInterval: 1_000
}

/** A configuration value that cannot be used; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Readonly<Record<string, string | undefined>>

function integer (env: Env, name: string, min: number, max: number, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`)
  }
  return value
}

function text (env: Env, name: string, fallback: string): string {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw.trim() !== raw) throw new ConfigError(`${name} must not start or end with spaces (got ${JSON.stringify(raw)})`)
  return raw
}

function logLevel (env: Env): LogLevel {
  const raw = text(env, 'LOG_LEVEL', defaults.logLevel)
  const level = logLevels.find(l => l === raw)
  if (level === undefined) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')} (got ${JSON.stringify(raw)})`)
  return level
}

function synchronous (env: Env): Synchronous {
  const raw = text(env, 'DATABASE_SYNCHRONOUS', defaults.databaseSynchronous)
  if (raw !== 'normal' && raw !== 'full') throw new ConfigError(`DATABASE_SYNCHRONOUS must be normal or full (got ${JSON.stringify(raw)})`)
  return raw
}

function boolean (env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name, String(fallback))
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false (got ${JSON.stringify(raw)})`)
  return raw === 'true'
}

function rateLimit (env: Env, name: string, fallback: RateLimit): RateLimit {
  const raw = text(env, name, `${fallback.requests}/${fallback.seconds}`)
  const match = /^(\d{1,9})\/(\d{1,6})$/.exec(raw)
  const [requests, seconds] = [Number(match?.[1]), Number(match?.[2])]
  if (!(requests >= 1 && seconds >= 1 && seconds <= 86_400)) {
    throw new ConfigError(`${name} must be <requests>/<seconds>, e.g. 600/60, with a window of 1 to 86400 seconds (got ${JSON.stringify(raw)})`)
  }
  return { requests, seconds }
}

/** Where the data lives: `DATABASE_URL` (a path or a postgres:// URL) wins over `DATABASE_PATH`. */
function database (env: Env): Pick<Config, 'databasePath' | 'postgresUrl'> {
  const path = text(env, 'DATABASE_PATH', defaults.databasePath)
  const url = text(env, 'DATABASE_URL', '')
  if (url === '') return { databasePath: path, postgresUrl: null }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // pg parses the URL itself; this only refuses one it would misread, naming the variable.
    if (!URL.canParse(url)) {
      throw new ConfigError(`DATABASE_URL is not a valid URL (got ${JSON.stringify(maskPassword(url))})`)
    }
    return { databasePath: path, postgresUrl: url }
  }
  if (/^[a-z][\w+.-]*:\/\//i.test(url)) {
    throw new ConfigError(`DATABASE_URL must be a postgres:// URL or a SQLite file path (got ${JSON.stringify(maskPassword(url))})`)
  }
  return { databasePath: url.replace(/^file:/, ''), postgresUrl: null }
}

/** `PUBLIC_URL`: an absolute http(s) URL with no query or fragment, kept without its trailing slash. */
function publicUrl (env: Env): string | null {
  const raw = text(env, 'PUBLIC_URL', '')
  if (raw === '') return null
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (url === null || !['http:', 'https:'].includes(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError(`PUBLIC_URL must be an http:// or https:// URL without credentials, query or fragment, e.g. https://api.example.org (got ${JSON.stringify(raw)})`)
  }
  return url.href.replace(/\/+$/, '')
}

/** `REDIS_URL`: checked here so that a typo stops the start with one line, not a reconnect loop in the log. */
function redisUrl (env: Env): string | null {
  const url = text(env, 'REDIS_URL', '')
  if (url === '') return null
  if (!/^rediss?:\/\//.test(url) || !URL.canParse(url)) {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL (got ${JSON.stringify(maskPassword(url))})`)
  }
  return url
}

function keyPrefix (env: Env): string {
  const raw = text(env, 'REDIS_KEY_PREFIX', defaults.redisKeyPrefix)
  if (!/^[\x21-\x7e]{1,64}$/.test(raw)) {
    throw new ConfigError(`REDIS_KEY_PREFIX must be 1 to 64 printable characters without spaces (got ${JSON.stringify(raw)})`)
  }
  return raw
}

/** The URL with its password replaced, for messages and logs. */
export function maskPassword (url: string): string {
  return url.replace(/^([a-z][\w+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@')
}

function adminApiKey (env: Env): string | null {
  const raw = text(env, 'ADMIN_API_KEY', '')
  if (raw === '') return null
  // As long as a generated key's secret, so that the admin key is no easier to guess.
  if (!/^[\x21-\x7e]{32,512}$/.test(raw)) {
    throw new ConfigError('ADMIN_API_KEY must be 32 to 512 printable characters without spaces (value not shown)')
  }
  return raw
}

function origins (env: Env): string[] {
  const raw = text(env, 'CORS_ORIGINS', '')
  if (raw === '') return []
  return raw.split(',').map(origin => {
    const trimmed = origin.trim()
    // An origin is scheme://host[:port] exactly; a path or a wildcard would widen the rule silently.
    if (!/^https?:\/\/[\w.-]+(:\d{1,5})?$/.test(trimmed)) {
      throw new ConfigError(`CORS_ORIGINS must list origins such as https://app.example.org, comma-separated (got ${JSON.stringify(trimmed)})`)
    }
    return trimmed
  })
}

function opsPort (env: Env): Config['opsPort'] {
  const raw = text(env, 'OPS_PORT', String(defaults.opsPort))
  if (raw === 'public' || raw === 'off') return raw
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`OPS_PORT must be a port from 0 to 65535, public or off (got ${JSON.stringify(raw)})`)
  }
  return Number(raw)
}

function metricsToken (env: Env): string | null {
  const raw = text(env, 'METRICS_TOKEN', '')
  if (raw === '') return null
  if (!/^[\x21-\x7e]{16,512}$/.test(raw)) {
    throw new ConfigError('METRICS_TOKEN must be 16 to 512 printable characters without spaces (value not shown)')
  }
  return raw
}

function allowedAddresses (env: Env): string[] {
  const raw = text(env, 'WEBHOOK_ALLOWED_ADDRESSES', '')
  if (raw === '') return []
  return raw.split(',').map(entry => {
    const trimmed = entry.trim()
    try {
      parseAllowlist([trimmed])
    } catch {
      throw new ConfigError(`WEBHOOK_ALLOWED_ADDRESSES must list IP addresses or CIDR ranges, comma-separated (got ${JSON.stringify(trimmed)})`)
    }
    return trimmed
  })
}

const defaultServiceName = 'books-students-api'
// The OpenTelemetry specification's default for OTLP over HTTP: a collector on this host.
const defaultOtlpEndpoint = 'http://localhost:4318/v1/traces'

function otlpEndpoint (env: Env): string | null {
  const signal = text(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '')
  const base = text(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', '')
  const [name, url] = signal !== ''
    ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', signal]
    // The general endpoint is the collector's root; each signal has its own path below it.
    : ['OTEL_EXPORTER_OTLP_ENDPOINT', base === '' ? '' : `${base.replace(/\/+$/, '')}/v1/traces`]
  if (url === '') return null
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new ConfigError(`${name} must be an http:// or https:// URL (got ${JSON.stringify(maskPassword(signal || base))})`)
  }
  return url
}

function percentDecoded (text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** `key=value,…` with percent-encoded values, as the specification writes resource attributes. */
function resourceAttributes (env: Env): Record<string, string> {
  const raw = text(env, 'OTEL_RESOURCE_ATTRIBUTES', '')
  const attributes: Record<string, string> = {}
  for (const pair of raw === '' ? [] : raw.split(',')) {
    const at = pair.indexOf('=')
    const key = pair.slice(0, at).trim()
    const value = percentDecoded(pair.slice(at + 1).trim())
    if (at < 0 || key === '' || value === undefined) {
      throw new ConfigError(`OTEL_RESOURCE_ATTRIBUTES must be key=value pairs, comma-separated, values percent-encoded (got ${JSON.stringify(pair)})`)
    }
    attributes[key] = value
  }
  return attributes
}

function sampler (env: Env): Pick<TracingConfig, 'sampler' | 'samplerRatio'> {
  const raw = text(env, 'OTEL_TRACES_SAMPLER', 'parentbased_always_on')
  const name = traceSamplers.find(s => s === raw)
  if (name === undefined) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${traceSamplers.join(', ')} (got ${JSON.stringify(raw)})`)
  if (!name.endsWith('traceidratio')) return { sampler: name, samplerRatio: 1 }
  const arg = text(env, 'OTEL_TRACES_SAMPLER_ARG', '1')
  const ratio = Number(arg)
  if (!/^[\d.]+$/.test(arg) || !(ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 for ${name} (got ${JSON.stringify(arg)})`)
  }
  return { sampler: name, samplerRatio: ratio }
}

/**
 * Tracing is off unless configured: on when OTEL_TRACES_EXPORTER names otlp or console, or when an
 * OTLP endpoint is set and OTEL_TRACES_EXPORTER is unset. (The SDK's own default would be otlp to a
 * local collector, exporting into the void on every host that has none.)
 */
function tracing (env: Env): TracingConfig | null {
  const disabled = text(env, 'OTEL_SDK_DISABLED', 'false').toLowerCase()
  if (disabled !== 'true' && disabled !== 'false') throw new ConfigError(`OTEL_SDK_DISABLED must be true or false (got ${JSON.stringify(disabled)})`)
  if (disabled === 'true') return null
  const raw = text(env, 'OTEL_TRACES_EXPORTER', '')
  const exporters = raw === '' ? [] : raw.split(',').map(name => name.trim())
  const unknown = exporters.find(name => name !== 'otlp' && name !== 'console' && name !== 'none')
  if (unknown !== undefined) {
    throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp, console or none, or a comma-separated list of them (got ${JSON.stringify(unknown)})`)
  }
  if (exporters.includes('none')) return null
  const endpoint = otlpEndpoint(env)
  const otlp = exporters.includes('otlp') || (exporters.length === 0 && endpoint !== null)
  if (!otlp && !exporters.includes('console')) return null
  // Spans go out as OTLP/HTTP JSON, which a collector takes on the same path as protobuf; gRPC is another port and protocol.
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = text(env, protocolVariable, 'http/protobuf')
  if (otlp && protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(`${protocolVariable} must be http/protobuf or http/json: this service exports OTLP over HTTP (got ${JSON.stringify(protocol)})`)
  }
  const resource = resourceAttributes(env)
  return {
    // As the specification says, OTEL_SERVICE_NAME wins over a service.name among the resource attributes.
    serviceName: text(env, 'OTEL_SERVICE_NAME', resource['service.name'] ?? defaultServiceName),
    resourceAttributes: resource,
    otlpEndpoint: otlp ? endpoint ?? defaultOtlpEndpoint : null,
    console: exporters.includes('console'),
    ...sampler(env)
  }
}

/**
 * Reads the configuration from `env` (usually `process.env`); explicit `overrides` win over the
 * environment, which wins over the defaults. Throws a ConfigError on the first unusable value.
 */
export function loadConfig (env: Env, overrides: Partial<Config> = {}): Config {
  const storage = database(env)
  const config: Config = {
    port: integer(env, 'PORT', 0, 65535, defaults.port),
    host: text(env, 'HOST', defaults.host),
    publicUrl: publicUrl(env),
    ...storage,
    pgPoolMax: integer(env, 'PG_POOL_MAX', 1, 1000, defaults.pgPoolMax),
    pgConnectTimeout: integer(env, 'PG_CONNECT_TIMEOUT_MS', 100, 600_000, defaults.pgConnectTimeout),
    pgStatementTimeout: integer(env, 'PG_STATEMENT_TIMEOUT_MS', 100, 3_600_000, defaults.pgStatementTimeout),
    apiKeyCacheTtl: integer(env, 'API_KEY_CACHE_TTL_MS', 0, 600_000, defaults.apiKeyCacheTtl),
    logLevel: logLevel(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 1024, 16 * 1024 * 1024, defaults.bodyLimit),
    databaseSynchronous: synchronous(env),
    recordCacheSize: integer(env, 'RECORD_CACHE_SIZE', 0, 1_000_000, storage.postgresUrl === null ? defaults.recordCacheSize : 0),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 60, 30 * 24 * 60 * 60, defaults.idempotencyTtlSeconds),
    adminApiKey: adminApiKey(env),
    publicBookReads: boolean(env, 'PUBLIC_BOOK_READS', defaults.publicBookReads),
    rateLimit: rateLimit(env, 'RATE_LIMIT', defaults.rateLimit),
    rateLimitAnonymous: rateLimit(env, 'RATE_LIMIT_ANONYMOUS', defaults.rateLimitAnonymous),
    redisUrl: redisUrl(env),
    redisKeyPrefix: keyPrefix(env),
    redisTimeout: integer(env, 'REDIS_TIMEOUT_MS', 10, 60_000, defaults.redisTimeout),
    corsOrigins: origins(env),
    headersTimeout: integer(env, 'HEADERS_TIMEOUT', 100, 600_000, defaults.headersTimeout),
    requestTimeout: integer(env, 'REQUEST_TIMEOUT', 100, 3_600_000, defaults.requestTimeout),
    keepAliveTimeout: integer(env, 'KEEP_ALIVE_TIMEOUT', 100, 600_000, defaults.keepAliveTimeout),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 1, 1_000_000, defaults.maxConnections),
    opsPort: opsPort(env),
    opsHost: text(env, 'OPS_HOST', defaults.opsHost),
    opsMaxConnections: integer(env, 'OPS_MAX_CONNECTIONS', 1, 1_000_000, defaults.opsMaxConnections),
    metricsToken: metricsToken(env),
    metrics: boolean(env, 'METRICS', defaults.metrics),
    readyTimeout: integer(env, 'READY_TIMEOUT_MS', 10, 60_000, defaults.readyTimeout),
    shutdownDrain: integer(env, 'SHUTDOWN_DRAIN_MS', 0, 600_000, defaults.shutdownDrain),
    tracing: tracing(env),
    eventRetentionDays: integer(env, 'EVENTS_RETENTION_DAYS', 1, 3650, defaults.eventRetentionDays),
    eventStreamHeartbeat: integer(env, 'EVENT_STREAM_HEARTBEAT_MS', 10, 600_000, defaults.eventStreamHeartbeat),
    eventStreamStall: integer(env, 'EVENT_STREAM_STALL_MS', 10, 600_000, defaults.eventStreamStall),
    eventStreamMaxAge: integer(env, 'EVENT_STREAM_MAX_AGE_MS', 100, 86_400_000, defaults.eventStreamMaxAge),
    eventStreamsPerKey: integer(env, 'EVENT_STREAMS_PER_KEY', 1, 10_000, defaults.eventStreamsPerKey),
    eventsPoll: integer(env, 'EVENTS_POLL_MS', 10, 60_000, defaults.eventsPoll),
    webhookAllowedAddresses: allowedAddresses(env),
    webhookTimeout: integer(env, 'WEBHOOK_TIMEOUT_MS', 100, 120_000, defaults.webhookTimeout),
    webhookDisableAfterHours: integer(env, 'WEBHOOK_DISABLE_AFTER_HOURS', 1, 8760, defaults.webhookDisableAfterHours),
    webhookEndpointsMax: integer(env, 'WEBHOOK_ENDPOINTS_MAX', 1, 1000, defaults.webhookEndpointsMax),
    webhookPollInterval: integer(env, 'WEBHOOK_POLL_MS', 0, 600_000, defaults.webhookPollInterval),
    ...overrides
  }
  // Node refuses a server whose headers may take longer than the whole request.
  // On the public port anyone who can reach the API could read the metrics.
  if (config.opsPort === 'public' && config.metricsToken === null) {
    throw new ConfigError('OPS_PORT=public serves /metrics on the API\'s port, which needs METRICS_TOKEN')
  }
  if (config.headersTimeout > config.requestTimeout) {
    throw new ConfigError(`HEADERS_TIMEOUT (${config.headersTimeout}) must not exceed REQUEST_TIMEOUT (${config.requestTimeout})`)
  }
  return config
}
