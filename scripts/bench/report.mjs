// The report: a section's heading and setup lines (command, machine, load, service) above its tables.
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { int } from './format.mjs'
import { command, engines, opts, postgresServer, settings } from './options.mjs'
import { root } from './paths.mjs'
import { benchDatabase, postgresVersion } from './postgres.mjs'
import { cores, hasTaskset } from './processes.mjs'

function machine () {
  const model = os.cpus()[0]?.model ?? 'unknown CPU'
  return `${model}, ${cores} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}, ` +
    `autocannon ${JSON.parse(readFileSync(join(root, 'node_modules/autocannon/package.json'), 'utf8')).version}, ` +
    (hasTaskset ? 'server pinned to core 0 and load generator to core 1 (taskset)' : 'no pinning (taskset unavailable or one core)')
}

/** `setup`: more lines for the setup list, after the service's (the peers run describes its peers there). */
export async function report (title, tables, peakRss, setup = []) {
  const services = {
    sqlite: `fresh SQLite file (WAL, synchronous=NORMAL), RECORD_CACHE_SIZE=${opts['cache-size'] ?? '10000 (default)'}`,
    postgres: engines.includes('postgres') &&
      `PostgreSQL ${await postgresVersion(postgresServer)} on the same machine, not pinned (it shares both cores with the service and the load generator), ` +
      `database ${benchDatabase} created for the run, PG_POOL_MAX=4 (default), RECORD_CACHE_SIZE=${opts['cache-size'] ?? '0 (default on PostgreSQL)'}` +
      (opts.hostile
        ? ''
        : '; PostgreSQL CPU is user + system time from /proc of the backends serving the service (pg_stat_activity, application_name books-students-api) and, ' +
          'as "background", of the WAL writer, checkpointer, background writer and autovacuum, each over the measured window, per request')
  }
  const load = opts.hostile
    ? `the victim on ${settings.connections} connections, on a service started for each attack: ${settings.warmup} s of warm-up, ${settings.duration} s alone, then ${settings.duration} s beside the attack`
    : `${settings.connections} connections, ${settings.runs} run(s) of ${settings.duration} s per scenario after ${settings.warmup} s of warm-up, medians reported (errors summed)${opts.scale ? '' : opts.peers ? '; the targets take turns, run after run, and a CPU ratio is the median of the ratios to the ceiling run just before' : '; ceiling and service runs alternate, and the CPU ratio is the median of the ratios of each pair'}`
  return [
    `### ${title}`,
    '',
    `- Command: \`${command}\``,
    `- When: ${new Date().toISOString()}`,
    `- Machine: ${machine()}`,
    `- Load: ${load}`,
    `- Service: \`node dist/server.js\`, LOG_LEVEL=info, ADMIN_API_KEY set and sent${opts.hostile ? ' (only to see the service up)' : ''}${opts.env.map(pair => `, ${pair}`).join('')}; ${engines.map(e => `${engines.length > 1 ? `${e}: ` : ''}${services[e]}`).join('; ')}; peak RSS ${int(peakRss)} MB`,
    ...setup.map(line => `- ${line}`),
    '',
    ...tables.flatMap(([heading, table]) => [...(heading === null ? [] : [`#### ${heading}`, '']), table, '']),
    ''
  ].join('\n').replace(/\n\n$/, '\n')
}
