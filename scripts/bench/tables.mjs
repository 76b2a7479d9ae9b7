// The result tables (one engine, the engines side by side, the sizes of --scale) and the issues' targets they check.
import { fixed, int, ms } from './format.mjs'
import { engines } from './options.mjs'

// The issue's targets, as ceiling CPU per request divided by the service's (higher is better).
const cpuTargets = { 'get-book': 0.6, 'list-first': 0.4, 'post-book': 0.5, 'put-book': 0.5 }

// Issue 11's targets for the PostgreSQL engine: requests per second, p99, and against SQLite in the same run.
const postgresRpsTargets = { 'get-book': 11_000, 'post-book': 8_500, 'put-book': 8_500 }

/** The target checks of one engine's row; `sqlite` is SQLite's figures from the same run, if it was measured. */
function targetChecks (engine, scenario, s, cpuRatio, sqlite) {
  const checks = []
  if (engine === 'sqlite') {
    if (cpuTargets[scenario.id] !== undefined) checks.push(`CPU ratio ≥ ${cpuTargets[scenario.id]}: ${cpuRatio >= cpuTargets[scenario.id] ? 'met' : 'not met'}`)
    if (scenario.query) checks.push(`p99 < 50 ms: ${s.p99 < 50 ? 'met' : 'not met'}`)
    else if (scenario.read) checks.push(`p99 < 10 ms: ${s.p99 < 10 ? 'met' : 'not met'}`)
    return checks
  }
  const target = postgresRpsTargets[scenario.id]
  if (target !== undefined) checks.push(`≥ ${int(target)}/s: ${s.rps >= target ? 'met' : `not met (${Math.round(100 * s.rps / target)} %)`}`)
  if (scenario.id === 'get-book' && sqlite !== undefined) checks.push(`≥ ½ SQLite: ${s.rps >= sqlite.rps / 2 ? 'met' : 'not met'} (${fixed(s.rps / sqlite.rps)})`)
  if (scenario.query) checks.push(`p99 < 50 ms: ${s.p99 < 50 ? 'met' : 'not met'}`)
  else checks.push(`p99 < 20 ms: ${s.p99 < 20 ? 'met' : 'not met'}`)
  checks.push(`0 errors: ${s.errors + s.non2xx === 0 ? 'met' : 'not met'}`)
  return checks
}

export function mainTable (rows, engine) {
  const postgres = engine === 'postgres'
  const lines = [
    '| scenario | req/s | ceiling req/s | req/s ratio | p50 / p99 ms | ceiling p50 / p99 ms | errors / non-2xx | CPU µs/req | ceiling CPU µs/req | CPU ratio (ceiling ÷ service) | RSS MB |' +
      (postgres ? ' PostgreSQL backends CPU µs/req | PostgreSQL background CPU µs/req | PostgreSQL connections |' : '') + ' target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|' + (postgres ? '---:|---:|---:|' : '') + '---|'
  ]
  for (const { scenario, services, ceiling: c, cpuRatios } of rows) {
    const s = services[engine]
    const cpuRatio = cpuRatios[engine]
    const checks = targetChecks(engine, scenario, s, cpuRatio, services.sqlite)
    lines.push(`| ${scenario.name} | ${int(s.rps)} | ${int(c.rps)} | ${fixed(s.rps / c.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${ms(c.p50)} / ${ms(c.p99)} | ` +
      `${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} | ${int(c.cpuUs)} | ${fixed(cpuRatio)} | ${int(s.rss)} |` +
      (postgres ? ` ${int(s.pgCpuUs)} | ${int(s.pgBackgroundUs)} | ${int(s.pgConnections)} |` : '') + ` ${checks.join('; ') || '–'} |`)
  }
  return lines.join('\n')
}

/** Both engines of one run side by side. */
export function engineTable (rows) {
  const lines = [
    '| scenario | SQLite req/s | PostgreSQL req/s | PostgreSQL ÷ SQLite | SQLite CPU µs/req | PostgreSQL: service + database CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|'
  ]
  for (const { scenario, services: { sqlite: l, postgres: p } } of rows) {
    lines.push(`| ${scenario.name} | ${int(l.rps)} | ${int(p.rps)} | ${fixed(p.rps / l.rps)} | ${int(l.cpuUs)} | ${int(p.cpuUs)} + ${int(p.pgCpuUs + p.pgBackgroundUs)} |`)
  }
  return lines.join('\n')
}

/**
 * One row per size and scenario. On PostgreSQL a request's cost is the service's CPU and its backends'
 * together (the database does a list's work there), and "vs 1st size" compares that sum. The list
 * queries' targets (issue 12) are checked at sizes of 1,000,000 and more: p99 < 50 ms, and the cost
 * within 2 × of the first size's.
 */
export function scaleTable (bySize, ceiling) {
  const postgres = engines[0] === 'postgres'
  const cost = s => postgres ? s.cpuUs + s.pgCpuUs : s.cpuUs
  const lines = [
    '| books | scenario | req/s | p50 / p99 ms | errors / non-2xx | CPU µs/req | ' + (postgres ? 'PostgreSQL backends CPU µs/req | PostgreSQL background CPU µs/req | service + backends ' : '') +
      'CPU vs 1st size | engine floor µs | CPU ratio (ceiling ÷ service) | RSS MB | target |',
    '|---:|---|---:|---:|---:|---:|' + (postgres ? '---:|---:|' : '') + '---:|---:|---:|---:|---|'
  ]
  const first = bySize[0]
  for (const { size, rows } of bySize) {
    // Issue 25: a list costs at most 1.5 × its engine floor plus what a plain page costs (list-first, same size).
    const plain = rows.find(r => r.scenario.id === 'list-first')?.service
    for (const [i, { scenario, service: s, floor }] of rows.entries()) {
      const growth = cost(s) / cost(first.rows[i].service)
      const checks = scenario.query && size >= 1_000_000
        ? [`p99 < 50 ms: ${s.p99 < 50 ? 'met' : 'not met'}`, `≤ 2 × 1st size: ${growth <= 2 ? 'met' : 'not met'}`]
        : []
      if (floor !== undefined && plain !== undefined) {
        const bound = 1.5 * floor + cost(plain)
        checks.push(`≤ 1.5 × floor + plain page (${int(bound)}): ${cost(s) <= bound ? 'met' : 'not met'}`)
      }
      if (s.alone !== undefined) {
        checks.push(`p99 < 10 ms: ${s.p99 < 10 ? 'met' : 'not met'}`, `≥ 70 % of alone (${int(s.alone.rps)}/s, p99 ${ms(s.alone.p99)} ms): ${s.rps >= 0.7 * s.alone.rps ? 'met' : 'not met'} (${fixed(s.rps / s.alone.rps)})`)
      }
      lines.push(`| ${int(size)} | ${scenario.name} | ${int(s.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | ${s.errors} / ${s.non2xx} | ${int(s.cpuUs)} | ` +
        (postgres ? `${int(s.pgCpuUs)} | ${int(s.pgBackgroundUs)} | ` : '') +
        `${fixed(growth)} | ${floor === undefined ? '–' : int(floor)} | ${fixed(ceiling[i].cpuUs / s.cpuUs)} | ${int(s.rss)} | ${checks.join('; ') || '–'} |`)
    }
  }
  return lines.join('\n')
}
