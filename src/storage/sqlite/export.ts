// SQLite exports: a list query's statements read in one read transaction, on a connection of the export's own.
import Database from 'better-sqlite3'
import { exportBatch, exportBatches } from '../export.js'
import type { SqlValue } from '../list-sql.js'
import type { RecordExport } from '../types.js'

type Statements = { sql: string, params: SqlValue[] }[]

const named = (params: SqlValue[]) => Object.fromEntries(params.map((value, i) => [i + 1, value]))

/**
 * Every row of `statements`, in turn. A file's rows come from a read-only connection opened for the
 * export: in WAL mode its transaction keeps one snapshot however long the client takes, while the
 * service goes on writing. `headIn` reads the feed's head in that snapshot.
 */
export function sqliteExport (db: Database.Database, statements: Statements, fields: readonly string[], headIn: ((connection: Database.Database) => string) | null): RecordExport {
  if (db.memory) {
    // A database in memory is this connection's alone, and could change between batches: it is read
    // whole at once (it is in memory already; such databases are for tests and trials).
    const position = headIn?.(db) ?? null
    const rows = statements.flatMap(({ sql, params }) => db.prepare(sql).raw().all(named(params)) as unknown[][])
    let at = 0
    return {
      position,
      fields,
      batches: exportBatches(async () => {
        if (at >= rows.length) return null
        at += exportBatch
        return rows.slice(at - exportBatch, at)
      }, () => {})
    }
  }
  const reader = new Database(db.name, { readonly: true, fileMustExist: true })
  let position: string | null
  try {
    reader.pragma('busy_timeout = 5000')
    // Held until the export ends: the head and every statement's rows are read in one snapshot.
    reader.exec('BEGIN')
    position = headIn?.(reader) ?? null
  } catch (error) {
    reader.close()
    throw error
  }
  const left = [...statements]
  let rows: IterableIterator<unknown[]> | null = null
  // Every statement's rows, so that leaving the export early resets whichever is open (an ended one ignores it).
  const opened: IterableIterator<unknown[]>[] = []
  return {
    position,
    fields,
    batches: exportBatches(async () => {
      const batch: unknown[][] = []
      while (batch.length < exportBatch) {
        if (rows === null) {
          const next = left.shift()
          if (next === undefined) break
          rows = reader.prepare(next.sql).raw().iterate(named(next.params)) as IterableIterator<unknown[]>
          opened.push(rows)
        }
        const step = rows.next()
        if (step.done === true) rows = null
        else batch.push(step.value)
      }
      return batch.length === 0 ? null : batch
    }, () => {
      for (const iterator of opened) iterator.return!()
      reader.close()
    })
  }
}
