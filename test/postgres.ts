// Test databases on PostgreSQL: each a clone of a migrated template, dropped after its test; leftovers of crashed runs removed.
import { createHash } from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'
import { postgresMigrations, migrate } from '../src/storage/postgres/migrations.js'
import { needService } from './services.js'

/** The server tests use: TEST_POSTGRES_URL, or this machine's local PostgreSQL. */
export const serverUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const prefix = 'bsa_test_'
// A new template for every change to the migrations, so a clone always has today's schema.
const template = `bsa_tmpl_${createHash('sha256').update(JSON.stringify(postgresMigrations)).digest('hex').slice(0, 12)}`
let counter = 0

export function databaseUrl (name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

// A server that is not there refuses at once; the timeout only has to outlast a loaded host (CI runs three
// test files at a time beside other suites), where 2 s once failed a reachability check mid-run.
async function admin<R> (work: (client: pg.Client) => Promise<R>): Promise<R> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM'
  }
}

let prepared: Promise<void> | null = null

/** Builds the template once per machine and drops the databases of test processes that no longer run. */
function prepare (): Promise<void> {
  prepared ??= admin(async client => {
    // One process at a time, so two test files starting together build the template once.
    await client.query("SELECT pg_advisory_lock(hashtextextended('books-students-api:test-template', 0))")
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${prefix}%`])
    for (const { datname } of rows) {
      const pid = Number(/^bsa_test_(\d+)_/.exec(datname)?.[1])
      if (!alive(pid)) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    }
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])
    if (exists.rowCount === 0) {
      const building = `${template}_build_${process.pid}`
      await client.query(`DROP DATABASE IF EXISTS ${building}`)
      await client.query(`CREATE DATABASE ${building}`)
      const target = new pg.Client({ connectionString: databaseUrl(building) })
      await target.connect()
      try {
        await migrate(target)
      } finally {
        await target.end()
      }
      // Renamed only once whole: a template that exists is always complete.
      await client.query(`ALTER DATABASE ${building} RENAME TO ${template}`)
    }
    await client.query("SELECT pg_advisory_unlock(hashtextextended('books-students-api:test-template', 0))")
  })
  return prepared
}

/**
 * Runs `tests` when PostgreSQL is reachable. Otherwise they are skipped with one line saying how to run
 * them, except in CI, where an unreachable PostgreSQL fails the run instead.
 */
export async function withPostgres (t: Test, tests: (t: Test) => Promise<void> | void): Promise<void> {
  const { skip } = await needService(t, {
    name: `PostgreSQL at ${serverUrl}`,
    check: async () => { await admin(client => client.query('SELECT 1')) },
    howToRun: 'start PostgreSQL (docs/contributing.md, "Tests") or set TEST_POSTGRES_URL'
  })
  if (skip === undefined) await tests(t)
  else t.skip(skip, () => {})
}

/**
 * A new database with nothing in it, not even the schema (for tests of the service's own migrations),
 * named like testDatabase's so that a crashed run's copy is dropped by the next; dropped when `t` ends.
 */
export async function emptyDatabase (t: Test): Promise<string> {
  await prepare()
  const name = `${prefix}${process.pid}_${++counter}`
  await admin(client => client.query(`CREATE DATABASE ${name}`))
  t.teardown(() => admin(client => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  return databaseUrl(name)
}

/** A fresh, migrated, empty database for `t`, dropped when `t` ends; returns its URL. */
export async function testDatabase (t: Test): Promise<string> {
  await prepare()
  const name = `${prefix}${process.pid}_${++counter}`
  await admin(async client => {
    // A clone fails while another session is connected to the template (another process cloning it at
    // that instant): wait and try again.
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`)
        return
      } catch (error) {
        if ((error as { code?: string }).code !== '55006' || attempt === 20) throw error
        await new Promise(resolve => setTimeout(resolve, 100 * attempt))
      }
    }
  })
  t.teardown(() => admin(client => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  return databaseUrl(name)
}
