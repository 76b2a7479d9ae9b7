// Issue 12's list behaviour on PostgreSQL (test/list-query.ts). These tests are the engine's proof, so an
// unreachable PostgreSQL fails the file rather than skipping it, on a developer's machine as in CI.
import pg from 'pg'
import t from 'tap'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { postgresMigrations } from '../src/storage/postgres/migrations.js'
import { schemaHistory } from '../src/storage/schema.js'
import { listQuerySuite } from './list-query.js'
import { emptyDatabase, postgresReachable, serverUrl, testDatabase } from './postgres.js'

const settings = (url: string) => ({ url, connections: 2, connectTimeout: 2000, statementTimeout: 10_000 })

if (!await postgresReachable()) {
  t.fail(`PostgreSQL at ${serverUrl} does not answer: start it (README, "Run on PostgreSQL") or set TEST_POSTGRES_URL`)
} else {
  listQuerySuite(t, {
    open: async (t, listLimits) => openPostgresRepositories(settings(await testDatabase(t)), { ...(listLimits !== undefined && { listLimits }) }),
    openVersion3: async (t, rows, onMigrationProgress) => {
      const url = await emptyDatabase(t)
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        for (const version of [1, 2, 3] as const) await client.query(postgresMigrations[version])
        // As migrate() records versions, for the versions this database has.
        await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())')
        for (const { version, name } of schemaHistory.filter(m => m.version <= 3)) await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, name])
        const column = (records: Record<string, unknown>[], name: string) => records.map(r => r[name])
        // WITH ORDINALITY … ORDER BY: rows take their seq in the order given.
        await client.query(`INSERT INTO books (book_id, title, author, isbn, published_year, created_at, updated_at)
          SELECT b, t, a, i, y, c, u FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::timestamptz[])
          WITH ORDINALITY AS r(b, t, a, i, y, c, u, n) ORDER BY n`,
        ['book_id', 'title', 'author', 'isbn', 'published_year', 'created_at', 'updated_at'].map(name => column(rows.books, name)))
        await client.query(`INSERT INTO students (student_id, name, email, enrollment_year, status, created_at, updated_at)
          SELECT s, na, e, y, st, c, u FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::timestamptz[])
          WITH ORDINALITY AS r(s, na, e, y, st, c, u, n) ORDER BY n`,
        ['student_id', 'name', 'email', 'enrollment_year', 'status', 'created_at', 'updated_at'].map(name => column(rows.students, name)))
      } finally {
        await client.end()
      }
      return openPostgresRepositories(settings(url), { onMigrationProgress })
    }
  })
}
