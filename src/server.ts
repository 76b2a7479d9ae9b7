// Process entry: reads the config, starts the service, and shuts it down gracefully on SIGINT/SIGTERM.
import type { AddressInfo } from 'node:net'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { type ConfigError, loadConfig } from './config.js'

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

const app = await buildApp(config).catch((error: Error) => fail(`cannot start: ${error.message}`))

// On a signal: stop accepting connections, let in-flight requests finish, close the database, exit 0.
// An uncaught error takes the same path (its err is logged) and exits 1.
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  app.log.info({ signal, err }, 'shutting down')
  await app.close()
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
