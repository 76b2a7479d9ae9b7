// One window of load: autocannon on one server for a scenario, and the CPU it cost the server (and PostgreSQL) per request.
import { readdirSync, readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { settings } from './options.mjs'
import { cpuSeconds, rssMegabytes } from './processes.mjs'

/**
 * The CPU seconds so far of PostgreSQL's processes for the server measured, by pid: the backends
 * serving it (pg_stat_activity: those of the database `client` is connected to, but the client's own,
 * and only those named `application` where the server names its connections) and the shared background
 * processes that do work on their behalf (WAL writer, checkpointer, background writer, autovacuum).
 * Read before and after a window; a process that ends within the window is not counted.
 */
async function postgresCpu (client, application) {
  const { rows } = await client.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ($1::text IS NULL OR application_name = $1)',
    [application ?? null])
  const backends = new Map()
  for (const { pid } of rows) {
    try { backends.set(pid, cpuSeconds(pid)) } catch {}
  }
  const background = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (/^postgres: .*(walwriter|checkpointer|background writer|autovacuum)/.test(cmdline)) background.set(Number(entry), cpuSeconds(Number(entry)))
    } catch {}
  }
  return { backends, background }
}

/** What `read` reads from /proc, or NaN when the process has gone. */
function ifAlive (read) {
  try {
    return read()
  } catch (error) {
    if (error.code === 'ENOENT') return NaN
    throw error
  }
}

const cpuSince = (before, after) => [...after].reduce((sum, [pid, cpu]) => sum + cpu - (before.get(pid) ?? 0), 0)

/**
 * `duration` seconds of `scenario` against `server` (as `target`: 'ceiling' or an engine); its figures.
 * `connections`: other than the run's; `beside`: that many more connections send `scenario.beside`
 * meanwhile, without pause, and the figures are the scenario's own requests' (CPU: the whole server's).
 */
export async function load (server, scenario, target, duration, { connections = settings.connections, beside = 0 } = {}) {
  const pgBefore = server.postgres && await postgresCpu(server.postgres, server.postgresApplication)
  const before = cpuSeconds(server.pid)
  const cannon = (connections, setup) => autocannon({ url: server.url, connections, duration, requests: [{ setupRequest: req => setup(req, target) }] })
  const [result] = await Promise.all([cannon(connections, scenario.setup), ...(beside > 0 ? [cannon(beside, scenario.beside)] : [])])
  // A server that died within the window (an attack may do that) has figures until then, and no CPU or memory after.
  const cpu = ifAlive(() => cpuSeconds(server.pid)) - before
  const total = result.requests.total
  const pgAfter = server.postgres && await postgresCpu(server.postgres, server.postgresApplication)
  return {
    ...(pgAfter && {
      pgCpuUs: total > 0 ? cpuSince(pgBefore.backends, pgAfter.backends) / total * 1e6 : NaN,
      pgBackgroundUs: total > 0 ? cpuSince(pgBefore.background, pgAfter.background) / total * 1e6 : NaN,
      pgConnections: pgAfter.backends.size
    }),
    rps: total / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs: total > 0 ? cpu / total * 1e6 : NaN,
    rss: ifAlive(() => rssMegabytes(server.pid)),
    total
  }
}
