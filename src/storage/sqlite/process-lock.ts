// One service process per SQLite file: a lock that the operating system holds for the process and drops when it ends, however it ends (kill -9 included).
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'

/** Another process already serves the database. */
export class DatabaseServedError extends Error {
  override name = 'DatabaseServedError'
}

/**
 * Takes the lock of the database at `path`, a file beside it (`<path>.lock`, a database of its own,
 * so that the data's readers and writers never wait on it); throws DatabaseServedError when another
 * process (or another connection of this one) holds it. The keys and backup commands do not take it:
 * they are meant to run beside the service.
 */
export function lockForOneProcess (path: string): { release (): void } {
  // The database's folder is made here, as openDatabase would make it.
  mkdirSync(dirname(path), { recursive: true })
  const lock = new Database(`${path}.lock`, { timeout: 0 })
  try {
    // In exclusive locking mode a connection keeps the lock of its first transaction until it closes; another's is refused at once.
    lock.pragma('locking_mode = EXCLUSIVE')
    lock.exec('BEGIN EXCLUSIVE; COMMIT')
  } catch (error) {
    lock.close()
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error
    throw new DatabaseServedError(`another process serves ${resolve(path)}: SQLite is served by one process at a time, which runs its webhooks, imports and rate limits. Stop the other first, give this one another DATABASE_PATH, or run several nodes on PostgreSQL (docs/postgresql.md)`)
  }
  return { release: () => lock.close() }
}
