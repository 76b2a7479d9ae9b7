// PostgreSQL imports: the import rows and their staged rows, every change one statement (no transaction held between round trips).
import { changedColumns, type ImportRow, storedImport } from '../import-rows.js'
import type { ImportStore, StagedRow, StoredImport } from '../types.js'
import type { PipelinedClients } from './connection.js'

// How each collection's stored records hold a staged row's id and unique value (emails by their lower case, as their index).
const stored = {
  books: { id: 'book_id', unique: 's.isbn' },
  students: { id: 'student_id', unique: 'lower(s.email)' }
}

/** Staged lines compared with the stored records, or deleted, per statement: each bounded, well inside the statement timeout. */
const conflictSpan = 20_000

export class PostgresImports implements ImportStore {
  readonly #db: PipelinedClients

  constructor (db: PipelinedClients) {
    this.#db = db
  }

  async #rows (text: string, values: unknown[]): Promise<ImportRow[]> {
    return (await this.#db.query<ImportRow>({ text, values })).rows
  }

  async start (started: Parameters<ImportStore['start']>[0], runner: string, leaseUntil: number): Promise<StoredImport | null> {
    const [created] = await this.#rows(`INSERT INTO imports (import_id, key_id, collection, mode, format, state, created_at, idempotency_key, runner, lease_until)
      VALUES ($1, $2, $3, $4, $5, 'receiving', $6, $7, $8, $9) ON CONFLICT (key_id, idempotency_key) DO NOTHING RETURNING import_id`,
    [started.import_id, started.keyId, started.collection, started.mode, started.format, started.created_at, started.idempotencyKey, runner, leaseUntil])
    if (created !== undefined) return null
    const [held] = await this.#rows('SELECT * FROM imports WHERE key_id = $1 AND idempotency_key = $2', [started.keyId, started.idempotencyKey])
    return storedImport(held!)
  }

  async stage (importId: string, rows: StagedRow[]): Promise<{ line: number, earlier: number, field: 'id' | 'unique' }[]> {
    const columns = [rows.map(r => r.line), rows.map(r => r.recordId), rows.map(r => r.unique), rows.map(r => r.record)]
    // ON CONFLICT DO NOTHING also passes over a row that repeats an earlier row of the same statement.
    const { rows: skipped } = await this.#db.query<{ line: string, record_id: string, unique_value: string | null }>({
      name: 'import-stage',
      text: `WITH input AS (SELECT * FROM unnest($2::bigint[], $3::uuid[], $4::text[], $5::text[]) AS i(line, record_id, unique_value, record)),
        staged AS (INSERT INTO import_rows (import_id, line, record_id, unique_value, record) SELECT $1, line, record_id, unique_value, record FROM input ORDER BY line
          ON CONFLICT DO NOTHING RETURNING line)
        SELECT line, record_id, unique_value FROM input WHERE line NOT IN (SELECT line FROM staged) ORDER BY line`,
      values: [importId, ...columns]
    })
    if (skipped.length === 0) return []
    const { rows: held } = await this.#db.query<{ line: string, record_id: string, unique_value: string | null }>({
      text: 'SELECT line, record_id, unique_value FROM import_rows WHERE import_id = $1 AND (record_id = ANY($2::uuid[]) OR unique_value = ANY($3::text[]))',
      values: [importId, skipped.map(r => r.record_id), skipped.map(r => r.unique_value)]
    })
    return skipped.map(({ line, record_id: id, unique_value: unique }) => {
      const sameId = held.find(h => h.record_id === id)
      return sameId !== undefined
        ? { line: Number(line), earlier: Number(sameId.line), field: 'id' as const }
        : { line: Number(line), earlier: Number(held.find(h => h.unique_value === unique)!.line), field: 'unique' as const }
    })
  }

  async conflicts (importId: string, table: 'books' | 'students'): Promise<{ line: number, field: 'id' | 'unique' }[]> {
    const { id, unique } = stored[table]
    const [{ last }] = (await this.#db.query<{ last: string | null }>({ text: 'SELECT max(line) AS last FROM import_rows WHERE import_id = $1', values: [importId] })).rows as [{ last: string | null }]
    const found: { line: number, field: 'id' | 'unique' }[] = []
    // No staged row: max() is NULL, which Number() reads as 0.
    for (let from = 0; from < Number(last); from += conflictSpan) {
      const { rows } = await this.#db.query<{ line: string, field: 'id' | 'unique' }>({
        name: `import-conflicts-${table}`,
        text: `SELECT r.line, 'id' AS field FROM import_rows r JOIN ${table} s ON s.${id} = r.record_id WHERE r.import_id = $1 AND r.line > $2 AND r.line <= $3
          UNION ALL SELECT r.line, 'unique' FROM import_rows r JOIN ${table} s ON ${unique} = r.unique_value WHERE r.import_id = $1 AND r.line > $2 AND r.line <= $3
          ORDER BY 1`,
        values: [importId, from, from + conflictSpan]
      })
      found.push(...rows.map(row => ({ line: Number(row.line), field: row.field })))
    }
    return found
  }

  async staged (importId: string, after: number, limit: number): Promise<StagedRow[]> {
    const { rows } = await this.#db.query<{ line: string, record_id: string, unique_value: string | null, record: string }>({
      name: 'import-staged',
      text: 'SELECT line, record_id, unique_value, record FROM import_rows WHERE import_id = $1 AND line > $2 ORDER BY line LIMIT $3',
      values: [importId, after, limit]
    })
    return rows.map(row => ({ line: Number(row.line), recordId: row.record_id, unique: row.unique_value, record: row.record }))
  }

  async unstage (importId: string, lines?: number[]): Promise<void> {
    if (lines !== undefined) {
      await this.#db.query({ text: 'DELETE FROM import_rows WHERE import_id = $1 AND line = ANY($2::bigint[])', values: [importId, lines] })
      return
    }
    // In steps, each well inside the statement timeout.
    for (;;) {
      const { rowCount } = await this.#db.query({
        text: `DELETE FROM import_rows WHERE import_id = $1 AND line IN (SELECT line FROM import_rows WHERE import_id = $1 LIMIT ${conflictSpan})`,
        values: [importId]
      })
      if (rowCount === 0) return
    }
  }

  async discard (importId: string): Promise<void> {
    await this.unstage(importId)
    await this.#db.query({ text: 'DELETE FROM imports WHERE import_id = $1', values: [importId] })
  }

  /**
   * Read, then written: only an import's runner changes its counters, one change at a time, and a
   * cancellation (from any node) sets only its own column, so no change is lost between the two.
   */
  async update (importId: string, changes: Parameters<ImportStore['update']>[1], lease?: { runner: string, until: number }, fingerprint?: string): Promise<StoredImport> {
    const current = (await this.get(importId))!
    const columns = changedColumns(current, changes)
    if (lease !== undefined) Object.assign(columns, { runner: lease.runner, lease_until: lease.until })
    if (fingerprint !== undefined) columns['fingerprint'] = fingerprint
    const names = Object.keys(columns)
    const [row] = await this.#rows(`UPDATE imports SET ${names.map((name, i) => `${name} = $${i + 2}`).join(', ')} WHERE import_id = $1 RETURNING *`, [importId, ...Object.values(columns)])
    return storedImport(row!)
  }

  async get (importId: string): Promise<StoredImport | null> {
    const [row] = await this.#rows('SELECT * FROM imports WHERE import_id = $1', [importId])
    return row === undefined ? null : storedImport(row)
  }

  async list (keyId: string | null, limit: number): Promise<StoredImport[]> {
    const rows = await this.#rows('SELECT * FROM imports WHERE ($1::text IS NULL OR key_id = $1) ORDER BY created_at DESC, import_id DESC LIMIT $2', [keyId, limit])
    return rows.map(row => storedImport(row))
  }

  async claim (runner: string, now: number, leaseUntil: number): Promise<StoredImport | null> {
    // SKIP LOCKED: of nodes claiming at once, each takes a different import or none.
    const [row] = await this.#rows(`UPDATE imports SET runner = $1, lease_until = $3 WHERE import_id = (
        SELECT import_id FROM imports WHERE state IN ('receiving', 'running') AND lease_until < $2 ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
      ) RETURNING *`, [runner, now, leaseUntil])
    return row === undefined ? null : storedImport(row)
  }
}
