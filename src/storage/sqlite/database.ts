// Opens the SQLite database with the service's pragmas and brings its schema up to date.
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import type { Synchronous } from '../../config/storage.js'
import type { MigrationProgress } from '../schema.js'
import { migrate } from './migrations.js'

export interface DatabaseOptions {
  /** How hard a commit waits for the disk; see docs/safe-writes.md. */
  synchronous?: Synchronous
  /**
   * Whether a missing database is created (the service's first start). The CLIs pass false: a
   * mistyped path would otherwise get a new, empty database that the service never reads.
   */
  create?: boolean
  /** Told how a long migration is getting on. */
  onMigrationProgress?: MigrationProgress
  /** Bytes of WAL kept once it starts over (walSizeLimit unless given; tests make it small). */
  walLimit?: number
}

/**
 * Bytes of WAL kept once it starts over (journal_size_limit): a WAL that grew while a snapshot was held
 * (an export's) is cut back to this at the first write after a checkpoint has copied it all, rather than
 * keep its largest size for ever. Far above what the WAL takes between two automatic checkpoints
 * (1,000 pages, 4 MiB, and a commit), so that it is not grown again at every turn.
 */
export const walSizeLimit = 64 * 1024 * 1024

/** The size of the database's WAL file, 0 when there is none. */
export const walSize = (path: string): number => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0

/** The path holds no database of this service. */
export class NoDatabaseError extends Error {
  override name = 'NoDatabaseError'
}

/** Opens a database this service has created before; never creates a file. */
export function openExistingDatabase (path: string): Database.Database {
  if (!existsSync(path)) throw new NoDatabaseError(`no database at ${path}`)
  const db = new Database(path, { fileMustExist: true })
  // Migration 1 raised it: 0 is an empty file or another program's database, not to be migrated into ours.
  if (db.pragma('user_version', { simple: true }) === 0) {
    db.close()
    throw new NoDatabaseError(`${path} is not a database of this service`)
  }
  return db
}

export function openDatabase (path: string, { synchronous = 'normal', create = true, onMigrationProgress, walLimit = walSizeLimit }: DatabaseOptions = {}): Database.Database {
  if (create && path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = create ? new Database(path) : openExistingDatabase(path)
  // WAL lets readers (and `npm run backup`) run beside the writer. A commit is in the WAL file before
  // the call returns, so with synchronous=NORMAL it survives a crash or kill -9 of this process (the OS
  // holds the pages), though not a power cut; FULL fsyncs the WAL on every commit and survives that too.
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  db.pragma(`journal_size_limit = ${walLimit}`)
  // A WAL left beyond the limit (the service stopped while a snapshot held it) is copied into the
  // database and emptied now, before any request, rather than by the first write's checkpoint on the
  // event loop. Only by the service: a CLI run beside it would wait on its readers.
  if (create && walSize(path) > walLimit) db.pragma('wal_checkpoint(TRUNCATE)')
  migrate(db, undefined, onMigrationProgress)
  return db
}

/**
 * Copies the database at `source` (which must exist) to a new file `target` with SQLite's online
 * backup: a connection of its own, so with WAL the service keeps reading and writing meanwhile.
 * Returns the number of pages copied.
 */
export async function backupDatabase (source: string, target: string, progress: (done: number, total: number) => void): Promise<number> {
  const db = openExistingDatabase(source)
  try {
    db.pragma('busy_timeout = 5000')
    const { totalPages } = await db.backup(target, {
      progress ({ totalPages, remainingPages }) {
        progress(totalPages - remainingPages, totalPages)
        // Large steps: SQLite restarts a backup whose source changed between steps, so few steps finish under load.
        return 1000
      }
    })
    return totalPages
  } finally {
    db.close()
  }
}
