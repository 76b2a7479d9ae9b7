// The engine floor: the best single statement for a list scenario, timed on the engine itself (no HTTP, no service) on the same data.
import Database from 'better-sqlite3'
import { progress } from './progress.mjs'

/** The record's columns, as every list page reads them. */
export const bookColumns = 'book_id, title, author, isbn, published_year, created_at, updated_at'

// Long enough for thousands of cheap statements, short beside a scenario's runs.
const seconds = 3

/** `?` placeholders as PostgreSQL numbers them. */
const numbered = sql => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

/**
 * Microseconds per statement of `scenario.floor` (a draw of { sql, params } per call, `?` placeholders,
 * SQL for `engine`), one after another on one connection: for SQLite the CPU of this process, which
 * runs it; for PostgreSQL the time per round trip on `client` (the backend's work and the driver's).
 */
export async function engineFloor (engine, scenario, { path, client }) {
  const until = performance.now() + seconds * 1000
  let count = 0
  if (engine === 'sqlite') {
    const db = new Database(path, { readonly: true })
    const statements = new Map()
    const cpu = process.cpuUsage()
    try {
      while (performance.now() < until) {
        const { sql, params } = scenario.floor(engine)
        let statement = statements.get(sql)
        if (statement === undefined) statements.set(sql, statement = db.prepare(sql))
        statement.all(...params)
        count++
      }
    } finally {
      db.close()
    }
    const used = process.cpuUsage(cpu)
    return report(scenario, (used.user + used.system) / count)
  }
  const started = performance.now()
  while (performance.now() < until) {
    const { sql, params } = scenario.floor(engine)
    await client.query({ text: numbered(sql), values: params })
    count++
  }
  return report(scenario, (performance.now() - started) * 1000 / count)
}

function report (scenario, us) {
  progress(`    engine floor: ${us.toFixed(0)} µs per statement (${scenario.name})`)
  return us
}
