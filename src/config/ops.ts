// Running the service: its log, the operators' listener with health checks and metrics, and how it shuts down.
import { concern } from './concern.js'
import { boolean, ConfigError, integer, oneOf, optional, text, token, trimmed, type Reader } from './parse.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

const opsPort: Reader<number | 'public' | 'off'> = {
  accepts: '0 to 65535, `public` or `off`',
  read (raw, name) {
    const value = trimmed(raw, name)
    if (value === 'public' || value === 'off') return value
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
      throw new ConfigError(`${name} must be a port from 0 to 65535, public or off (got ${JSON.stringify(raw)})`)
    }
    return Number(raw)
  }
}

export const ops = concern({
  title: 'Operations',
  about: 'The log, the operators\' listener (health checks and metrics) and the shutdown (see [Operating](operating.md)).',
  variables: {
    logLevel: { name: 'LOG_LEVEL', default: 'info', reader: oneOf<LogLevel>(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), meaning: 'pino\'s log level; at `info` and below, one JSON line per request on stdout (pino\'s format: `reqId`, `traceId` when the request belongs to a trace, `method`, `url`, `statusCode`, `responseTime` in ms to the µs, `remoteAddress`), written synchronously once per event-loop turn' },
    // Prometheus' registered default port for exporters of this kind.
    opsPort: { name: 'OPS_PORT', default: '9464', reader: opsPort, meaning: 'port of the operators\' listener (`/health/live`, `/health/ready`, `/metrics`); `0` picks a free one (printed at start), `off` serves none, `public` serves them on `PORT` instead (then `METRICS_TOKEN` is required)' },
    opsHost: { name: 'OPS_HOST', default: '127.0.0.1', reader: text('an address or host name'), meaning: 'interface of the operators\' listener: the pod\'s address (`0.0.0.0`) on Kubernetes, never behind the public ingress' },
    // Probes and a scraper or two: a few connections at a time.
    opsMaxConnections: { name: 'OPS_MAX_CONNECTIONS', default: '64', reader: integer(1, 1_000_000), meaning: 'open connections the operators\' listener accepts at once; further ones are dropped. It cuts slow and idle clients off by `HEADERS_TIMEOUT`, `REQUEST_TIMEOUT` and `KEEP_ALIVE_TIMEOUT`, as `PORT` does' },
    // A quarter of OPS_MAX_CONNECTIONS: a probe or a scrape takes one or two at a time.
    opsMaxConnectionsPerAddress: { name: 'OPS_MAX_CONNECTIONS_PER_ADDRESS', default: '16', reader: integer(1, 1_000_000), meaning: 'open connections the operators\' listener accepts from one address at once (counted as for `MAX_CONNECTIONS_PER_ADDRESS`); further ones are dropped at once, so that one client on the pod network cannot hold every connection the probes need' },
    metricsToken: { name: 'METRICS_TOKEN', default: '', reader: optional(token(16, 512, { secret: true })), meaning: 'bearer token `/metrics` requires, never an API key; required with `OPS_PORT=public`, optional on the ops port' },
    metrics: { name: 'METRICS', default: 'true', reader: boolean, meaning: '`false`: no request is counted or timed and `/metrics` is a 404' },
    readyTimeout: { name: 'READY_TIMEOUT_MS', default: '1000', reader: integer(10, 60_000), meaning: 'ms `/health/ready` waits for the database (and Redis) to answer before it fails the check' },
    // Long enough for a load balancer's health checks (Kubernetes: every 10 s by default, endpoints
    // updated within a few seconds of not-ready) to take the node out before it stops listening.
    shutdownDrain: { name: 'SHUTDOWN_DRAIN_MS', default: '5000', reader: integer(0, 600_000), meaning: 'ms a node keeps serving after SIGTERM while `/health/ready` says 503, so that a load balancer stops sending before the listener closes (`0`: close at once)' }
  },
  check (part) {
    // On the public port anyone who can reach the API could read the metrics.
    if (part.opsPort === 'public' && part.metricsToken === null) {
      throw new ConfigError('OPS_PORT=public serves /metrics on the API\'s port, which needs METRICS_TOKEN')
    }
  }
})
