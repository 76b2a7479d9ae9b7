// The operators' endpoints (/health/live, /health/ready, /metrics): on a listener of their own, or on the API's port.
import { createHash, timingSafeEqual } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, LogController } from 'fastify'
import { type ConnectionLimits, deadlines, guardConnections } from '../http/connections.js'
import { urlRedactor } from '../observability/log-redaction.js'
import { clientErrorHandler, errorHandler, sendProblem } from '../http/problems.js'
import { answerUnrouted } from '../http/protocol.js'
import type { Health, HealthBody } from './health.js'
import type { ServiceMetrics } from './metrics.js'

export interface Operations {
  health: Health
  /** Null when metrics are off (METRICS=false): /metrics is then a 404. */
  metrics: ServiceMetrics | null
  /** The bearer token /metrics requires, or null for none (only on the ops listener). */
  metricsToken: string | null
}

/** Requests for these paths are the operators'; on the API's port they skip keys, quotas and the request log. */
export const isOpsPath = (url: string): boolean => /^\/(?:metrics|health\/(?:live|ready))(?:\?|$)/.test(url)

const digest = (text: string): Buffer => createHash('sha256').update(text).digest()

export function opsRoutes ({ health, metrics, metricsToken }: Operations): FastifyPluginAsync {
  const expected = metricsToken === null ? null : digest(`Bearer ${metricsToken}`)
  const sendHealth = (body: HealthBody) => JSON.stringify(body)
  return async ops => {
    // Probes and scrapes every few seconds would drown the request log: they are logged at debug.
    ops.addHook('onResponse', (request, reply, done) => {
      // The route, not the URL: whatever query a caller appends (a token, say) stays out of the log.
      request.log.debug({ route: request.routeOptions.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'operations request completed')
      done()
    })
    ops.addHook('onRequest', (_request, reply, done) => {
      // A cached probe answer would hide a change of state; a cached scrape would repeat old counts.
      reply.header('cache-control', 'no-store')
      done()
    })
    ops.get('/health/live', async (_request, reply) => reply.type('application/health+json').send(sendHealth(health.live())))
    ops.get('/health/ready', async (_request, reply) => {
      const body = await health.ready()
      return reply.code(body.status === 'fail' ? 503 : 200).type('application/health+json').send(sendHealth(body))
    })
    ops.get('/metrics', async (request, reply) => {
      if (metrics === null) return sendProblem(reply, { type: 'about:blank', status: 404, detail: 'Metrics are off on this node (METRICS=false)' })
      const given = request.headers.authorization
      if (expected !== null && (given === undefined || !timingSafeEqual(digest(given), expected))) {
        reply.header('www-authenticate', 'Bearer realm="metrics"')
        return sendProblem(reply, { type: 'about:blank', status: 401, detail: 'The metrics need Authorization: Bearer <METRICS_TOKEN>' })
      }
      return reply.type(metrics.contentType).send(await metrics.text())
    })
  }
}

/**
 * The ops listener's app: the operators' endpoints and nothing else. It never listens; src/server.ts does.
 * Bound to the pod's address on Kubernetes, anyone on the pod network reaches it: it has the API port's
 * deadlines and caps of its own (OPS_MAX_CONNECTIONS, OPS_MAX_CONNECTIONS_PER_ADDRESS).
 */
export async function buildOpsApp (operations: Operations, logger: FastifyBaseLogger, limits: ConnectionLimits & { opsMaxConnections: number, opsMaxConnectionsPerAddress: number }): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024,
    clientErrorHandler,
    ...deadlines(limits)
  })
  guardConnections(app, { ...limits, maxConnections: limits.opsMaxConnections, maxConnectionsPerAddress: limits.opsMaxConnectionsPerAddress })
  app.decorate('redact', urlRedactor([operations.metricsToken]))
  app.setErrorHandler(errorHandler)
  answerUnrouted(app, (request, reply) => sendProblem(reply, {
    type: 'about:blank',
    status: 404,
    detail: `Nothing is served at ${request.url.replace(/\?.*$/s, '')} on the operations port; see /health/live, /health/ready, /metrics`
  }))
  await app.register(opsRoutes(operations))
  return app
}
