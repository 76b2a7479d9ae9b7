// The targets of `npm run bench -- --peers`, in the order they are measured and reported: the ceiling, the service per engine, and the peers.
import { engines } from '../options.mjs'

/**
 * `api` says which requests a target answers: the service's (UUIDs, published_year; the ceiling too)
 * or the peers' (integer ids, year, as Platformatic DB maps the tables of ./seed.mjs). `engine` keeps a
 * target out of a run that does not measure that engine. The service's own are named by their engine,
 * as in the other runs.
 */
const allTargets = [
  { id: 'ceiling', label: 'ceiling (bare node:http + Map)', api: 'service' },
  { id: 'fastify', label: 'bare Fastify 5 + better-sqlite3, no features', api: 'peer', engine: 'sqlite' },
  { id: 'sqlite', label: 'this service, SQLite', api: 'service', engine: 'sqlite' },
  { id: 'platformatic-sqlite', label: 'Platformatic DB 2 on SQLite', api: 'peer', engine: 'sqlite' },
  { id: 'platformatic-postgres', label: 'Platformatic DB 2 on PostgreSQL (same server)', api: 'peer', engine: 'postgres', postgres: true },
  { id: 'postgres', label: 'this service, PostgreSQL', api: 'service', engine: 'postgres', postgres: true }
]

export const targets = allTargets.filter(t => t.engine === undefined || engines.includes(t.engine))
export const peerTargets = targets.filter(t => t.api === 'peer')
