// Imports as both engines store them: a table row into the import the service shows, and changes into column values.
import type { ImportProblem } from '../contract/api-types.js'
import type { ImportChanges, StoredImport } from './types.js'

/** Refused rows an import lists; the rest are only counted. */
export const problemsKept = 1000

/** An imports row as either engine returns it (PostgreSQL's bigints as text). */
export interface ImportRow {
  import_id: string
  key_id: string
  collection: StoredImport['collection']
  mode: StoredImport['mode']
  format: StoredImport['format']
  state: StoredImport['state']
  cancel_requested: number
  rows_read: number | string
  rows_written: number | string
  rows_refused: number | string
  bytes: number | string
  created_at: string
  started_at: string | null
  finished_at: string | null
  detail: string | null
  problems: string
  problems_omitted: number | string
  written_to: number | string
  idempotency_key: string | null
  fingerprint: string | null
}

export function storedImport (row: ImportRow, now = Date.now()): StoredImport {
  const read = Number(row.rows_read)
  const started = Date.parse(row.created_at)
  const seconds = ((row.finished_at === null ? now : Date.parse(row.finished_at)) - started) / 1000
  return {
    import_id: row.import_id,
    collection: row.collection,
    mode: row.mode,
    format: row.format,
    state: row.state,
    cancel_requested: row.cancel_requested === 1,
    rows: { read, written: Number(row.rows_written), refused: Number(row.rows_refused) },
    bytes: Number(row.bytes),
    rows_per_second: seconds > 0 ? Math.round(read / seconds * 10) / 10 : null,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    detail: row.detail,
    problems: JSON.parse(row.problems) as ImportProblem[],
    problems_omitted: Number(row.problems_omitted),
    keyId: row.key_id,
    idempotencyKey: row.idempotency_key,
    fingerprint: row.fingerprint,
    writtenTo: Number(row.written_to)
  }
}

/** The import after `changes`, as the columns to write: counters added, problems appended up to problemsKept. */
export function changedColumns (current: StoredImport, changes: ImportChanges): Record<string, string | number | null> {
  const columns: Record<string, string | number | null> = {}
  if (changes.state !== undefined) columns['state'] = changes.state
  if (changes.read !== undefined) columns['rows_read'] = current.rows.read + changes.read
  if (changes.written !== undefined) columns['rows_written'] = current.rows.written + changes.written
  if (changes.refused !== undefined) columns['rows_refused'] = current.rows.refused + changes.refused
  if (changes.bytes !== undefined) columns['bytes'] = current.bytes + changes.bytes
  if (changes.startedAt !== undefined) columns['started_at'] = changes.startedAt
  if (changes.finishedAt !== undefined) columns['finished_at'] = changes.finishedAt
  if (changes.detail !== undefined) columns['detail'] = changes.detail
  if (changes.writtenTo !== undefined) columns['written_to'] = changes.writtenTo
  if (changes.cancelRequested === true) columns['cancel_requested'] = 1
  if (changes.releaseKey === true) columns['idempotency_key'] = null
  if (changes.problems !== undefined && changes.problems.length > 0) {
    const room = Math.max(0, problemsKept - current.problems.length)
    columns['problems'] = JSON.stringify([...current.problems, ...changes.problems.slice(0, room)])
    columns['problems_omitted'] = current.problems_omitted + Math.max(0, changes.problems.length - room)
  }
  return columns
}
