// The peers run's tables: every target beside the others per scenario (issue 24's table), the ratios its targets are stated on, and each figure in full.
import { fixed, int, ms } from '../format.mjs'
import { targets } from './targets.mjs'

// Issue 24's targets. SQLite, every feature on: the CPU ratio to the ceiling per scenario, no scenario
// behind bare Fastify, writes' p99 under 5 ms. PostgreSQL, one node against Platformatic DB on the same
// server: 1.5 x its requests/s and less CPU per request (service + backends), writes' p99 under 15 ms.
const sqliteCpuTargets = { 'get-book': 0.7, 'list-first': 0.6, 'post-book': 0.45, 'put-book': 0.45 }
const sqliteWriteP99 = 5
const postgresRpsFactor = 1.5
const postgresWriteP99 = 15

const has = id => targets.some(t => t.id === id)
const check = (label, met) => `${label}: ${met ? 'met' : 'not met'}`
// A PostgreSQL target's cost is its own process's CPU and its backends' together: the database does part of its work.
const totalCpu = s => s.cpuUs + (s.pgCpuUs ?? 0)
const cpuCell = s => s.pgCpuUs === undefined ? int(s.cpuUs) : `${int(s.cpuUs)} + ${int(s.pgCpuUs)}`
const figures = (row, id) => id === 'ceiling' ? row.ceiling : row.services[id]

/** One line per target, one column per scenario: requests/s · CPU µs per request (+ PostgreSQL backends) · p99. */
export function overviewTable (rows) {
  const lines = [
    `| target | ${rows.map(r => r.scenario.short).join(' | ')} |`,
    `|---|${rows.map(() => '---:|').join('')}`
  ]
  for (const target of targets) {
    lines.push(`| ${target.label} | ${rows.map(row => {
      const s = figures(row, target.id)
      return `${int(s.rps)}/s · ${cpuCell(s)} µs · p99 ${ms(s.p99)} ms`
    }).join(' | ')} |`)
  }
  return lines.join('\n')
}

/** Per scenario, the service against bare Fastify (SQLite) and against Platformatic DB (PostgreSQL), with issue 24's targets. */
export function ratioTable (rows) {
  const sqlite = has('sqlite') && has('fastify')
  const postgres = has('postgres') && has('platformatic-postgres')
  const lines = [
    '| scenario |' +
      (sqlite ? ' SQLite: service ÷ bare Fastify, req/s | bare Fastify ÷ service, CPU µs/req | ceiling ÷ service, CPU µs/req |' : '') +
      (postgres ? ' PostgreSQL: service ÷ Platformatic, req/s | Platformatic ÷ service, CPU µs/req (process + backends) |' : '') +
      ' targets (issue 24) |',
    '|---|' + (sqlite ? '---:|---:|---:|' : '') + (postgres ? '---:|---:|' : '') + '---|'
  ]
  for (const row of rows) {
    const { scenario } = row
    const cells = []
    const checks = []
    if (sqlite) {
      const [service, fastify] = [row.services.sqlite, row.services.fastify]
      const cpuRatio = row.cpuRatios.sqlite
      cells.push(fixed(service.rps / fastify.rps), fixed(fastify.cpuUs / service.cpuUs), fixed(cpuRatio))
      checks.push(check('SQLite not behind bare Fastify', service.rps >= fastify.rps && service.cpuUs <= fastify.cpuUs))
      if (sqliteCpuTargets[scenario.id] !== undefined) checks.push(check(`CPU ratio ≥ ${sqliteCpuTargets[scenario.id]}`, cpuRatio >= sqliteCpuTargets[scenario.id]))
      if (scenario.write) checks.push(check(`SQLite p99 < ${sqliteWriteP99} ms`, service.p99 < sqliteWriteP99))
    }
    if (postgres) {
      const [service, platformatic] = [row.services.postgres, row.services['platformatic-postgres']]
      cells.push(fixed(service.rps / platformatic.rps), fixed(totalCpu(platformatic) / totalCpu(service)))
      checks.push(check(`PostgreSQL ≥ ${postgresRpsFactor} x Platformatic req/s`, service.rps >= postgresRpsFactor * platformatic.rps))
      checks.push(check('less CPU than Platformatic', totalCpu(service) < totalCpu(platformatic)))
      if (scenario.write) checks.push(check(`PostgreSQL p99 < ${postgresWriteP99} ms`, service.p99 < postgresWriteP99))
    }
    lines.push(`| ${scenario.short} | ${[...cells, checks.join('; ')].join(' | ')} |`)
  }
  return lines.join('\n')
}

/** Every figure of every target and scenario, the errors included. */
export function detailTable (rows) {
  const postgres = targets.some(t => t.postgres)
  const lines = [
    '| target | scenario | req/s | p50 / p99 ms | errors / non-2xx | CPU µs/req |' +
      (postgres ? ' PostgreSQL backends CPU µs/req | PostgreSQL background CPU µs/req | PostgreSQL connections |' : '') + ' CPU ratio (ceiling ÷ target) | RSS MB |',
    '|---|---|---:|---:|---:|---:|' + (postgres ? '---:|---:|---:|' : '') + '---:|---:|'
  ]
  for (const target of targets) {
    for (const row of rows) {
      const s = figures(row, target.id)
      lines.push(`| ${target.label} | ${row.scenario.short} | ${int(s.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} |` +
        (postgres ? ` ${[s.pgCpuUs, s.pgBackgroundUs, s.pgConnections].map(n => target.postgres ? int(n) : '–').join(' | ')} |` : '') +
        ` ${target.id === 'ceiling' ? '1.00' : fixed(row.cpuRatios[target.id])} | ${int(s.rss)} |`)
    }
  }
  return lines.join('\n')
}
