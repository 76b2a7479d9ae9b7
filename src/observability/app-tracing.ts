// What buildApp adds to trace, given a tracer provider: a span per request, continued from the caller's traceparent, and one per storage call.
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, propagation, type TracerProvider } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import { tracedRepositories } from '../storage/traced.js'
import type { Repositories } from '../storage/types.js'

export interface AppTracing {
  /** Registered first, so that the request's span is current in every hook, the handler and storage. */
  plugin: FastifyPluginCallback
  /** The trace id of the request's span, for its log line (the span itself is gone by then). */
  traceIdOf (request: FastifyRequest): string | undefined
  /** The repositories, with a span for each call. */
  traceStorage (repositories: Repositories): Repositories
}

const traceIdKey = Symbol('trace id')
type WithTraceId = FastifyRequest & { [traceIdKey]: string | undefined }

let installed = false
/**
 * @fastify/otel reads the incoming traceparent through the OpenTelemetry API's global propagator, and
 * storage calls find the request's span through its global context manager, which follows the request
 * across awaits. Neither makes spans or sends anything: the provider that does stays the app's own.
 * A context manager or propagator already installed (by an SDK preloaded with --import) is kept.
 */
function installTraceContext (): void {
  if (installed) return
  installed = true
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
}

/**
 * `redactUrl` masks credentials in the URL a request span records (url.path holds the query too), as in
 * the log, and tells a tracestate header that holds one.
 */
export function appTracing (provider: TracerProvider, redactUrl: (url: string) => string): AppTracing {
  installTraceContext()
  const instrumentation = new FastifyOtelInstrumentation({
    // One span per request, with the storage calls as its children: a span per hook and per handler
    // would multiply the spans, and the cost, for what the request span's timing already shows.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook (span, request) {
      // `GET /books/:book_id`, the HTTP semantic conventions' name: the route template, never the id.
      const route = request.routeOptions.url
      span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
      span.setAttribute('url.path', redactUrl(request.url))
      const traced: WithTraceId = request as WithTraceId
      traced[traceIdKey] = span.spanContext().traceId
    }
  })
  instrumentation.setTracerProvider(provider)
  const otel = instrumentation.plugin()
  const plugin: FastifyPluginCallback = (app, options, done) => {
    app.decorateRequest(traceIdKey, undefined)
    // A caller's tracestate goes with every span of its trace to wherever spans are sent: one that
    // holds a credential (a key pasted in the wrong header) is dropped before @fastify/otel reads it.
    app.addHook('onRequest', (request, _reply, next) => {
      const state = request.headers.tracestate
      if (typeof state === 'string' && redactUrl(state) !== state) delete request.headers.tracestate
      next()
    })
    otel(app, options, done)
  }
  // Like @fastify/otel itself, its decorations and hooks belong to the whole app, not to a child context.
  Object.assign(plugin, { [Symbol.for('skip-override')]: true })
  return {
    plugin,
    traceIdOf: request => (request as WithTraceId)[traceIdKey],
    traceStorage: repositories => tracedRepositories(repositories, provider.getTracer('books-students-api'))
  }
}
