// Measuring a scenario: a probe, warm-up and runs on one server or on the ceiling and the services in turns, reduced to medians.
import { load } from './load.mjs'
import { settings } from './options.mjs'
import { progress } from './progress.mjs'
import { headers } from './scenarios.mjs'

const median = values => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Checks the scenario answers 2xx once, so a broken setup shows up before minutes of 4xx. */
async function probe (server, scenario, target) {
  const req = scenario.setup({ headers: {} }, target)
  const res = await fetch(server.url + req.path, {
    method: req.method,
    body: req.body,
    headers
  })
  if (!res.ok) progress(`WARNING: ${server.name} answers ${res.status} to ${req.method} ${req.path}: ${(await res.text()).slice(0, 300)}`)
}

// The progress lines number the measured scenarios across the whole run.
let step = 0

/** The medians of a scenario's runs; errors and non-2xx are summed, as one failed request in any run must show. */
function aggregate (runs) {
  const result = Object.fromEntries(Object.keys(runs[0]).map(key => [key, median(runs.map(r => r[key]))]))
  result.errors = runs.reduce((sum, r) => sum + r.errors, 0)
  result.non2xx = runs.reduce((sum, r) => sum + r.non2xx, 0)
  return result
}

const summary = result =>
  `${Math.round(result.rps).toLocaleString('en')} req/s, p99 ${result.p99} ms, ${result.cpuUs.toFixed(0)} µs CPU/req, ${result.non2xx} non-2xx` +
  (result.pgCpuUs === undefined ? '' : `; PostgreSQL ${result.pgCpuUs.toFixed(0)} + ${result.pgBackgroundUs.toFixed(0)} µs CPU/req, ${result.pgConnections} connections`)

// The isolation scenario: its requests on this many of the run's connections, the load beside them on the rest.
const besideShare = 0.25

/**
 * One server alone: warm-up, then the runs of `scenario`, reduced by aggregate(); `steps` is the run's
 * count of them. A scenario with a load `beside` is run alone, then beside it, in turns; the result
 * is the latter's, with the former's as `alone`.
 */
export async function measure (server, scenario, target, steps) {
  await probe(server, scenario, target)
  progress(`[${++step}/${steps}] ${server.name}: ${scenario.name} (warm-up ${settings.warmup} s, ${settings.runs} x ${settings.duration} s)`)
  const beside = scenario.beside === undefined ? 0 : Math.round(settings.connections * besideShare)
  const own = { connections: settings.connections - beside }
  await load(server, scenario, target, settings.warmup, { ...own, beside })
  const [runs, alone] = [[], []]
  for (let run = 0; run < settings.runs; run++) {
    if (beside > 0) alone.push(await load(server, scenario, target, settings.duration, own))
    runs.push(await load(server, scenario, target, settings.duration, { ...own, beside }))
  }
  const result = aggregate(runs)
  if (beside > 0) {
    result.alone = aggregate(alone)
    progress(`    alone: ${summary(result.alone)}`)
  }
  progress(`    ${summary(result)}`)
  return result
}

/**
 * The ceiling and the services (one per engine) in turns, run after run: the host's speed drifts by
 * tens of percent within minutes here, and a ratio of two figures taken minutes apart carried that
 * drift. Each service's CPU ratio is the median of the ratios to the ceiling run just before it.
 */
export async function measureTurns (ceiling, services, scenario, steps) {
  const targets = [['ceiling', ceiling], ...Object.entries(services)]
  for (const [target, server] of targets) await probe(server, scenario, target)
  progress(`[${++step}/${steps}] ${scenario.name}: ${targets.map(([target]) => target).join(', ')} in turns (warm-up ${settings.warmup} s each, ${settings.runs} x ${settings.duration} s each)`)
  const beside = scenario.beside === undefined ? 0 : Math.round(settings.connections * besideShare)
  const options = { connections: settings.connections - beside, beside }
  for (const [target, server] of targets) await load(server, scenario, target, settings.warmup, options)
  const runs = Object.fromEntries(targets.map(([target]) => [target, []]))
  for (let run = 0; run < settings.runs; run++) {
    for (const [target, server] of targets) runs[target].push(await load(server, scenario, target, settings.duration, options))
  }
  const result = { ceiling: aggregate(runs.ceiling), services: {}, cpuRatios: {} }
  progress(`    ceiling ${summary(result.ceiling)}`)
  for (const engine of Object.keys(services)) {
    result.services[engine] = aggregate(runs[engine])
    result.cpuRatios[engine] = median(runs.ceiling.map((c, i) => c.cpuUs / runs[engine][i].cpuUs))
    progress(`    ${engine} ${summary(result.services[engine])}; CPU ratio ${result.cpuRatios[engine].toFixed(2)}`)
  }
  return result
}
