// Opens the configured storage engine; the one place that knows which engines exist.
import type { Config } from '../config.js'
import type { DatabaseOptions } from './sqlite/database.js'
import { openSqliteRepositories } from './sqlite/index.js'
import type { Repositories } from './types.js'

/** The repositories at the configured database with the configured durability, for every process that opens it. */
export async function openConfiguredRepositories (
  config: Pick<Config, 'databasePath' | 'databaseSynchronous' | 'recordCacheSize'>,
  { create }: Pick<DatabaseOptions, 'create'> = {}
): Promise<Repositories> {
  return openSqliteRepositories(config.databasePath, { synchronous: config.databaseSynchronous, cacheSize: config.recordCacheSize, create })
}
