// The peers run (`npm run bench -- --peers`): the ceiling, the service per engine and its peers through the same scenarios in turns; returns its report and section.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { withServices } from '../engine-services.mjs'
import { int } from '../format.mjs'
import { measureTurns } from '../measure.mjs'
import { cacheNote, engineNote, opts, sectionSuffix, settings } from '../options.mjs'
import { root } from '../paths.mjs'
import { peerDatabase } from '../postgres.mjs'
import { report } from '../report.mjs'
import { platformaticDir } from './install.mjs'
import { peerScenarios } from './scenarios.mjs'
import { peerRecords } from './seed.mjs'
import { withPeers } from './servers.mjs'
import { detailTable, overviewTable, ratioTable } from './tables.mjs'
import { peerTargets, targets } from './targets.mjs'

const versionOf = dir => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version

/** How the peers were set up, for the report's setup lines. */
function peersSetup (count) {
  const lines = [
    `Peers: the same ${int(count)} books and ${int(settings.students)} students in tables books(id, title, author, year, isbn) and ` +
      'students(id, name, email, year) with integer ids (scripts/bench/peers/seed.mjs), so each is sent its own form of each request; ' +
      'each runs on core 0 like the service'
  ]
  if (peerTargets.some(t => t.id === 'fastify')) {
    lines.push(`Bare Fastify: \`scripts/bench/peers/fastify-sqlite.mjs\`, Fastify ${versionOf(join(root, 'node_modules/fastify'))} and better-sqlite3 ` +
      `${versionOf(join(root, 'node_modules/better-sqlite3'))}, prepared statements, JSON schemas on bodies and responses, no logger, WAL, synchronous=NORMAL, list ORDER BY id LIMIT 20`)
  }
  if (peerTargets.some(t => t.id.startsWith('platformatic'))) {
    lines.push(`Platformatic DB ${versionOf(join(platformaticDir, 'node_modules/@platformatic/db'))}: \`scripts/bench/peers/platformatic/server.mjs\` (buildServer, ` +
      'OpenAPI on, GraphQL off, logger at warn), on the tables above without migrations; its list is GET /books?limit=20 (no ORDER BY)' +
      (peerTargets.some(t => t.id === 'platformatic-sqlite') ? '; on SQLite, a file in SQLite\'s default journal mode, as Platformatic creates one' : '') +
      (peerTargets.some(t => t.postgres) ? `; on PostgreSQL, database ${peerDatabase('platformatic')} on the same server (its backends' CPU read as the service's: every backend of that database)` : ''))
  }
  return lines
}

/** The peers run on the `seeded` databases of the service, the ceiling already started on their sample. */
export async function peersRun (dir, ceiling, seeded) {
  const records = peerRecords(seeded)
  const list = peerScenarios(seeded.sample, records.sampleIds)
  if (list.length === 0) throw new Error(`--only names none of the peers' scenarios, get-book, list-first, post-book, put-book and mixed (got ${opts.only})`)
  const { result: rows, peak } = await withServices(dir, seeded.count, services => withPeers(dir, records, async peers => {
    // Measured in the order of the tables, the ceiling first.
    const servers = Object.fromEntries(targets.filter(t => t.id !== 'ceiling').map(t => [t.id, services[t.id] ?? peers[t.id]]))
    const rows = []
    for (const scenario of list) rows.push({ scenario, ...await measureTurns(ceiling, servers, scenario, list.length) })
    return rows
  }))
  const tables = [
    ['Requests/s · CPU µs per request (for PostgreSQL targets: the process + its PostgreSQL backends) · p99', overviewTable(rows)],
    ['Against the peers (issue 24\'s targets)', ratioTable(rows)],
    ['Every figure', detailTable(rows)]
  ]
  const title = `Peers, ${opts.quick ? 'quick run' : 'full run'}${engineNote}${cacheNote}: ${int(seeded.count)} books, ${int(settings.students)} students`
  const text = await report(title, tables, peak, peersSetup(seeded.count))
  return { text, section: `peers${opts.quick ? '-quick' : ''}${sectionSuffix}` }
}
