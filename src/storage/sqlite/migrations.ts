// SQLite's migrations, one per version of the schema history, tracked in SQLite's user_version.
import type { Database } from 'better-sqlite3'
import { latestVersion, type MigrationScripts, newerSchemaMessage, schemaHistory } from '../schema.js'

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
    `
}

/** Brings `db` up to the latest schema; refuses a database written by a newer version of the service. */
export function migrate (db: Database, scripts: MigrationScripts = sqliteMigrations): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > latestVersion) throw new Error(newerSchemaMessage(current))
  for (const { version } of schemaHistory.filter(m => m.version > current)) {
    db.transaction(() => {
      db.exec(scripts[version])
      db.pragma(`user_version = ${version}`)
    }).immediate()
  }
}
