// The SQLite engine: every repository over one database file.
import type { Book, Student } from '../../contract/api-types.js'
import { defaults } from '../../config/index.js'
import { defaultListLimits, type ListLimits } from '../list-sql.js'
import type { BookValues, Repositories, StudentValues } from '../types.js'
import { bookTable, studentTable } from '../tables.js'
import { sqliteApiKeys } from './api-keys.js'
import { type DatabaseOptions, openDatabase, walSizeLimit } from './database.js'
import { latestVersion, SchemaVersionError } from '../schema.js'
import { SqliteEventFeed } from './events.js'
import { ExternalWrites } from './external-writes.js'
import { GroupCommit } from './group-commit.js'
import { SqliteIdempotency } from './idempotency.js'
import { ReadPool, type StartReader } from './read-pool.js'
import { ExportThreads, type StartExportThread } from './export.js'
import { lockForOneProcess } from './process-lock.js'
import { SqliteTable } from './table.js'
import { sqliteWebhooks } from './webhooks.js'
import { sqliteImports } from './imports.js'

export interface RepositoryOptions extends DatabaseOptions {
  /** Records of each table kept in memory (RECORD_CACHE_SIZE's default unless given); 0 turns the cache off. */
  cacheSize?: number
  /** Called with the size of every group-commit batch. */
  onBatch?: (size: number) => void
  /** How much one list request may read (tests make it small to reach every access path). */
  listLimits?: ListLimits
  /** Reader threads for list pages that are more than a seek (LIST_READERS); 0, or a database in memory, reads them all on the event loop. */
  readers?: number
  /** Most milliseconds a list page read on a reader thread may take, waiting included (LIST_TIME_BUDGET_MS). */
  listBudgetMs?: number
  /** List pages one caller may have waiting for a reader thread (LIST_QUEUE_PER_CALLER). */
  listQueuePerCaller?: number
  /** How a reader thread starts (tests start ones that fail). */
  startReader?: StartReader
  /** How an export thread starts (tests start ones that never answer). */
  startExportThread?: StartExportThread
  /** The service's process: the only one that may serve the file (lockForOneProcess), until it closes. */
  serving?: boolean
}

export function openSqliteRepositories (path: string, {
  cacheSize = defaults.recordCacheSize, onBatch, listLimits = defaultListLimits, readers: threads = defaults.listReaders, listBudgetMs = defaults.listTimeBudgetMs,
  listQueuePerCaller = defaults.listQueuePerCaller, startReader, startExportThread, serving = false, ...options
}: RepositoryOptions = {}): Repositories {
  // Before the database is opened (or migrated): a second service never touches it.
  const lock = serving && path !== ':memory:' ? lockForOneProcess(path) : null
  let db
  try {
    db = openDatabase(path, options)
  } catch (error) {
    lock?.release()
    throw error
  }
  const idempotency = new SqliteIdempotency(db)
  idempotency.sweep(Date.now())
  const events = new SqliteEventFeed(db)
  const writes = new GroupCommit(db, () => events.committed(), onBatch)
  const external = new ExternalWrites(db)
  // A database in memory is this connection's alone: no other thread could read it.
  const readers = threads === 0 || path === ':memory:' ? null : new ReadPool({ path, limits: listLimits }, { threads, budgetMs: listBudgetMs, perCaller: listQueuePerCaller, ...(startReader !== undefined && { start: startReader }) })
  // Exports of a file are read on threads of their own, within the lists' budget.
  const exports = path === ':memory:' ? null : new ExportThreads(path, { budgetMs: listBudgetMs, walLimit: options.walLimit ?? walSizeLimit, ...(startExportThread !== undefined && { start: startExportThread }) })
  const dependencies = { idempotency, writes, external, cacheSize, listLimits, events, readers, exports }
  const books = new SqliteTable<Book, BookValues>(db, bookTable, dependencies)
  const students = new SqliteTable<Student, StudentValues>(db, studentTable, dependencies)
  // Migration 1 inserts the secret, so the row always exists.
  const secret = db.prepare<[], Buffer>("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck()
  const schemaVersion = db.prepare<[], number>('PRAGMA user_version').pluck()
  const apiKeys = sqliteApiKeys(db, external)
  return {
    engine: 'sqlite',
    books,
    students,
    idempotency,
    apiKeys,
    events,
    webhooks: sqliteWebhooks(db),
    imports: sqliteImports(db),
    cursorSecret: async () => secret.get() as Buffer,
    probe: async () => {
      // The schema check is in a read the database must answer, so a locked or vanished file fails it too.
      const version = schemaVersion.get()
      if (version !== latestVersion) throw new SchemaVersionError(Number(version))
    },
    // One connection, used synchronously: nothing is ever waiting on it when metrics are read.
    usage: () => ({ connections: Number(db.open), maxConnections: 1, queriesInFlight: 0 }),
    close: async () => {
      await readers?.close()
      await exports?.close()
      apiKeys.close()
      writes.flush()
      db.close()
      lock?.release()
    }
  }
}
