// `npm run bench:events`' command line: its usage, the options read once, and this run's PostgreSQL database.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { commandLine } from '../cli.mjs'
import { root } from './paths.mjs'
import { benchDatabase, defaultPostgresUrl, postgresUrl } from './postgres.mjs'

const usage = `usage: npm run bench:events -- [options]   (run npm run build first: it starts dist/server.js)
  --engine E           sqlite (default) or postgres
  --streams N          event streams held open at once, all with the admin key (default 100)
  --duration S         seconds of writing (default 10)
  --rate N             POST /books per second, sent at that pace whatever the answers' speed (default 200)
  --postgres-url URL   the PostgreSQL server for --engine postgres (default $BENCH_POSTGRES_URL or
                       postgres://postgres@127.0.0.1:5432/postgres); the run gets a database bsa_bench_<pid>, dropped after`

export const { opts, badUsage, positive } = commandLine('npm run bench:events', usage, {
  engine: { type: 'string', default: 'sqlite' },
  streams: { type: 'string', default: '100' },
  duration: { type: 'string', default: '10' },
  rate: { type: 'string', default: '200' },
  'postgres-url': { type: 'string', default: defaultPostgresUrl }
})
export const streamCount = Math.round(positive('streams', opts.streams))
export const duration = positive('duration', opts.duration)
export const rate = positive('rate', opts.rate)
if (!['sqlite', 'postgres'].includes(opts.engine)) badUsage(`--engine must be sqlite or postgres (got ${opts.engine})`)
if (!existsSync(join(root, 'dist/server.js'))) badUsage('dist/server.js is missing: run npm run build first')
// Only a PostgreSQL run reads --postgres-url.
export const databaseUrl = opts.engine === 'postgres' ? postgresUrl(opts['postgres-url'], benchDatabase) : undefined
