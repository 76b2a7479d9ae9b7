// PostgreSQL's migrations, one per version of the schema history, applied at start under an advisory lock.
import type { ClientBase } from 'pg'
import { latestVersion, type MigrationScripts, newerSchemaMessage, schemaHistory } from '../schema.js'

// Append only: a released migration is never edited, so every database reaches the same schema.
export const postgresMigrations: MigrationScripts = {
  // seq is the keyset for paging in creation order, from one sequence every node draws on. Ids are
  // UUIDv7 made by the service; timestamps are stored as timestamptz and read back in the ISO form
  // the service wrote, so both engines answer byte for byte the same.
  1: `
    CREATE TABLE books (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      book_id uuid NOT NULL UNIQUE,
      title text NOT NULL,
      author text NOT NULL,
      isbn text UNIQUE,
      published_year integer,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );

    CREATE TABLE students (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      student_id uuid NOT NULL UNIQUE,
      name text NOT NULL,
      email text NOT NULL,
      enrollment_year integer,
      status text NOT NULL CHECK (status IN ('active', 'graduated', 'withdrawn')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    -- Emails are ASCII (format: email), so lower() makes uniqueness ignore letter case exactly as SQLite's NOCASE.
    CREATE UNIQUE INDEX students_email_unique ON students (lower(email));

    -- The cursor secret is inserted by the first node to start (random bytes from the service, not pgcrypto).
    CREATE TABLE settings (
      name text PRIMARY KEY,
      value bytea NOT NULL
    );
  `,
  2: `
    ALTER TABLE books ADD COLUMN revision integer NOT NULL DEFAULT 1;
    ALTER TABLE students ADD COLUMN revision integer NOT NULL DEFAULT 1;

    CREATE TABLE idempotency_keys (
      scope text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      status integer NOT NULL,
      headers text NOT NULL,
      body text NOT NULL,
      expires_at bigint NOT NULL,
      PRIMARY KEY (scope, key)
    );
    CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  `,
  3: `
    CREATE TABLE api_keys (
      key_id text PRIMARY KEY,
      name text NOT NULL,
      scopes text NOT NULL,
      secret_hash bytea NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
  `
}

// Any constant works, as long as every node and release uses the same one.
const migrationLock = "hashtextextended('books-students-api:migrate', 0)"

/** The schema version the database is at: 0 when this service never migrated it. */
export async function schemaVersion (client: ClientBase): Promise<number> {
  // Two statements: PostgreSQL resolves every table a statement names before running it, so one
  // statement that reads schema_migrations fails on a database without it, whatever its CASE says.
  const { rows: [table] } = await client.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists")
  if (!table!.exists) return 0
  const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')
  return rows[0]!.version ?? 0
}

/**
 * Brings the database up to the latest schema in one transaction. The advisory lock makes nodes that
 * start together on an empty database take turns: the first migrates, the others then find nothing
 * to do. PostgreSQL's DDL is transactional, so a failed migration leaves the database as it was.
 */
export async function migrate (client: ClientBase, scripts: MigrationScripts = postgresMigrations): Promise<void> {
  await client.query('BEGIN')
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${migrationLock})`)
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    const current = await schemaVersion(client)
    if (current > latestVersion) throw new Error(newerSchemaMessage(current))
    for (const { version, name } of schemaHistory.filter(m => m.version > current)) {
      await client.query(scripts[version])
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, name])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}
