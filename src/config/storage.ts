// Where the data lives: SQLite or PostgreSQL, how durably it is written, and what is kept in memory.
import { availableParallelism } from 'node:os'
import { concern } from './concern.js'
import { ConfigError, integer, maskPassword, oneOf, optional, text, trimmed, type Reader } from './parse.js'

/** How SQLite waits for the disk at each commit (DATABASE_SYNCHRONOUS): see docs/safe-writes.md. */
export type Synchronous = 'normal' | 'full'

type Database = { engine: 'postgres', url: string } | { engine: 'sqlite', path: string }

/** `DATABASE_URL`: a postgres:// URL, or a SQLite file path (or `file:path`). */
const databaseUrl: Reader<Database> = {
  accepts: '`postgres://user:password@host:5432/db`, or a file path (or `file:path`)',
  read (raw, name) {
    const got = `got ${JSON.stringify(maskPassword(raw))}`
    if (/^postgres(ql)?:\/\//.test(trimmed(raw, name, got))) {
      // pg parses the URL itself; this only refuses one it would misread, naming the variable.
      if (!URL.canParse(raw)) throw new ConfigError(`${name} is not a valid URL (${got})`)
      return { engine: 'postgres', url: raw }
    }
    if (/^[a-z][\w+.-]*:\/\//i.test(raw)) {
      throw new ConfigError(`${name} must be a postgres:// URL or a SQLite file path (${got})`)
    }
    return { engine: 'sqlite', path: raw.replace(/^file:/, '') }
  }
}

// About 10 MB per table: the hot part of a large collection, all of a small one.
const recordCacheSize = 10_000

export const storage = concern({
  title: 'Storage',
  about: 'Where the data lives (SQLite by default, PostgreSQL optionally; see [Running on PostgreSQL](postgresql.md)), how durably it is written, and what is kept in memory.',
  variables: {
    databasePath: { name: 'DATABASE_PATH', default: './data/books-students.sqlite', reader: text('a file path, or `:memory:`'), meaning: 'SQLite file (folder created if missing); `:memory:` for a throw-away database' },
    // DATABASE_URL, the name most platforms set, wins over DATABASE_PATH.
    databaseUrl: { name: 'DATABASE_URL', default: '', reader: optional(databaseUrl), meaning: 'a `postgres://` (or `postgresql://`) URL runs on PostgreSQL; a file path is the same as `DATABASE_PATH`, and wins over it' },
    databaseSynchronous: { name: 'DATABASE_SYNCHRONOUS', default: 'normal', reader: oneOf<Synchronous>(['normal', 'full'], 'normal or full'), meaning: '`normal`: a write survives a crash or `kill -9` of the service; `full`: it also survives a power cut or OS crash, at the cost of one disk flush per write (see [Safe writes](safe-writes.md))' },
    recordCacheSize: { name: 'RECORD_CACHE_SIZE', default: '', shown: `\`${recordCacheSize}\` (\`0\` on PostgreSQL)`, reader: optional(integer(0, 1_000_000)), meaning: 'books and students (each) kept in memory for reads, with recent list pages; `0` reads everything from the database. Writes by this service update it at once, and a commit by any other process (the keys CLI, `sqlite3`) empties it before the next request is answered. Off by default on PostgreSQL, where another node may have written since' },
    listReaders: { name: 'LIST_READERS', default: '', shown: 'the cores less one (at least 1)', reader: optional(integer(0, 64)), meaning: 'SQLite: threads that read list pages other than a plain seek (filters, searches), each with its own read-only connection, so that the event loop never waits on them; `0` reads them on the event loop. One core is left to the event loop' },
    listTimeBudgetMs: { name: 'LIST_TIME_BUDGET_MS', default: '1000', reader: integer(10, 600_000), meaning: 'SQLite: most ms a list page read on a reader thread may take, waiting for a free thread included; beyond it the request answers 503 `/problems/list-busy` with `Retry-After` rather than queue. Each read of an export (its first rows, then each chunk) has the same budget: its first beyond it is that 503, a later one cuts the export off' },
    listQueuePerCaller: { name: 'LIST_QUEUE_PER_CALLER', default: '16', reader: integer(1, 10_000), meaning: 'list pages other than a plain seek (searches, filters) that one caller (an API key, or the address of a client without one) may have waiting for a reader (on PostgreSQL, for a turn: such pages run on at most `PG_POOL_MAX` less one connections at once) on a node; beyond, its next one is answered at once with a 503 `/problems/list-busy` and `Retry-After`. Waiting pages are read a caller at a time in turn, callers without a key together at most one turn in four while a keyed caller waits, never more than a quarter of the readers (at least one), and a quarter of their time' },
    exportsMax: { name: 'EXPORTS_MAX', default: '4', reader: integer(1, 1000), meaning: 'exports (`GET /books/export.csv` and the other export operations) that may run at once on a node, whoever runs them; each holds a snapshot of the data (on SQLite a thread, on PostgreSQL a connection of its own) until its client has read it all. Beyond, a 503 `/problems/list-busy` with `Retry-After`' },
    exportsPerKey: { name: 'EXPORTS_PER_KEY', default: '2', reader: integer(1, 1000), meaning: 'exports one API key may run at once on a node; beyond, a 429 `/problems/too-many-exports` with `Retry-After`' },
    exportsAnonymous: { name: 'EXPORTS_ANONYMOUS', default: '2', reader: integer(1, 1000), meaning: 'exports callers without a key may run at once on a node, within `EXPORTS_MAX`, and one per client address: a second from the same address is a 429 `/problems/too-many-exports`, one beyond the pool a 503 `/problems/list-busy`, both with `Retry-After`. Below `EXPORTS_MAX`, callers with a key always find room that anonymous ones cannot take' },
    exportStallMs: { name: 'EXPORT_STALL_MS', default: '30000', reader: integer(100, 3_600_000), meaning: 'ms an export\'s client may leave what was sent unread before the export is cut off (its body ends without its last chunk, which clients report as an error) and its snapshot released' },
    exportMaxDurationMs: { name: 'EXPORT_MAX_DURATION_MS', default: String(10 * 60 * 1000), reader: integer(100, 86_400_000), meaning: 'ms an export runs at most; then it is cut off as for `EXPORT_STALL_MS`. A snapshot held this long keeps the SQLite WAL from being checkpointed: it grows with every write meanwhile' },
    importMaxBytes: { name: 'IMPORT_MAX_BYTES', default: String(1024 ** 3), reader: integer(1, 2 ** 45), meaning: 'bytes of one import\'s file; beyond, the upload is refused with a 413 `/problems/import-too-large` and nothing is written' },
    importMaxRows: { name: 'IMPORT_MAX_ROWS', default: '2000000', reader: integer(1, 1_000_000_000), meaning: 'rows of one import\'s file; beyond, as for `IMPORT_MAX_BYTES`' },
    importLeaseMs: { name: 'IMPORT_LEASE_MS', default: '30000', reader: integer(1000, 3_600_000), meaning: 'how long a node holds an import it is writing without renewing its lease (it renews at every batch); a node that stopped without handing its imports over (a crash, `kill -9`) leaves them to the next node, or its own restart, once this has passed' },
    idempotencyTtlSeconds: { name: 'IDEMPOTENCY_TTL_SECONDS', default: String(24 * 60 * 60), reader: integer(60, 30 * 24 * 60 * 60), meaning: 'how long an `Idempotency-Key` and its response are kept' },
    pgPoolMax: { name: 'PG_POOL_MAX', default: '4', reader: integer(1, 1000), meaning: 'PostgreSQL connections per node for reads and single-statement writes, pipelined (plus one for group commit and one for notifications); list pages other than a plain seek run on all but one of them at most, so that reads by id never wait behind one' },
    pgConnectTimeout: { name: 'PG_CONNECT_TIMEOUT_MS', default: '2000', reader: integer(100, 600_000), meaning: 'ms to wait for a PostgreSQL connection, at start and after one broke' },
    pgStatementTimeout: { name: 'PG_STATEMENT_TIMEOUT_MS', default: '5000', reader: integer(100, 3_600_000), meaning: 'ms a PostgreSQL statement may run before it is cancelled; lock waits give up at half of it' }
  },
  settle ({ databasePath, databaseUrl, recordCacheSize: cacheSize, listReaders, ...rest }) {
    const postgresUrl = databaseUrl?.engine === 'postgres' ? databaseUrl.url : null
    return {
      databasePath: databaseUrl?.engine === 'sqlite' ? databaseUrl.path : databasePath,
      postgresUrl,
      ...rest,
      recordCacheSize: cacheSize ?? (postgresUrl === null ? recordCacheSize : 0),
      listReaders: listReaders ?? Math.max(1, availableParallelism() - 1)
    }
  }
})
