// The PostgreSQL engine: every repository over one database that any number of nodes share.
import { randomBytes, randomInt } from 'node:crypto'
import type { Book, Student } from '../../contract/api-types.js'
import { defaults } from '../../config/index.js'
import { FairGate } from '../fair-queue.js'
import { defaultListLimits, type ListLimits } from '../list-sql.js'
import { latestVersion, type MigrationProgress, SchemaVersionError } from '../schema.js'
import { bookTable, studentTable } from '../tables.js'
import type { BookValues, Repositories, StudentValues } from '../types.js'
import { NoDatabaseError } from '../sqlite/database.js'
import { PostgresApiKeys } from './api-keys.js'
import { connect, PipelinedClients, type PostgresSettings } from './connection.js'
import { PostgresEventFeed } from './events.js'
import { GroupCommit } from './group-commit.js'
import { PostgresIdempotency } from './idempotency.js'
import { migrate, schemaVersion } from './migrations.js'
import { type ColumnTypes, PostgresTable } from './table.js'
import { PostgresWebhooks } from './webhooks.js'
import { PostgresImports } from './imports.js'

export interface PostgresOptions {
  /** Whether the schema is migrated at start (the service); the CLIs never migrate and refuse an unmigrated database. */
  migrate?: boolean
  /** Milliseconds a node answers from its API-key cache. */
  apiKeyCacheTtl?: number
  /** Called with the size of every group-commit batch. */
  onBatch?: (size: number) => void
  /** How much one list request may read (tests make it small to reach every access path). */
  listLimits?: ListLimits
  /** Told how a long migration is getting on. */
  onMigrationProgress?: MigrationProgress
  /** List pages one caller may have waiting for a turn (LIST_QUEUE_PER_CALLER). */
  listQueuePerCaller?: number
}

export const bookTypes: ColumnTypes<BookValues> = {
  book_id: 'uuid', title: 'text', author: 'text', isbn: 'text', published_year: 'integer', created_at: 'timestamptz', updated_at: 'timestamptz'
}
const studentTypes: ColumnTypes<StudentValues> = {
  student_id: 'uuid', name: 'text', email: 'text', enrollment_year: 'integer', status: 'text', created_at: 'timestamptz', updated_at: 'timestamptz'
}

// Expired idempotency entries are swept this often by every node; the batches keep each sweep short.
const sweepEvery = 60_000

/** Eight random lowercase base-36 characters: the start of every position of this database's feed. */
function newFeedId (): string {
  return Array.from({ length: 8 }, () => randomInt(36).toString(36)).join('')
}

/**
 * Migrates (under an advisory lock) and returns the cursor secret and the feed id, which the first node
 * to start stores. Not in a migration: a database cloned from a migrated template gets a feed of its own.
 */
async function prepare (settings: PostgresSettings, shouldMigrate: boolean, progress?: MigrationProgress): Promise<{ secret: Buffer, feedId: string }> {
  const client = await connect(settings, false)
  try {
    if (shouldMigrate) await migrate(client, undefined, progress)
    const version = await schemaVersion(client)
    if (version === 0) throw new NoDatabaseError('the database at DATABASE_URL holds no data of this service')
    if (version !== latestVersion) throw new Error(`the database's schema is at version ${version}, this service needs ${latestVersion}; start the service to migrate it`)
    await client.query(`INSERT INTO settings (name, value) VALUES ('cursor_secret', $1), ('feed_id', $2)
      ON CONFLICT (name) DO NOTHING`, [randomBytes(32), Buffer.from(newFeedId())])
    const { rows } = await client.query<{ name: string, value: Buffer }>("SELECT name, value FROM settings WHERE name IN ('cursor_secret', 'feed_id')")
    const value = (name: string) => rows.find(row => row.name === name)!.value
    return { secret: value('cursor_secret'), feedId: value('feed_id').toString() }
  } finally {
    await client.end()
  }
}

export async function openPostgresRepositories (settings: PostgresSettings, options: PostgresOptions = {}): Promise<Repositories> {
  const { secret, feedId } = await prepare(settings, options.migrate ?? true, options.onMigrationProgress)
  const listLimits = options.listLimits ?? defaultListLimits
  const reads = new PipelinedClients(settings)
  await reads.open()
  const writes = new GroupCommit(() => connect(settings, true), options.onBatch)
  const idempotency = new PostgresIdempotency(reads)
  const apiKeys = new PostgresApiKeys(reads, settings, options.apiKeyCacheTtl ?? 0)
  await apiKeys.listen()
  const sweeper = setInterval(() => { idempotency.sweep(Date.now()).catch(() => {}) }, sweepEvery).unref()
  const events = new PostgresEventFeed(reads, writes, feedId)
  // Costly list pages take turns, fewer at once than there are pipelined connections (but at least
  // one), so that one connection is always free of them for reads by id, plain pages and API keys;
  // each waits for its turn no longer than a statement may run.
  const gate = new FairGate({ slots: Math.max(1, settings.connections - 1), perCaller: options.listQueuePerCaller ?? defaults.listQueuePerCaller, budgetMs: settings.statementTimeout })
  const lists = { limits: listLimits, budgetMs: settings.statementTimeout, connect: () => connect(settings, false, true), gate }
  return {
    engine: 'postgres',
    books: new PostgresTable<Book, BookValues>(bookTable, bookTypes, reads, writes, events, lists),
    students: new PostgresTable<Student, StudentValues>(studentTable, studentTypes, reads, writes, events, lists),
    idempotency,
    apiKeys,
    events,
    webhooks: new PostgresWebhooks(reads),
    imports: new PostgresImports(reads),
    cursorSecret: async () => secret,
    probe: async () => {
      const { rows } = await reads.query<{ version: number | null }>({ name: 'schema-version', text: 'SELECT max(version) AS version FROM schema_migrations' })
      const version = rows[0]!.version
      if (version !== latestVersion) throw new SchemaVersionError(version ?? 0)
    },
    usage: () => {
      const pipelined = reads.usage()
      // Beside the pipelined ones: group commit's connection and the one that hears revocations.
      return {
        connections: pipelined.open + Number(writes.connected) + Number(apiKeys.listening),
        maxConnections: pipelined.max + 2,
        queriesInFlight: pipelined.inFlight
      }
    },
    close: async () => {
      clearInterval(sweeper)
      await writes.close()
      await apiKeys.close()
      await reads.close()
    }
  }
}
