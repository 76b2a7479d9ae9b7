// SQLite's migrations, one per version of the schema history, tracked in SQLite's user_version.
import type { Database } from 'better-sqlite3'
import { latestVersion, type MigrationProgress, type MigrationScripts, newerSchemaMessage, progressEvery, schemaHistory, version4Keys } from '../schema.js'
import { fold } from '../../domain/search/fold.js'

// Append only: a released migration is never edited, so every database reaches the same schema.
export const sqliteMigrations: MigrationScripts = {
  // seq is the keyset for paging in creation order; AUTOINCREMENT keeps it from ever being reused.
  1: `
      CREATE TABLE books (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        book_id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        author TEXT NOT NULL,
        isbn TEXT UNIQUE,
        published_year INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE students (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        student_id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        enrollment_year INTEGER,
        status TEXT NOT NULL CHECK (status IN ('active', 'graduated', 'withdrawn')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      -- Emails are ASCII (format: email), so NOCASE makes uniqueness ignore letter case exactly.
      CREATE UNIQUE INDEX students_email_unique ON students (email COLLATE NOCASE);

      CREATE TABLE settings (
        name TEXT PRIMARY KEY,
        value BLOB NOT NULL
      ) STRICT;
      INSERT INTO settings (name, value) VALUES ('cursor_secret', randomblob(32));
    `,
  // revision grows by one on every change, so ETags differ even for two writes in one millisecond.
  // An idempotency key is stored in the transaction that creates its record, with the response to replay.
  2: `
      ALTER TABLE books ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE students ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;

      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status INTEGER NOT NULL,
        headers TEXT NOT NULL,
        body TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  // Only the SHA-256 of a key's secret is stored; revoked keys stay listed with their revocation time.
  3: `
      CREATE TABLE api_keys (
        key_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        secret_hash BLOB NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
    `,
  // Lists filter, sort and search on text folded by the service (fold() in src/domain/search/fold.ts), kept
  // in *_key columns it writes with the record; migrate() backfills them for existing rows after this
  // script. NULL years sort lowest through a generated column (an index on the bare coalesce()
  // expression is not used for row-value seeks).
  4: `
      ALTER TABLE books ADD COLUMN title_key TEXT NOT NULL DEFAULT '';
      ALTER TABLE books ADD COLUMN author_key TEXT NOT NULL DEFAULT '';
      ALTER TABLE books ADD COLUMN published_year_sort INTEGER GENERATED ALWAYS AS (coalesce(published_year, -2147483648)) VIRTUAL;
      ALTER TABLE students ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
      ALTER TABLE students ADD COLUMN enrollment_year_sort INTEGER GENERATED ALWAYS AS (coalesce(enrollment_year, -2147483648)) VIRTUAL;
    `,
  // The indexes lists seek, built once over the backfilled keys. The FTS5 tables index the keys
  // (external content: no second copy of the text), are built from them here and kept by triggers
  // in the record's own transaction. fold() has done all the Unicode work, so the ascii tokenizer
  // only splits at its spaces: no dependence on SQLite's own Unicode tables
  // (test/search-engines.test.ts holds both engines to one oracle).
  5: `
      CREATE INDEX books_title ON books (title_key, seq);
      CREATE INDEX books_author_title ON books (author_key, title_key, seq);
      CREATE INDEX books_published_year ON books (published_year_sort, seq);
      CREATE INDEX books_updated ON books (updated_at, seq);
      CREATE INDEX students_name ON students (name_key, seq);
      CREATE INDEX students_status_name ON students (status, name_key, seq);
      CREATE INDEX students_status ON students (status, seq);
      CREATE INDEX students_enrollment_year ON students (enrollment_year_sort, seq);
      CREATE INDEX students_updated ON students (updated_at, seq);

      CREATE VIRTUAL TABLE books_fts USING fts5(title_key, author_key, content='books', content_rowid='seq',
        tokenize='ascii', prefix='2 3');
      CREATE TRIGGER books_fts_insert AFTER INSERT ON books BEGIN
        INSERT INTO books_fts (rowid, title_key, author_key) VALUES (new.seq, new.title_key, new.author_key);
      END;
      CREATE TRIGGER books_fts_update AFTER UPDATE OF title_key, author_key ON books
      WHEN old.title_key IS NOT new.title_key OR old.author_key IS NOT new.author_key BEGIN
        INSERT INTO books_fts (books_fts, rowid, title_key, author_key) VALUES ('delete', old.seq, old.title_key, old.author_key);
        INSERT INTO books_fts (rowid, title_key, author_key) VALUES (new.seq, new.title_key, new.author_key);
      END;
      CREATE TRIGGER books_fts_delete AFTER DELETE ON books BEGIN
        INSERT INTO books_fts (books_fts, rowid, title_key, author_key) VALUES ('delete', old.seq, old.title_key, old.author_key);
      END;

      CREATE VIRTUAL TABLE students_fts USING fts5(name_key, content='students', content_rowid='seq',
        tokenize='ascii', prefix='2 3');
      CREATE TRIGGER students_fts_insert AFTER INSERT ON students BEGIN
        INSERT INTO students_fts (rowid, name_key) VALUES (new.seq, new.name_key);
      END;
      CREATE TRIGGER students_fts_update AFTER UPDATE OF name_key ON students WHEN old.name_key IS NOT new.name_key BEGIN
        INSERT INTO students_fts (students_fts, rowid, name_key) VALUES ('delete', old.seq, old.name_key);
        INSERT INTO students_fts (rowid, name_key) VALUES (new.seq, new.name_key);
      END;
      INSERT INTO books_fts (books_fts) VALUES ('rebuild');
      INSERT INTO students_fts (students_fts) VALUES ('rebuild');
    `,
  // The outbox: each change's event, written in the change's transaction. AUTOINCREMENT: a pruned
  // position is never issued again. The feed's id tells its positions from another database's; the
  // pruning mark tells a position whose following events were pruned.
  6: `
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        envelope TEXT NOT NULL,
        time TEXT NOT NULL
      ) STRICT;
      CREATE TABLE feed (
        only INTEGER PRIMARY KEY CHECK (only = 1),
        feed_id TEXT NOT NULL,
        pruned_to INTEGER NOT NULL
      ) STRICT;
      INSERT INTO feed (only, feed_id, pruned_to) VALUES (1, lower(hex(randomblob(5))), 0);
  `,
  // Endpoints keep their secrets as given: signing needs them, so unlike API keys they cannot be hashed.
  // Times the worker compares (attempts, leases, failures) are milliseconds since the epoch.
  7: `
      CREATE TABLE webhook_endpoints (
        endpoint_id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        types TEXT NOT NULL,
        description TEXT,
        key_id TEXT NOT NULL,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at INTEGER,
        status TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
        disabled_reason TEXT CHECK (disabled_reason IN ('gone', 'failing', 'key_revoked')),
        failing_since INTEGER,
        created_at TEXT NOT NULL,
        position TEXT NOT NULL
      ) STRICT;

      -- One row per event still to deliver to an endpoint; it goes once delivered, or with its endpoint.
      CREATE TABLE webhook_deliveries (
        delivery_id INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
        position TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        lease_until INTEGER,
        last_status INTEGER,
        last_error TEXT,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending')),
        UNIQUE (endpoint_id, position)
      ) STRICT;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
    `,
  // The service writes the FTS5 indexes itself, once per batch (search-index.ts): a trigger ran inside
  // each write's statement, where FTS5 wrote a segment per write. The indexes' contents do not change.
  8: `
      DROP TRIGGER books_fts_insert;
      DROP TRIGGER books_fts_update;
      DROP TRIGGER books_fts_delete;
      DROP TRIGGER students_fts_insert;
      DROP TRIGGER students_fts_update;
    `,
  // FTS5 column filters already find a title's words apart from an author's: nothing to add here.
  9: '',
  // An import is a job: its state and report here, its checked rows staged in import_rows until
  // written. A row's unique value and id are unique within its import (a repeat in the file is refused).
  10: `
    CREATE TABLE imports (
      import_id TEXT PRIMARY KEY,
      key_id TEXT NOT NULL,
      collection TEXT NOT NULL CHECK (collection IN ('books', 'students')),
      mode TEXT NOT NULL CHECK (mode IN ('all', 'valid')),
      format TEXT NOT NULL CHECK (format IN ('csv', 'ndjson')),
      state TEXT NOT NULL CHECK (state IN ('receiving', 'running', 'succeeded', 'failed', 'cancelled')),
      cancel_requested INTEGER NOT NULL DEFAULT 0,
      rows_read INTEGER NOT NULL DEFAULT 0,
      rows_written INTEGER NOT NULL DEFAULT 0,
      rows_refused INTEGER NOT NULL DEFAULT 0,
      bytes INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT,
      detail TEXT,
      problems TEXT NOT NULL DEFAULT '[]',
      problems_omitted INTEGER NOT NULL DEFAULT 0,
      written_to INTEGER NOT NULL DEFAULT 0,
      idempotency_key TEXT,
      fingerprint TEXT,
      runner TEXT,
      lease_until INTEGER,
      UNIQUE (key_id, idempotency_key)
    ) STRICT;
    CREATE INDEX imports_by_key ON imports (key_id, created_at);
    CREATE INDEX imports_running ON imports (state, lease_until);
    CREATE TABLE import_rows (
      import_id TEXT NOT NULL,
      line INTEGER NOT NULL,
      record_id TEXT NOT NULL,
      unique_value TEXT,
      record TEXT NOT NULL,
      PRIMARY KEY (import_id, line)
    ) STRICT, WITHOUT ROWID;
    CREATE UNIQUE INDEX import_rows_ids ON import_rows (import_id, record_id);
    CREATE UNIQUE INDEX import_rows_unique ON import_rows (import_id, unique_value) WHERE unique_value IS NOT NULL;
  `,
  // An import's events are marked, and each webhook endpoint has a cursor per lane (live, imported):
  // a million imported events queue apart from the rest instead of ahead of them.
  11: `
    ALTER TABLE events ADD COLUMN imported INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1));
    ALTER TABLE webhook_endpoints ADD COLUMN imported_position TEXT NOT NULL DEFAULT '';
    UPDATE webhook_endpoints SET imported_position = position;
    ALTER TABLE webhook_deliveries ADD COLUMN imported INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1));
    CREATE INDEX webhook_deliveries_lane ON webhook_deliveries (endpoint_id, imported, next_attempt_at);
  `
}

/** Brings `db` up to the latest schema; refuses a database written by a newer version of the service. */
export function migrate (db: Database, scripts: MigrationScripts = sqliteMigrations, progress?: MigrationProgress): void {
  // The version is read under the write lock: a node starting at the same moment waits for this one's
  // migrations, then finds nothing left to do (read before the lock, both ran the first script).
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number
    if (current > latestVersion) throw new Error(newerSchemaMessage(current))
    for (const { version } of schemaHistory.filter(m => m.version > current)) {
      db.exec(scripts[version])
      if (version === 4) backfillKeys(db, progress)
      db.pragma(`user_version = ${version}`)
    }
  }).immediate()
}

/**
 * Fills the folded keys of rows written before version 4, in the migration's transaction. Reports
 * progress for tables large enough to take a while.
 */
function backfillKeys (db: Database, progress: MigrationProgress | undefined): void {
  for (const spec of version4Keys) {
    const keys = Object.keys(spec.keys)
    const folded = spec.keys as Record<string, string>
    const total = db.prepare(`SELECT count(*) FROM ${spec.table}`).pluck().get() as number
    const rows = db.prepare(`SELECT seq, ${Object.values(spec.keys).join(', ')} FROM ${spec.table} WHERE seq > ? ORDER BY seq LIMIT 1000`)
    const update = db.prepare(`UPDATE ${spec.table} SET ${keys.map(k => `${k} = @${k}`).join(', ')} WHERE seq = @seq`)
    let done = 0
    for (let last = 0; ;) {
      const batch = rows.all(last) as ({ seq: number } & Record<string, unknown>)[]
      if (batch.length === 0) break
      for (const row of batch) update.run({ seq: row.seq, ...Object.fromEntries(keys.map(k => [k, fold(row[folded[k]!] as string)])) })
      last = batch.at(-1)!.seq
      done += batch.length
      if (total >= progressEvery && (done === total || done % (progressEvery * 10) === 0)) progress?.(`${spec.table}: folded keys for ${done} of ${total} rows`)
    }
  }
}
