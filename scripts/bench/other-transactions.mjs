// bench:events on PostgreSQL: the write transactions open in the cluster's other databases, which hold the feed back, sampled during the window.
import pg from 'pg'
import { benchDatabase } from './postgres.mjs'

/** Samples, every 100 ms until stopped, the write transactions open in other databases of the cluster than `databaseUrl`'s (this run's). */
export function watchOtherTransactions (databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl })
  const seen = { samples: 0, busy: 0, oldestMs: 0, stopped: false }
  const running = (async () => {
    await client.connect()
    while (!seen.stopped) {
      const { rows: [row] } = await client.query(`SELECT count(*)::int AS open, coalesce(max(extract(epoch FROM clock_timestamp() - xact_start) * 1000), 0)::float8 AS oldest
        FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM $1`, [benchDatabase])
      seen.samples++
      if (row.open > 0) seen.busy++
      seen.oldestMs = Math.max(seen.oldestMs, row.oldest)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    await client.end()
  })()
  return { stop: async () => { seen.stopped = true; await running; return seen } }
}
