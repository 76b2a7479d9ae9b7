// Process entry: reads the config, starts the service, and shuts it down gracefully on SIGINT/SIGTERM.
import type { AddressInfo } from 'node:net'
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { firstAdminKey } from './api-keys.js'
import { buildApp } from './app.js'
import { type ConfigError, loadConfig } from './config.js'
import { openConfiguredRepositories } from './repositories/sqlite.js'

function fail (message: string): never {
  console.error(`books-students-api: ${message}`)
  process.exit(1)
}

let config
try {
  config = loadConfig(process.env)
} catch (error) {
  fail((error as ConfigError).message)
}

// Log lines are written asynchronously so that a request never waits for stdout; they are flushed
// on shutdown, and only a hard kill can lose the last few.
const logStream = pino.destination({ dest: 1, sync: false })

const { app, firstKey } = await (async () => {
  const repositories = openConfiguredRepositories(config)
  const firstKey = await firstAdminKey(config.adminApiKey, repositories.apiKeys)
  return { app: await buildApp(config, { repositories, logStream }), firstKey }
})().catch((error: Error) => fail(`cannot start: ${error.message}`))

// On a signal: stop accepting connections, let in-flight requests finish, close the database, exit 0.
// An uncaught error takes the same path (its err is logged) and exits 1.
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  app.log.info({ signal, err }, 'shutting down')
  await app.close()
  logStream.flushSync()
})

try {
  await app.listen({ port: config.port, host: config.host })
} catch (error) {
  await app.close()
  fail(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`)
}

const { port } = app.server.address() as AddressInfo
const origin = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
console.log(`Books & Students API listening on ${origin}\nSwagger UI: ${origin}/docs`)
if (firstKey !== null) {
  // Printed once and never logged: only its hash is stored, so this is the one chance to copy it.
  console.log(`First start: created an admin API key with every scope. Copy it now, it is not shown again:\n${firstKey}\nManage keys with npm run keys (see README, Security).`)
}
