// One window of load: autocannon on one server for a scenario, and the CPU it cost the server (and PostgreSQL) per request.
import { readdirSync, readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { settings } from './options.mjs'
import { benchDatabase } from './postgres.mjs'
import { cpuSeconds, rssMegabytes } from './processes.mjs'

/**
 * The CPU seconds so far of PostgreSQL's processes for this run, by pid: the backends serving the
 * service (pg_stat_activity, application_name books-students-api, this run's database) and the shared
 * background processes that do work on their behalf (WAL writer, checkpointer, background writer,
 * autovacuum). Read before and after a window; a process that ends within the window is not counted.
 */
async function postgresCpu (client) {
  const { rows } = await client.query(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'books-students-api'", [benchDatabase])
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

const cpuSince = (before, after) => [...after].reduce((sum, [pid, cpu]) => sum + cpu - (before.get(pid) ?? 0), 0)

/** `duration` seconds of `scenario` against `server` (as `target`: 'ceiling' or an engine); its figures. */
export async function load (server, scenario, target, duration) {
  const pgBefore = server.postgres && await postgresCpu(server.postgres)
  const before = cpuSeconds(server.pid)
  const result = await autocannon({
    url: server.url,
    connections: settings.connections,
    duration,
    requests: [{ setupRequest: req => scenario.setup(req, target) }]
  })
  const cpu = cpuSeconds(server.pid) - before
  const total = result.requests.total
  const pgAfter = server.postgres && await postgresCpu(server.postgres)
  return {
    ...(pgAfter && {
      pgCpuUs: total > 0 ? cpuSince(pgBefore.backends, pgAfter.backends) / total * 1e6 : NaN,
      pgBackgroundUs: total > 0 ? cpuSince(pgBefore.background, pgAfter.background) / total * 1e6 : NaN,
      pgConnections: pgAfter.backends.size
    }),
    rps: total / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs: total > 0 ? cpu / total * 1e6 : NaN,
    rss: rssMegabytes(server.pid),
    total
  }
}
