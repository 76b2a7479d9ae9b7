// Versioned schema migrations, applied in order at start and tracked in SQLite's user_version.
import type { Database } from 'better-sqlite3'

export interface Migration {
  version: number
  name: string
  sql: string
}

// Append only: a released migration is never edited, so every database reaches the same schema.
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'books, students and the cursor secret',
    // seq is the keyset for paging in creation order; AUTOINCREMENT keeps it from ever being reused.
    sql: `
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
    `
  },
  {
    version: 2,
    name: 'record revisions and idempotency keys',
    // revision grows by one on every change, so ETags differ even for two writes in one millisecond.
    // An idempotency key is stored in the transaction that creates its record, with the response to replay.
    sql: `
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
    `
  },
  {
    version: 3,
    name: 'API keys',
    // Only the SHA-256 of a key's secret is stored; revoked keys stay listed with their revocation time.
    sql: `
      CREATE TABLE api_keys (
        key_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        secret_hash BLOB NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
    `
  }
]

/** Brings `db` up to the latest schema; refuses a database written by a newer version of the service. */
export function migrate (db: Database, all: readonly Migration[] = migrations): void {
  const current = db.pragma('user_version', { simple: true }) as number
  const latest = Math.max(0, ...all.map(m => m.version))
  if (current > latest) {
    throw new Error(`database schema version ${current} is newer than this service knows (${latest}); refusing to start`)
  }
  for (const migration of all.filter(m => m.version > current)) {
    db.transaction(() => {
      db.exec(migration.sql)
      db.pragma(`user_version = ${migration.version}`)
    }).immediate()
  }
}
