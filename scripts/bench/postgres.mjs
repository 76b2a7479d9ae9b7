// The benchmarks' own PostgreSQL database: named by the run's pid, created before and dropped after, on the server of --postgres-url.
import pg from 'pg'

export const defaultPostgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

// One database per bench process, so a crashed run's leftover is recognised by its dead pid and dropped.
export const benchDatabase = `bsa_bench_${process.pid}`

/** `serverUrl` (a --postgres-url) pointed at `database` instead. */
export function postgresUrl (serverUrl, database) {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/** Runs `work(client)` on one connection to `database`, closed after. */
export async function onPostgres (serverUrl, database, work) {
  const client = new pg.Client({ connectionString: postgresUrl(serverUrl, database), connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** The same on the database that --postgres-url names, where databases are created and dropped. */
const onMaintenance = (serverUrl, work) => onPostgres(serverUrl, new URL(serverUrl).pathname.slice(1) || 'postgres', work)

const alive = pid => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** A new, empty database for this run; leftovers of bench runs that no longer run are dropped first. */
export async function createBenchDatabase (serverUrl) {
  await onMaintenance(serverUrl, async client => {
    const { rows } = await client.query("SELECT datname FROM pg_database WHERE datname LIKE 'bsa\\_bench\\_%'")
    for (const { datname } of rows) {
      const pid = Number(/^bsa_bench_(\d+)$/.exec(datname)?.[1])
      if (Number.isNaN(pid)) continue
      if (pid === process.pid || !alive(pid)) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    }
    await client.query(`CREATE DATABASE ${benchDatabase}`)
  })
}

export async function dropBenchDatabase (serverUrl) {
  await onMaintenance(serverUrl, client => client.query(`DROP DATABASE IF EXISTS ${benchDatabase} WITH (FORCE)`))
}

export async function postgresVersion (serverUrl) {
  return onMaintenance(serverUrl, async client => (await client.query('SHOW server_version')).rows[0].server_version)
}
