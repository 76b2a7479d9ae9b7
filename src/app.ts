// buildApp(config): the whole service as a Fastify instance, routed from openapi.yaml; it never listens.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import accepts from '@fastify/accepts'
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TracerProvider } from '@opentelemetry/api'
import Fastify, { errorCodes, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import openapiGlue from 'fastify-openapi-glue'
import pino from 'pino'
import { identifyCaller, securityHandlers } from './access/auth.js'
import type { Config } from './config/index.js'
import { deadlines, guardConnections } from './http/connections.js'
import { announceDeprecations } from './contract/deprecation.js'
import { ApiError } from './http/errors.js'
import { serviceHandlers } from './handlers/index.js'
import { Exports } from './handlers/export.js'
import { keepEvents } from './events/retention.js'
import { EventStreams } from './events/streams.js'
import { registerPages } from './http/pages.js'
import { invalidJsonDetail } from './http/problem-details.js'
import type { WorkMeter } from './formats/work-meter.js'
import { parseJsonBody, unreadableCharset } from './http/json-body.js'
import { clientErrorHandler, errorHandler } from './http/problems.js'
import { registerOperations } from './http/protocol.js'
import { listeningUrl, type OpenApiDocument, readContract, routedDocument, servedDocument, withServer } from './contract/openapi-document.js'
import { urlRedactor } from './observability/log-redaction.js'
import { requestId } from './observability/request-id.js'
import { lazyChildLogger, requestLogger } from './observability/request-log.js'
import { openRateLimitStore, rateLimit } from './access/rate-limit.js'
import type { RateLimitStore } from './access/rate-limit-store.js'
import { health as healthChecks } from './ops/health.js'
import { ServiceMetrics } from './ops/metrics.js'
import { isOpsPath, type Operations, opsRoutes } from './ops/routes.js'
import { openConfiguredRepositories } from './storage/open.js'
import { apiSecurityHeaders, documentSecurityHeaders } from './http/security-headers.js'
import type { Repositories } from './storage/types.js'
import { serializerCompiler } from './http/serialization.js'
import { validatorCompiler } from './http/validation.js'
import { AddressPolicy, type Resolve } from './webhooks/address-policy.js'
import { type Clock, systemClock, WebhookWorker } from './webhooks/worker.js'
import { ImportRunner } from './imports/runner.js'

/** CSP source for the <style> of the logo in Swagger UI's top bar: the SHA-256 of its text. */
const swaggerUiLogoStyle = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='
const redactedLogPaths = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'headers.authorization', 'headers.cookie', '*.authorization', 'apiKey', 'token', 'secret']

// Rows an import stages at a time (a few milliseconds of the event loop), then writes at a time: a write
// batch is one group-commit transaction, which a single write beside it may wait for; at 100 rows its p99
// stays near 50 ms on SQLite, against 122 ms at 500, for 29 % fewer rows a second (BENCHMARKS.md).
const importBatch = 500
const importWriteBatch = 100

export interface AppDependencies {
  /** Storage; SQLite at config.databasePath unless given. */
  repositories: Repositories
  /** Where logs go; stdout unless given. */
  logStream: { write (line: string): void }
  /** Milliseconds since the epoch, for rate-limit windows; Date.now unless given. */
  clock: () => number
  /** The contract to serve and route; openapi.yaml unless given (tests use fixtures). */
  document: OpenApiDocument
  /** Rate-limit counters; Redis at config.redisUrl, or this process's memory, unless given. Closed with the app. */
  rateLimitStore: RateLimitStore
  /** Told of every failed operation of the shared rate-limit store (besides the metrics' count). */
  onRateLimitStoreError: (error: Error) => void
  /** Where requests, writes and batches are counted; made here unless given, null when config.metrics is off. */
  metrics: ServiceMetrics | null
  /** Where spans go: one per request and one per storage call. Unless given, nothing is traced, at no cost. */
  tracerProvider: TracerProvider
  /** How webhook hosts resolve, at registration and at connection; the system's resolver unless given. */
  resolve: Resolve
  /** The webhook worker's time, timers and jitter; the system's unless given (tests walk the retry schedule). */
  webhookClock: Clock
  webhookRandom: () => number
  /** Told of the work of reading each JSON body (its bytes decoded, then src/formats/i-json.ts); tests count it. */
  jsonBodyMeter: WorkMeter
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The rate-limit counters, for a readiness check (`probe()`). */
    rateLimitStore: RateLimitStore
    /** Health, readiness and metrics, for the ops listener (src/ops/routes.ts). */
    operations: Operations
  }
}

export async function buildApp (config: Config, dependencies: Partial<AppDependencies> = {}): Promise<FastifyInstance> {
  const metrics = dependencies.metrics !== undefined ? dependencies.metrics : config.metrics ? new ServiceMetrics() : null
  // What logs, spans and problems echo of a request, with its credentials masked.
  const redact = urlRedactor([config.adminApiKey, config.metricsToken])
  const tracing = dependencies.tracerProvider === undefined
    ? null
    // Loaded only to trace: OpenTelemetry takes a quarter of a second and some 30 MB to load.
    : (await import('./observability/app-tracing.js')).appTracing(dependencies.tracerProvider, redact)
  const opened = dependencies.repositories ??
    await openConfiguredRepositories(config, metrics === null ? {} : { onBatch: metrics.batchCommitted })
  metrics?.observeStorage(opened)
  const repositories = tracing === null ? opened : tracing.traceStorage(opened)
  const served = servedDocument(dependencies.document ?? readContract(), config)
  const identify = identifyCaller(config, repositories.apiKeys)
  const logStream = dependencies.logStream ?? pino.destination(1)
  // No line logs a request's headers; should one ever log an object holding credentials, they are masked.
  const logger = pino({ level: config.logLevel, redact: { paths: redactedLogPaths, censor: '[redacted]' } }, logStream)
  const rateLimitStore = dependencies.rateLimitStore ??
    await openRateLimitStore(config, {
      log: logger,
      onStoreError: error => {
        metrics?.rateLimitStoreError()
        dependencies.onRateLimitStoreError?.(error)
      }
    })
  const limit = rateLimit(config, rateLimitStore, dependencies.clock ?? Date.now)
  const logRequest = logger.isLevelEnabled('info')
    ? requestLogger(logStream, redact, tracing?.traceIdOf)
    : null
  const health = healthChecks({
    version: served.info.version,
    timeout: config.readyTimeout,
    dependencies: [
      { key: `${repositories.engine}:responseTime`, componentType: 'datastore', probe: () => repositories.probe(), whenFailing: 'fail' },
      // Without Redis the limits count per node (src/access/rate-limit-redis.ts): worth a warning, not taking
      // every node out of the load balancer at once.
      ...config.redisUrl === null ? [] : [{ key: 'redis:responseTime', componentType: 'datastore', probe: () => rateLimitStore.probe(), whenFailing: 'warn' } as const]
    ]
  })
  /** What every request goes through first: security headers, its id, who is calling, and the caller's quota. */
  async function admit (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.headers(apiSecurityHeaders).header('x-request-id', request.id)
    // While draining, clients are moved off this node: each connection closes after its response.
    if (health.draining) reply.header('connection', 'close')
    metrics?.requestStarted()
    await identify(request, reply)
    await limit(request, reply)
  }
  const app = Fastify({
    // A URL the router cannot decode (`/books/%`) never reaches the hooks; answer it like any other 400.
    frameworkErrors: (error, request, reply) => {
      // allSettled: should the quota lookup fail, the client still gets its 400.
      Promise.allSettled([admit(request, reply)]).then(() => reply.sent || errorHandler(error, request, reply))
    },
    // pino's Logger is one, though its generics keep TypeScript from seeing it.
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request (written when it completes, below) instead of Fastify's two halves the logging cost.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.bodyLimit,
    // Node caps a request's head at 16 KiB (431 beyond), so no path segment can reach this length:
    // an overlong id is a 400 like any other malformed one, never the router's undeclared 414.
    routerOptions: { maxParamLength: 16 * 1024 },
    // Requests Node refuses before routing (408, 431, malformed HTTP) get a problem body too.
    clientErrorHandler,
    genReqId: request => requestId(request.headers['x-request-id'], redact),
    // While closing, requests already on open connections are served normally (the database closes
    // only after they end): Fastify's own 503 for them would be a bare JSON body, not a problem.
    return503OnClosing: false,
    ...deadlines(config)
  })
  // First, so that the request's span is open, and current, in every hook that follows.
  if (tracing !== null) await app.register(tracing.plugin)
  guardConnections(app, config)
  // Node answers an `Expect` other than 100-continue with a bare 417, which no operation declares;
  // RFC 9110 §10.1.1 lets a server ignore an expectation it does not support, so the request is served.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response))
  app.addHook('onClose', async () => repositories.close())
  app.decorate('rateLimitStore', rateLimitStore)
  app.decorate('redact', redact)
  app.addHook('onClose', async () => rateLimitStore.close())

  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.setErrorHandler(errorHandler)
  // Fastify parses text/plain by default; the contract accepts JSON bodies only (415 otherwise).
  app.removeContentTypeParser('text/plain')
  // Fastify decodes invalid UTF-8 into U+FFFD, which would store something the client never sent: refuse it.
  // Its JSON parser (secure-json-parse) would also answer `__proto__` and duplicate members without
  // a word of why, or not at all: src/http/json-body.ts parses, and says what is wrong and where.
  const utf8 = new TextDecoder('utf-8', { fatal: true })
  const jsonBodyMeter = dependencies.jsonBodyMeter ?? (() => {})
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = unreadableCharset(request.headers['content-type']!)
    if (charset !== undefined) return done(new ApiError(415, 'about:blank', `The request body must be application/json in UTF-8, not ${charset}`), undefined)
    if ((body as Buffer).length === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined)
    let text: string
    jsonBodyMeter((body as Buffer).length)
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      return done(new ApiError(400, 'about:blank', 'The request body is not valid UTF-8'), undefined)
    }
    let parsed: unknown
    try {
      parsed = parseJsonBody(text, jsonBodyMeter)
    } catch (error) {
      return done(error instanceof SyntaxError ? new ApiError(400, 'about:blank', invalidJsonDetail(text)) : error as Error, undefined)
    }
    done(null, parsed)
  })
  // The glue warns at start about every media type in the spec that has no parser, response types
  // included; refusing problem+json and event-stream bodies explicitly keeps the 415 and silences the false alarm.
  app.addContentTypeParser(['application/problem+json', 'text/event-stream'], (request, _body, done) => {
    done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']))
  })
  // Files are read as they arrive, by the operation that takes them (an import); elsewhere they are a 415.
  app.addContentTypeParser(['text/csv', 'application/x-ndjson'], (request, body, done) => {
    if (request.routeOptions.config.streamsBody === true) done(null, body)
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']))
  })
  app.decorateRequest('caller', null as never)
  app.decorateRequest('chargeQuota', null as never)
  const operations: Operations = { health, metrics, metricsToken: config.metricsToken }
  app.decorate('operations', operations)
  const responseHooks = [logRequest?.hook, metrics?.requestFinished].filter(hook => hook !== undefined)
  if (config.opsPort === 'public') {
    // Probes and scrapes on the API's port need no key, are never rate limited, and stay out of the
    // API's request log and metrics; the check costs only on this setting.
    await app.register(opsRoutes(operations))
    app.addHook('onRequest', async (request, reply) => { if (!isOpsPath(request.url)) await admit(request, reply) })
    for (const hook of responseHooks) app.addHook('onResponse', (request, reply, done) => { if (isOpsPath(request.url)) done(); else hook(request, reply, done) })
  } else {
    app.addHook('onRequest', admit)
    for (const hook of responseHooks) app.addHook('onResponse', hook)
  }
  if (logRequest !== null) app.addHook('onClose', async () => logRequest.flush())
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id'],
      exposedHeaders: ['location', 'link', 'deprecation', 'sunset', 'ratelimit', 'ratelimit-policy', 'retry-after', 'x-request-id'],
      maxAge: 600
    })
  }
  await app.register(accepts)

  // The plugin types documents by OpenAPI version, and 3.1 is not among them; it serves any object as is.
  await app.register(swagger, { mode: 'static', specification: { document: served as never } })
  const documentHeaders = documentSecurityHeaders()
  // Where the server listens; HOST and PORT before it does (an injected request).
  const listeningAddress = (): { address: string, port: number } => {
    const address = app.server.address()
    return typeof address === 'object' && address !== null ? address : { address: config.host, port: config.port }
  }
  await app.register(async docs => {
    docs.addHook('onRequest', (_request, reply, done) => {
      reply.headers(documentHeaders)
      done()
    })
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, tryItOutEnabled: true },
      // Swagger UI needs its own scripts and styles (by hash); the plugin's policy would also force
      // https for every asset, which breaks the page on a plain-http local server. The top bar's logo
      // is an inline SVG whose <style> element the policy must allow by its hash (the browser test
      // fails on any console error, so a Swagger UI that changes that style is caught).
      // Served per request: the first server is where the service is reached (PUBLIC_URL, or where it listens).
      transformSpecification: document => withServer(document as OpenApiDocument, config.publicUrl === null ? { url: listeningUrl(listeningAddress()), named: false } : { url: config.publicUrl, named: true }),
      staticCSP: true,
      transformStaticCSP: header => header.replace(/\s*upgrade-insecure-requests;/, '')
        .replace(/style-src ([^;]*);/, (_directive, sources: string) => `style-src ${sources.trim()} '${swaggerUiLogoStyle}';`)
    })
  })
  registerPages(app, served, documentHeaders)
  // Streams, pruning and deliveries work outside any request's trace: they use the storage untraced.
  const streams = new EventStreams(opened.events, opened.apiKeys, {
    heartbeat: config.eventStreamHeartbeat,
    stall: config.eventStreamStall,
    maxAge: config.eventStreamMaxAge,
    perKey: config.eventStreamsPerKey,
    poll: config.eventsPoll
  })
  metrics?.observeStreams(streams)
  // Before the server closes: an open stream would otherwise hold its connection, and the close, forever.
  app.addHook('preClose', async () => streams.closeAll())
  const stopPruning = keepEvents(opened.events, config.eventRetentionDays, app.log)
  app.addHook('onClose', stopPruning)
  const addressPolicy = new AddressPolicy(config.webhookAllowedAddresses, dependencies.resolve)
  const webhookClock = dependencies.webhookClock ?? systemClock
  // Imports' rows are written here, or on whichever node takes an import up after its node stopped.
  const runner = new ImportRunner({
    imports: repositories.imports,
    stores: { books: repositories.books, students: repositories.students },
    node: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    leaseMs: config.importLeaseMs,
    batch: importWriteBatch,
    sweepMs: config.importLeaseMs / 3,
    clock: Date.now,
    onError: (error, importId) => app.log.error({ err: error, importId }, 'an import stopped; it is taken up again once its lease runs out'),
    onResume: ({ import_id: importId, rows }) => app.log.info({ importId, written: rows.written, toWrite: rows.read - rows.refused - rows.written }, 'an import whose node stopped is taken up where its last batch ended')
  })
  app.addHook('onReady', async () => runner.start())
  app.addHook('preClose', async () => runner.close())
  // Before the server closes: an import's progress stream would otherwise hold its connection, and the close, until the import ends.
  const closing = new AbortController()
  app.addHook('preClose', async () => closing.abort())
  const exports = new Exports({
    max: config.exportsMax,
    perKey: config.exportsPerKey,
    anonymous: config.exportsAnonymous,
    stallMs: config.exportStallMs,
    maxDurationMs: config.exportMaxDurationMs
  })
  // Before the server closes: a running export would otherwise hold its connection, and the close, until it ends.
  app.addHook('preClose', async () => exports.closeAll())
  const handlers = await serviceHandlers(repositories, {
    imports: { runner, document: served, limits: { maxBytes: config.importMaxBytes, maxRows: config.importMaxRows }, batch: importBatch, clock: Date.now, closing: closing.signal },
    idempotencyTtlSeconds: config.idempotencyTtlSeconds,
    exports,
    streams,
    eventRetentionDays: config.eventRetentionDays,
    webhookEndpointsMax: config.webhookEndpointsMax,
    webhookEndpointsPerKey: config.webhookEndpointsPerKey,
    addressPolicy,
    clock: () => webhookClock.now()
  })
  if (config.webhookPollInterval > 0) {
    const worker = new WebhookWorker({
      repositories: opened,
      policy: addressPolicy,
      config,
      clock: webhookClock,
      random: dependencies.webhookRandom,
      log: logger,
      metrics
    })
    // Started once the app is ready, and stopped before the database closes.
    app.addHook('onReady', async () => worker.start())
    app.addHook('preClose', async () => worker.stop())
  }
  await registerOperations(app, async operations => {
    operations.addHook('onRoute', announceDeprecations)
    await operations.register(openapiGlue, { specification: routedDocument(served), serviceHandlers: handlers, securityHandlers })
  })
  return app
}
