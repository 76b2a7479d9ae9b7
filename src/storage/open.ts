// Opens the configured storage engine; the one place that knows which engines exist.
import type { Config } from '../config/index.js'
import { openPostgresRepositories } from './postgres/index.js'
import type { DatabaseOptions } from './sqlite/database.js'
import { openSqliteRepositories } from './sqlite/index.js'
import type { Repositories } from './types.js'

export type StorageConfig = Pick<Config, 'databasePath' | 'databaseSynchronous' | 'recordCacheSize' | 'listReaders' | 'listTimeBudgetMs' | 'listQueuePerCaller' | 'postgresUrl' | 'pgPoolMax' |
  'pgConnectTimeout' | 'pgStatementTimeout' | 'apiKeyCacheTtl'>

/**
 * The repositories at the configured database, for every process that opens it. `create: false` (the
 * CLIs) refuses a database the service never set up, rather than creating or migrating it.
 */
export interface OpenOptions extends Pick<DatabaseOptions, 'create' | 'onMigrationProgress'> {
  /** Told the size of every group-commit batch (for metrics). */
  onBatch?: (size: number) => void
  /** The service's process, which on SQLite must be the only one serving the file; the CLIs, which run beside it, do not say so. */
  serving?: boolean
}

export async function openConfiguredRepositories (config: StorageConfig, { create = true, onBatch, onMigrationProgress, serving = false }: OpenOptions = {}): Promise<Repositories> {
  if (config.postgresUrl !== null) {
    return openPostgresRepositories({
      url: config.postgresUrl,
      connections: config.pgPoolMax,
      connectTimeout: config.pgConnectTimeout,
      statementTimeout: config.pgStatementTimeout
    }, { migrate: create, apiKeyCacheTtl: config.apiKeyCacheTtl, listQueuePerCaller: config.listQueuePerCaller, ...(onBatch !== undefined && { onBatch }), ...(onMigrationProgress !== undefined && { onMigrationProgress }) })
  }
  return openSqliteRepositories(config.databasePath, {
    synchronous: config.databaseSynchronous,
    cacheSize: config.recordCacheSize,
    readers: config.listReaders,
    listBudgetMs: config.listTimeBudgetMs,
    listQueuePerCaller: config.listQueuePerCaller,
    create,
    serving,
    ...(onBatch !== undefined && { onBatch }),
    ...(onMigrationProgress !== undefined && { onMigrationProgress })
  })
}
