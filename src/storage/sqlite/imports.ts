// SQLite imports: the import rows and their staged rows, each change one short transaction on the service's connection.
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import { changedColumns, type ImportRow, storedImport } from '../import-rows.js'
import type { ImportStore, StagedRow, StoredImport } from '../types.js'

// How each collection's stored records hold a staged row's id and unique value.
const stored = {
  books: { id: 'book_id', unique: 'isbn', collate: '' },
  students: { id: 'student_id', unique: 'email', collate: ' COLLATE NOCASE' }
}

/**
 * Staged lines one statement reads or deletes at most: a file of a million rows is checked and cleared
 * in steps of a few milliseconds, the event loop yielded between them, rather than in one statement
 * of seconds that every other request would wait behind (single writes' p99 was 950 ms, BENCHMARKS.md).
 */
const step = 10_000

export function sqliteImports (db: Database.Database): ImportStore {
  const get = db.prepare<[string], ImportRow>('SELECT * FROM imports WHERE import_id = ?')
  const byKey = db.prepare<[string, string], ImportRow>('SELECT * FROM imports WHERE key_id = ? AND idempotency_key = ?')
  const insert = db.prepare(`INSERT INTO imports (import_id, key_id, collection, mode, format, state, created_at, idempotency_key, runner, lease_until)
    VALUES (@import_id, @keyId, @collection, @mode, @format, 'receiving', @created_at, @idempotencyKey, @runner, @leaseUntil)
    ON CONFLICT (key_id, idempotency_key) DO NOTHING`)
  const stage = db.prepare<[string, number, string, string | null, string]>('INSERT OR IGNORE INTO import_rows (import_id, line, record_id, unique_value, record) VALUES (?, ?, ?, ?, ?)')
  const earlierId = db.prepare<[string, string], number>('SELECT line FROM import_rows WHERE import_id = ? AND record_id = ?').pluck()
  const earlierUnique = db.prepare<[string, string], number>('SELECT line FROM import_rows WHERE import_id = ? AND unique_value = ?').pluck()
  const conflicts = Object.fromEntries(Object.entries(stored).map(([table, { id, unique, collate }]) => [table, db.prepare<[{ id: string, from: number, to: number }], { line: number, field: 'id' | 'unique' }>(`
    SELECT r.line, 'id' AS field FROM import_rows r JOIN ${table} s ON s.${id} = r.record_id WHERE r.import_id = @id AND r.line > @from AND r.line <= @to
    UNION ALL SELECT r.line, 'unique' FROM import_rows r JOIN ${table} s ON s.${unique} = r.unique_value${collate} WHERE r.import_id = @id AND r.line > @from AND r.line <= @to
    ORDER BY 1`)]))
  const lastLine = db.prepare<[string], number | null>('SELECT max(line) FROM import_rows WHERE import_id = ?').pluck()
  const staged = db.prepare<[string, number, number], { line: number, recordId: string, unique: string | null, record: string }>(
    'SELECT line, record_id AS recordId, unique_value AS "unique", record FROM import_rows WHERE import_id = ? AND line > ? ORDER BY line LIMIT ?')
  const unstageLine = db.prepare<[string, number]>('DELETE FROM import_rows WHERE import_id = ? AND line = ?')
  const remove = db.prepare<[string]>('DELETE FROM imports WHERE import_id = ?')
  const unstageSome = db.prepare<[string, string]>(`DELETE FROM import_rows WHERE import_id = ? AND line IN (SELECT line FROM import_rows WHERE import_id = ? LIMIT ${step})`)
  const list = db.prepare<[{ keyId: string | null, limit: number }], ImportRow>('SELECT * FROM imports WHERE (@keyId IS NULL OR key_id = @keyId) ORDER BY created_at DESC, import_id DESC LIMIT @limit')
  const expired = db.prepare<[number], string>("SELECT import_id FROM imports WHERE state IN ('receiving', 'running') AND lease_until < ? ORDER BY created_at LIMIT 1").pluck()
  const take = db.prepare<[string, number, string, number]>('UPDATE imports SET runner = ?, lease_until = ? WHERE import_id = ? AND lease_until < ?')

  const found = (id: string): StoredImport | null => {
    const row = get.get(id)
    return row === undefined ? null : storedImport(row)
  }

  return {
    async start (started, runner, leaseUntil) {
      const { changes } = insert.run({ ...started, runner, leaseUntil })
      return changes === 1 ? null : storedImport(byKey.get(started.keyId, started.idempotencyKey!)!)
    },
    async stage (importId, rows: StagedRow[]) {
      return db.transaction(() => rows.flatMap(({ line, recordId, unique, record }) => {
        if (stage.run(importId, line, recordId, unique, record).changes === 1) return []
        const sameId = earlierId.get(importId, recordId)
        return [sameId !== undefined ? { line, earlier: sameId, field: 'id' as const } : { line, earlier: earlierUnique.get(importId, unique!)!, field: 'unique' as const }]
      }))()
    },
    async conflicts (importId, table) {
      const found: { line: number, field: 'id' | 'unique' }[] = []
      const last = lastLine.get(importId) ?? 0
      for (let from = 0; from < last; from += step) {
        found.push(...conflicts[table]!.all({ id: importId, from, to: from + step }))
        await yieldToLoop()
      }
      return found
    },
    async staged (importId, after, limit) {
      return staged.all(importId, after, limit)
    },
    async unstage (importId, lines) {
      if (lines !== undefined) {
        db.transaction(() => { for (const line of lines) unstageLine.run(importId, line) })()
        return
      }
      while (unstageSome.run(importId, importId).changes > 0) await yieldToLoop()
    },
    async discard (importId) {
      await this.unstage(importId)
      remove.run(importId)
    },
    async update (importId, changes, lease, fingerprint) {
      return db.transaction(() => {
        const columns = changedColumns(found(importId)!, changes)
        if (lease !== undefined) Object.assign(columns, { runner: lease.runner, lease_until: lease.until })
        if (fingerprint !== undefined) columns['fingerprint'] = fingerprint
        const names = Object.keys(columns)
        db.prepare(`UPDATE imports SET ${names.map(name => `${name} = @${name}`).join(', ')} WHERE import_id = @importId`).run({ ...columns, importId })
        return found(importId)!
      })()
    },
    async get (importId) {
      return found(importId)
    },
    async list (keyId, limit) {
      return list.all({ keyId, limit }).map(row => storedImport(row))
    },
    async claim (runner, now, leaseUntil) {
      return db.transaction(() => {
        const id = expired.get(now)
        if (id === undefined || take.run(runner, leaseUntil, id, now).changes === 0) return null
        return found(id)
      }).immediate()
    }
  }
}
