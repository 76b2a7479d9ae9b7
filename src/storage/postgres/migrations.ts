// PostgreSQL's migrations, one per version of the schema history, applied at start under an advisory lock.
import type { ClientBase } from 'pg'
import { latestVersion, type MigrationProgress, type MigrationScripts, newerSchemaMessage, progressEvery, schemaHistory, version4Keys } from '../schema.js'
import { fold } from '../../domain/search/fold.js'

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
  `,
  // Lists filter, sort and search on text folded by the service (fold() in src/domain/search/fold.ts), kept
  // in *_key columns it writes with the record; migrate() backfills them for existing rows after this
  // script. COLLATE "C" orders them byte for byte as SQLite does, whatever the database's collation.
  4: `
    ALTER TABLE books ADD COLUMN title_key text COLLATE "C" NOT NULL DEFAULT '',
      ADD COLUMN author_key text COLLATE "C" NOT NULL DEFAULT '';
    ALTER TABLE students ADD COLUMN name_key text COLLATE "C" NOT NULL DEFAULT '';
  `,
  // Built once over the backfilled keys. NULL years sort lowest through a generated column. The search
  // vector is generated from the keys (title weighed A, author B), so it changes in the record's own
  // statement; it is built from fold()'s words as they are, without the text-search parser, whose idea
  // of a letter depends on the server's glibc and locale: both engines index exactly the same words.
  5: `
    CREATE FUNCTION search_words(words text, weight "char") RETURNS tsvector
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN setweight(coalesce((
        SELECT string_agg('''' || replace(replace(w, '\\', '\\\\'), '''', '\\''') || ''':' || n::text, ' ')::tsvector
        FROM unnest(string_to_array(words, ' ')) WITH ORDINALITY AS u(w, n)), ''::tsvector), weight);
    ALTER TABLE books ADD COLUMN published_year_sort integer GENERATED ALWAYS AS (coalesce(published_year, -2147483648)) STORED,
      ADD COLUMN tsv tsvector GENERATED ALWAYS AS (search_words(title_key, 'A') || search_words(author_key, 'B')) STORED;
    ALTER TABLE students ADD COLUMN enrollment_year_sort integer GENERATED ALWAYS AS (coalesce(enrollment_year, -2147483648)) STORED,
      ADD COLUMN tsv tsvector GENERATED ALWAYS AS (search_words(name_key, 'A')) STORED;

    CREATE INDEX books_title ON books (title_key, seq);
    CREATE INDEX books_author_title ON books (author_key, title_key, seq);
    CREATE INDEX books_published_year ON books (published_year_sort, seq);
    CREATE INDEX books_updated ON books (updated_at, seq);
    CREATE INDEX books_search ON books USING gin (tsv);
    CREATE INDEX students_name ON students (name_key, seq);
    CREATE INDEX students_status_name ON students (status, name_key, seq);
    CREATE INDEX students_status ON students (status, seq);
    CREATE INDEX students_enrollment_year ON students (enrollment_year_sort, seq);
    CREATE INDEX students_updated ON students (updated_at, seq);
    CREATE INDEX students_search ON students USING gin (tsv);
  `,
  // The outbox: each record write inserts its event in its own statement (table.ts). Sequence values are
  // drawn at insert but commit in any order, so the feed's order is (xid, seq) and readers only see
  // transactions older than the oldest one still open (events.ts): a late commit is never skipped.
  // Pruning deletes from the front of that order and remembers the last position it deleted, below
  // which a reader's position is gone. The feed id is stored by the first node to start (index.ts).
  6: `
    CREATE TABLE events (
      seq bigint GENERATED ALWAYS AS IDENTITY,
      xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
      type text NOT NULL,
      envelope text NOT NULL,
      time timestamptz NOT NULL,
      PRIMARY KEY (xid, seq)
    );

    CREATE TABLE events_pruned (
      one boolean PRIMARY KEY DEFAULT true CHECK (one),
      xid xid8 NOT NULL,
      seq bigint NOT NULL
    );
    INSERT INTO events_pruned (xid, seq) VALUES ('0', 0);
  `,
  // Endpoints keep their secrets as given: signing needs them, so unlike API keys they cannot be hashed.
  // Times the workers compare (attempts, leases, failures) are milliseconds since the epoch, from the
  // nodes' clocks, as bigint.
  7: `
    CREATE TABLE webhook_endpoints (
      endpoint_id uuid PRIMARY KEY,
      url text NOT NULL,
      types text NOT NULL,
      description text,
      key_id text NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at bigint,
      status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
      disabled_reason text CHECK (disabled_reason IN ('gone', 'failing', 'key_revoked')),
      failing_since bigint,
      created_at timestamptz NOT NULL,
      position text NOT NULL
    );

    -- One row per event still to deliver to an endpoint; it goes once delivered, or with its endpoint.
    CREATE TABLE webhook_deliveries (
      delivery_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
      position text NOT NULL,
      body text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at bigint NOT NULL,
      lease_until bigint,
      last_status integer,
      last_error text,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending')),
      UNIQUE (endpoint_id, position)
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
  `,
  // The same search vectors at half the cost of a write: a LANGUAGE sql function with a subquery is
  // planned again at every call from a generated column, twice a book write (some 130 µs of the
  // database's CPU per create, BENCHMARKS.md); PL/pgSQL keeps its plan for the session. Same body,
  // same vectors, so nothing stored changes.
  8: `
    CREATE OR REPLACE FUNCTION search_words(words text, weight "char") RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
      BEGIN
        RETURN setweight(coalesce((
          SELECT string_agg('''' || replace(replace(w, '\\', '\\\\'), '''', '\\''') || ''':' || n::text, ' ')::tsvector
          FROM unnest(string_to_array(words, ' ')) WITH ORDINALITY AS u(w, n)), ''::tsvector), weight);
      END
    $$;
  `,
  // Relevance ranks books with every searched word in the title apart from the rest; the GIN index on
  // tsv ignores weights, so it would hand over every book with the word, title or author, for a check
  // row by row. Each field's words get an index of their own.
  9: `
    CREATE INDEX books_title_search ON books USING gin (search_words(title_key, 'A'));
    CREATE INDEX books_author_search ON books USING gin (search_words(author_key, 'B'));
  `,
  // See SQLite's migration 10.
  10: `
    CREATE TABLE imports (
      import_id text PRIMARY KEY,
      key_id text NOT NULL,
      collection text NOT NULL CHECK (collection IN ('books', 'students')),
      mode text NOT NULL CHECK (mode IN ('all', 'valid')),
      format text NOT NULL CHECK (format IN ('csv', 'ndjson')),
      state text NOT NULL CHECK (state IN ('receiving', 'running', 'succeeded', 'failed', 'cancelled')),
      cancel_requested integer NOT NULL DEFAULT 0,
      rows_read bigint NOT NULL DEFAULT 0,
      rows_written bigint NOT NULL DEFAULT 0,
      rows_refused bigint NOT NULL DEFAULT 0,
      bytes bigint NOT NULL DEFAULT 0,
      created_at text NOT NULL,
      started_at text,
      finished_at text,
      detail text,
      problems text NOT NULL DEFAULT '[]',
      problems_omitted bigint NOT NULL DEFAULT 0,
      written_to bigint NOT NULL DEFAULT 0,
      idempotency_key text,
      fingerprint text,
      runner text,
      lease_until bigint,
      UNIQUE (key_id, idempotency_key)
    );
    CREATE INDEX imports_by_key ON imports (key_id, created_at);
    CREATE INDEX imports_running ON imports (state, lease_until);
    CREATE TABLE import_rows (
      import_id text NOT NULL,
      line bigint NOT NULL,
      record_id uuid NOT NULL,
      unique_value text,
      record text NOT NULL,
      PRIMARY KEY (import_id, line)
    );
    CREATE UNIQUE INDEX import_rows_ids ON import_rows (import_id, record_id);
    CREATE UNIQUE INDEX import_rows_unique ON import_rows (import_id, unique_value) WHERE unique_value IS NOT NULL;
  `,
  // An import's events are marked, and each webhook endpoint has a cursor per lane (live, imported):
  // a million imported events queue apart from the rest instead of ahead of them. A constant default
  // adds the column without rewriting the table.
  11: `
    ALTER TABLE events ADD COLUMN imported boolean NOT NULL DEFAULT false;
    ALTER TABLE webhook_endpoints ADD COLUMN imported_position text;
    UPDATE webhook_endpoints SET imported_position = position;
    ALTER TABLE webhook_endpoints ALTER COLUMN imported_position SET NOT NULL;
    ALTER TABLE webhook_deliveries ADD COLUMN imported boolean NOT NULL DEFAULT false;
    CREATE INDEX webhook_deliveries_lane ON webhook_deliveries (endpoint_id, imported, next_attempt_at);
  `
}

// Any constant works, as long as every node and release uses the same one.
const migrationLock = "hashtextextended('books-students-api:migrate', 0)"

/** The schema version the database is at: 0 when this service never migrated it. */
export async function schemaVersion (client: ClientBase): Promise<number> {
  // Two statements: a statement naming a table that does not exist fails before it runs.
  const { rows: [table] } = await client.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists")
  if (table?.exists !== true) return 0
  const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')
  return rows[0]?.version ?? 0
}

/**
 * Brings the database up to the latest schema in one transaction. The advisory lock makes nodes that
 * start together on an empty database take turns: the first migrates, the others then find nothing
 * to do. PostgreSQL's DDL is transactional, so a failed migration leaves the database as it was.
 */
export async function migrate (client: ClientBase, scripts: MigrationScripts = postgresMigrations, progress?: MigrationProgress): Promise<void> {
  await client.query('BEGIN')
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${migrationLock})`)
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    const current = await schemaVersion(client)
    if (current > latestVersion) throw new Error(newerSchemaMessage(current))
    for (const { version, name } of schemaHistory.filter(m => m.version > current)) {
      await client.query(scripts[version])
      if (version === 4) await backfillKeys(client, progress)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, name])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}

/** Fills the folded keys of rows written before version 4, a batch per statement, in the migration's transaction. */
async function backfillKeys (client: ClientBase, progress: MigrationProgress | undefined): Promise<void> {
  for (const spec of version4Keys) {
    const keys = Object.keys(spec.keys)
    const folded = spec.keys as Record<string, string>
    const { rows: [{ total }] } = await client.query(`SELECT count(*)::int AS total FROM ${spec.table}`) as unknown as { rows: [{ total: number }] }
    const update = `UPDATE ${spec.table} SET ${keys.map(k => `${k} = v.${k}`).join(', ')}
      FROM unnest($1::bigint[], ${keys.map((_, i) => `$${i + 2}::text[]`).join(', ')}) AS v(seq, ${keys.join(', ')}) WHERE ${spec.table}.seq = v.seq`
    let done = 0
    for (let last = '0'; ;) {
      const { rows } = await client.query(`SELECT seq, ${Object.values(spec.keys).join(', ')} FROM ${spec.table} WHERE seq > $1 ORDER BY seq LIMIT 1000`, [last]) as { rows: ({ seq: string } & Record<string, unknown>)[] }
      if (rows.length === 0) break
      await client.query(update, [rows.map(r => r.seq), ...keys.map(k => rows.map(r => fold(r[folded[k]!] as string)))])
      last = rows.at(-1)!.seq
      done += rows.length
      if (total >= progressEvery && (done === total || done % (progressEvery * 10) === 0)) progress?.(`${spec.table}: folded keys for ${done} of ${total} rows`)
    }
  }
}
