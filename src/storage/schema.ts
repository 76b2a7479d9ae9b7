// The schema's one history: every engine has a migration for each version here, with the same number.
export const schemaHistory = [
  { version: 1, name: 'books, students and the cursor secret' },
  { version: 2, name: 'record revisions and idempotency keys' },
  { version: 3, name: 'API keys' },
  { version: 4, name: 'folded keys, backfilled' },
  { version: 5, name: 'list indexes and full-text search' },
  { version: 6, name: 'the change feed' },
  { version: 7, name: 'webhook endpoints and deliveries' },
  { version: 8, name: 'search indexes kept at less cost per write' },
  { version: 9, name: 'a search index per field, for relevance' },
  { version: 10, name: 'imports and their staged rows' },
  { version: 11, name: 'webhook lanes: an import\'s events queued apart from the rest' }
] as const

export type SchemaVersion = typeof schemaHistory[number]['version']

/** The version a database must be at for this code to use it. */
export const latestVersion: number = Math.max(...schemaHistory.map(m => m.version))

/** An engine's SQL for every version: a version added to the history but not here fails to compile. */
export type MigrationScripts = Record<SchemaVersion, string>

/** A database whose schema is not at the version this code expects (a readiness probe's finding). */
export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError'
  constructor (found: number) {
    super(`the database schema is at version ${found}, this service needs ${latestVersion}`)
  }
}

/** Append only: a released migration is never edited, so every database reaches the same schema. */
export function newerSchemaMessage (current: number): string {
  return `database schema version ${current} is newer than this service knows (${latestVersion}); refusing to start`
}

/** Told how a long migration step is getting on (a line for the log). */
export type MigrationProgress = (message: string) => void
/** Tables with fewer rows migrate quickly enough to say nothing. */
export const progressEvery = 10_000

/**
 * The folded keys version 4 adds, each with the column it folds: fixed as released, not read from
 * tables.ts, so that a field or key added by a later version (not yet there at version 4) leaves it as it was.
 */
export const version4Keys = [
  { table: 'books', keys: { title_key: 'title', author_key: 'author' } },
  { table: 'students', keys: { name_key: 'name' } }
] as const satisfies readonly { table: string, keys: Record<string, string> }[]
