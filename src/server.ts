// Process entry: reads the config, starts the service and its ops listener, and shuts them down gracefully on SIGINT/SIGTERM.
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { allScopes, firstAdminKey, unshownFirstKeys } from './access/api-keys.js'
import { buildApp } from './app.js'
import { type ConfigError, loadConfig, maskPassword } from './config/index.js'
import { withEnvFile } from './config/env-file.js'
import { ServiceMetrics } from './ops/metrics.js'
import { buildOpsApp } from './ops/routes.js'
import { openConfiguredRepositories } from './storage/open.js'
import type { Tracing } from './observability/tracing.js'

function fail (message: string): never {
  console.error(`books-students-api: ${message}`)
  process.exit(1)
}

let config
let settings
try {
  settings = withEnvFile(process.env, process.cwd())
  config = loadConfig(settings.env)
} catch (error) {
  fail((error as ConfigError).message)
}

// Synchronous writes, as pino's default: the request lines of a whole event-loop turn go out in one
// write (src/observability/request-log.ts), and an asynchronous write costs more than that write itself, since it
// hands the buffer to libuv's thread pool and back (measured, issue 6). A stalled reader of stdout
// slows the service rather than filling its memory; a crash loses at most the current turn's lines.
const logStream = pino.destination({ dest: 1, sync: true })

// Before the app, which is handed its provider. Loaded only when configured: the SDK takes a quarter of a second and some 30 MB.
const tracing: Tracing | null = config.tracing === null ? null : (await import('./observability/tracing.js')).startTracing(config.tracing)

const { app, ops, apiKeys } = await (async () => {
  // Made before the storage, which tells it of every group-commit batch.
  const metrics = config.metrics ? new ServiceMetrics() : null
  // Before the app and its logger: a migration that backfills a large table says how far it got.
  const onMigrationProgress = (message: string): void => console.error(`books-students-api: migrating ${message}`)
  const repositories = await openConfiguredRepositories(config, { serving: true, onMigrationProgress, ...(metrics !== null && { onBatch: metrics.batchCommitted }) })
  const app = await buildApp(config, { repositories, logStream, metrics, tracerProvider: tracing?.provider })
  const ops = typeof config.opsPort === 'number' ? await buildOpsApp(app.operations, app.log, config) : null
  return { app, ops, apiKeys: repositories.apiKeys }
})().catch((error: Error) => fail(`cannot start: ${error.message}`))
tracing?.logTo(app.log)

// On a signal: stop accepting connections, let in-flight requests finish, close the database, exit 0.
// An uncaught error takes the same path (its err is logged) and exits 1. The ops listener closes
// last, so that readiness says "not ready" until the very end.
let closing = false
let signalled: NodeJS.Signals | undefined
const grace = closeWithGrace({ delay: 10_000, skip: ['SIGINT', 'SIGTERM'] }, async ({ signal = signalled, err }) => {
  closing = true
  app.operations.health.drain()
  app.log.info({ signal, err }, 'shutting down')
  await app.close()
  await ops?.close()
  // After the app: the spans of the last requests are exported too.
  await tracing?.shutdown()
  logStream.flushSync()
})
// SIGINT and SIGTERM are handled here, not by close-with-grace, which takes a second one for an
// impatient operator's and exits at once, and between the two leaves the signal's default action
// (die) in place. Ctrl-C on `npm start` arrives twice, from the terminal and forwarded by npm: that
// cut one shutdown in four short (measured, issue 15). A repeat is ignored; the delay still bounds a
// shutdown that hangs, and a supervisor's SIGKILL ends it at once.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) {
      // Said at warn: an operator who pressed Ctrl-C twice learns why the process is still draining.
      app.log.warn({ signal }, 'already shutting down: the repeated signal is ignored while requests finish')
      return
    }
    closing = true
    signalled = signal
    // SIGTERM comes from a supervisor (Kubernetes, systemd, docker stop): report not-ready at once and
    // keep serving while the load balancer notices. SIGINT is someone at a terminal: stop now.
    const drain = signal === 'SIGTERM' ? config.shutdownDrain : 0
    if (drain === 0) return grace.close()
    app.operations.health.drain()
    app.log.info({ signal, drainMs: drain }, 'draining: reporting not-ready and serving until the drain period ends')
    setTimeout(() => grace.close(), drain)
  })
}

try {
  await app.listen({ port: config.port, host: config.host })
} catch (error) {
  await app.close()
  fail(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`)
}

if (ops !== null) {
  try {
    await ops.listen({ port: config.opsPort as number, host: config.opsHost })
  } catch (error) {
    await app.close()
    // A second node on one machine meets the first here, unless it was told another OPS_PORT than PORT.
    const hint = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? '; each node on one machine needs its own OPS_PORT (OPS_PORT=0 picks a free one and prints it)' : ''
    fail(`cannot listen on OPS_HOST:OPS_PORT ${config.opsHost}:${config.opsPort}: ${(error as Error).message}${hint}`)
  }
}

// Only now, with every listener up: a start that fails before serving (a port taken) makes no key it
// cannot print, and the next start that serves makes and prints it (issue 23). Both before the lines
// that say the service is up, which whoever watches the output waits for.
const firstKey = await firstAdminKey(config.adminApiKey, apiKeys)
const unshown = firstKey === null ? await unshownFirstKeys(apiKeys) : []

const originOf = (host: string, server: FastifyInstance) => `http://${host.includes(':') ? `[${host}]` : host}:${(server.server.address() as AddressInfo).port}`
const origin = originOf(config.host, app)
console.log(`Books & Students API listening on ${origin}\nSwagger UI: ${origin}/docs`)
// Which database, said plainly: a setting that did not apply (a typo, a file not read) shows here.
const database = config.postgresUrl !== null
  ? `PostgreSQL ${maskPassword(config.postgresUrl)}`
  : config.databasePath === ':memory:' ? 'SQLite in memory (nothing is kept once it stops)' : `SQLite ${resolve(config.databasePath)}`
console.log(`Database: ${database}`)
if (settings.fromFile.length > 0) console.log(`Settings from ${settings.file}: ${settings.fromFile.join(', ')} (variables set in the environment win over the file)`)
if (ops !== null) {
  console.log(`Operations (health, readiness, metrics) on ${originOf(config.opsHost, ops)}`)
} else if (config.opsPort === 'public') {
  console.log(`Operations (health, readiness, metrics) on ${origin}: /metrics needs METRICS_TOKEN`)
}
for (const { key_id: keyId } of unshown) {
  console.error(`books-students-api: the first admin key ${keyId} was stored but never shown (the start that made it stopped before printing it), so nobody has its secret. ` +
    `Make a key with npm run keys -- create --scopes ${allScopes.join(',')} --name admin, then revoke this one with npm run keys -- revoke ${keyId}`)
}
if (firstKey !== null) {
  // Printed once and never logged: only its hash is stored, so this is the one chance to copy it.
  console.log(`First start: created an admin API key with every scope. Copy it now, it is not shown again:\n${firstKey.key}\nManage keys with npm run keys (see docs/security.md).`)
  // After the printing: a start stopped in between leaves a key marked unshown, which the next start reports.
  await firstKey.shown()
}
