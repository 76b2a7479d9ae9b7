// The servers the benchmarks measure, started: the built service (dist/server.js) as in production, and the bare-Node ceiling.
import { join } from 'node:path'
import { root } from './paths.mjs'
import { startServer } from './processes.mjs'

export const apiKey = 'bench-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'

/**
 * Starts the service on the SQLite file `sqlitePath` or the PostgreSQL database `databaseUrl` (as `engine`
 * says), with `env` added to its environment; resolves once it answers, as startServer() does.
 */
export function startService ({ name, engine, sqlitePath, databaseUrl, env = {}, logTo, nodeOptions }) {
  return startServer({
    name,
    script: join(root, 'dist/server.js'),
    apiKey,
    env: {
      ...(engine === 'sqlite' ? { DATABASE_PATH: sqlitePath } : { DATABASE_URL: databaseUrl }),
      LOG_LEVEL: 'info',
      ADMIN_API_KEY: apiKey,
      // The limiter counts every request as in production; the quota is set so that it never refuses.
      RATE_LIMIT: '999999999/60',
      // A free port for health and metrics: two services of one run (--engine both), or a test beside
      // the bench, would otherwise both want the default 9464.
      OPS_PORT: '0',
      ...env
    },
    check: '/books?limit=1',
    logTo,
    nodeOptions
  })
}

/** Starts the ceiling (./ceiling.mjs) and hands it the records the scenarios ask for (`sample`: { books, students }). */
export async function startCeiling (sample) {
  const ceiling = await startServer({ name: 'ceiling', script: join(root, 'scripts/bench/ceiling.mjs'), env: {}, check: '/books?limit=1', apiKey })
  const seeded = await fetch(ceiling.url + '/__seed', { method: 'POST', body: JSON.stringify(sample) })
  if (!seeded.ok) {
    await ceiling.stop()
    throw new Error(`the ceiling refused its seed: ${seeded.status}`)
  }
  return ceiling
}
