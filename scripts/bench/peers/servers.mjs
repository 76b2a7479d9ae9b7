// The peers started for a peers run, each on its own copy of the seeded records, and stopped (their PostgreSQL database dropped) after.
import { join } from 'node:path'
import pg from 'pg'
import { postgresServer } from '../options.mjs'
import { root } from '../paths.mjs'
import { dropBenchDatabase, peerDatabase } from '../postgres.mjs'
import { startServer } from '../processes.mjs'
import { progress } from '../progress.mjs'
import { platformaticDir } from './install.mjs'
import { seedPeerPostgres, seedPeerSqlite } from './seed.mjs'
import { peerTargets } from './targets.mjs'

const scripts = {
  fastify: join(root, 'scripts/bench/peers/fastify-sqlite.mjs'),
  platformatic: join(platformaticDir, 'server.mjs')
}

/**
 * Seeds `records` (./seed.mjs's peerRecords) into a database per peer of the run, starts each peer on
 * core 0 as the service is, hands them to `use` ({ targetId: server }) and stops them; returns what
 * `use` returned. A PostgreSQL peer's server carries a client on its database, so that its backends'
 * CPU is read as the service's is.
 */
export async function withPeers (dir, records, use) {
  const servers = {}
  const sqliteIds = peerTargets.filter(t => !t.postgres).map(t => t.id)
  const sqlitePaths = sqliteIds.length > 0 ? seedPeerSqlite(dir, records, sqliteIds) : {}
  const postgresPeer = peerTargets.some(t => t.postgres)
  try {
    for (const target of peerTargets) {
      progress(`starting ${target.label}`)
      if (target.id === 'fastify') {
        servers.fastify = await startPeer(target, scripts.fastify, { DATABASE_PATH: sqlitePaths.fastify })
      } else if (target.postgres) {
        const url = await seedPeerPostgres(postgresServer, records, 'platformatic')
        const server = servers[target.id] = await startPeer(target, scripts.platformatic, { DATABASE_URL: url })
        server.postgres = new pg.Client({ connectionString: url })
        await server.postgres.connect()
      } else {
        servers[target.id] = await startPeer(target, scripts.platformatic, { DATABASE_URL: `sqlite://${sqlitePaths[target.id]}` })
      }
    }
    return await use(servers)
  } finally {
    for (const server of Object.values(servers)) {
      await server.postgres?.end()
      await server.stop()
    }
    if (postgresPeer) {
      await dropBenchDatabase(postgresServer, peerDatabase('platformatic'))
        .catch(error => progress(`could not drop ${peerDatabase('platformatic')}: ${error.message}`))
    }
  }
}

// Platformatic DB loads some 500 packages and reads the schema before it listens: on a busy
// two-core host that can take longer than the service's start.
const startPeer = (target, script, env) => startServer({ name: target.id, script, env, check: '/books?limit=1', apiKey: '', patience: 60_000 })
