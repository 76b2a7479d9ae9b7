// The run's services, one per engine on the databases seeded for a size: started for a measurement, stopped after.
import { closeSync, openSync } from 'node:fs'
import pg from 'pg'
import { benchDatabaseUrl, engines, opts, serviceEnv } from './options.mjs'
import { peakRss } from './processes.mjs'
import { sqlitePath } from './seed.mjs'
import { startService } from './servers.mjs'

/**
 * Starts a service per engine on the databases seeded for `size`, hands them to `use` ({ engine: server }),
 * and stops them; returns what `use` returned and the services' highest peak RSS.
 */
export async function withServices (dir, size, use) {
  const services = {}
  try {
    for (const engine of engines) {
      // Logging stays on at info, as in production; the lines go to a file (by default /dev/null, so a
      // full run does not fill the disk) and the cost of formatting and writing them is still paid.
      const log = openSync(opts.log, 'a')
      const service = await startService({
        name: engine,
        engine,
        sqlitePath: sqlitePath(dir, size),
        databaseUrl: benchDatabaseUrl,
        env: {
          ...(opts['cache-size'] !== undefined && { RECORD_CACHE_SIZE: opts['cache-size'] }),
          ...serviceEnv
        },
        logTo: log,
        nodeOptions: opts.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', opts.profile]
      })
      closeSync(log)
      services[engine] = service
      if (engine === 'postgres') {
        // Reads pg_stat_activity around each window; its own backend is not the service's (no application_name).
        service.postgres = new pg.Client({ connectionString: benchDatabaseUrl })
        await service.postgres.connect()
      }
    }
    const result = await use(services)
    return { result, peak: process.platform === 'linux' ? Math.max(...Object.values(services).map(s => peakRss(s.pid))) : NaN }
  } finally {
    for (const service of Object.values(services)) {
      await service.postgres?.end()
      await service.stop()
    }
  }
}
