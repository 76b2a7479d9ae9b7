// An export thread: reads one export at a time in a snapshot of its own read-only connection, and hands it out as CSV or NDJSON text, off the event loop.
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { exportBatch, rowWriter } from '../export.js'
import { SqliteEventFeed } from './events.js'
import type { ExportAnswer, ExportCommand, ExportStatements, ExportThreadData } from './export.js'

// Below the event loop, as the list readers are: where a thread shares a core with it, requests come first.
const exportNice = 10
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), exportNice)
} catch {}

const { sliceMs } = workerData as ExportThreadData
// Larger than a batch on the event loop: a chunk costs the loop a message and a push whatever its size,
// and with the service on one core (as the benchmarks run it) small chunks cost an export a third of its speed.
const rowsPerChunk = 4 * exportBatch

interface Session {
  path: string
  /** Opened for the export, closed with it: a thread waiting for the next export holds no file. */
  db: Database.Database
  left: ExportStatements
  rows: IterableIterator<unknown[]> | null
  /** Every statement's rows, so that an export left early resets whichever is open (an ended one ignores it). */
  opened: IterableIterator<unknown[]>[]
  write: (row: readonly unknown[]) => string
  /**
   * The chunk after the one last handed out, read as soon as that one was sent: the event loop writes
   * a chunk to the socket while the next is read here (undefined until read; null at the end; the
   * failure, if reading it failed, told when it is asked for).
   */
  ahead: string | null | Error | undefined
}
let session: Session | null = null

const named = (params: ExportStatements[number]['params']) => Object.fromEntries(params.map((value, i) => [i + 1, value]))

/**
 * The next rows, written: up to rowsPerChunk, or what `sliceMs` of reading found, so that rows a filter
 * leaves far apart still come in time; null once every statement's rows are read.
 */
function chunk (current: Session): string | null {
  const started = performance.now()
  let text = ''
  let count = 0
  while (count < rowsPerChunk) {
    if (current.rows === null) {
      const next = current.left.shift()
      if (next === undefined) break
      current.rows = current.db.prepare(next.sql).raw().iterate(named(next.params)) as IterableIterator<unknown[]>
      current.opened.push(current.rows)
    }
    const step = current.rows.next()
    if (step.done === true) {
      current.rows = null
      continue
    }
    text += current.write(step.value)
    count++
    if (performance.now() - started >= sliceMs) break
  }
  return count === 0 ? null : text
}

/**
 * Ends the snapshot, then checkpoints: while it was held, no checkpoint could pass it, so the WAL has
 * grown with every write made since. A passive checkpoint here (off the event loop, waiting for no one,
 * on a connection that may write: a read-only one cannot) copies those pages into the database; the
 * next write then starts the WAL over, truncated to journal_size_limit.
 */
function close (current: Session): void {
  session = null
  for (const rows of current.opened) rows.return!()
  current.db.close()
  const checkpointer = new Database(current.path, { fileMustExist: true })
  try {
    checkpointer.pragma('wal_checkpoint(PASSIVE)')
  } finally {
    checkpointer.close()
  }
}

function answer (command: ExportCommand): ExportAnswer {
  if ('open' in command) {
    const { path, statements, fields, format, head } = command.open
    const db = new Database(path, { readonly: true, fileMustExist: true })
    db.pragma('busy_timeout = 5000')
    session = { path, db, left: [...statements], rows: null, opened: [], write: rowWriter(format, fields), ahead: undefined }
    // Held until the export ends: the head and every statement's rows are read in one snapshot.
    db.exec('BEGIN')
    return { opened: head ? new SqliteEventFeed(db).headIn(db) : null }
  }
  if ('next' in command) {
    const current = session!
    const next = current.ahead === undefined ? chunk(current) : current.ahead
    current.ahead = undefined
    if (next instanceof Error) throw next
    return { chunk: next }
  }
  close(session!)
  return { closed: true }
}

/** After a chunk is sent, the next is read (unless the rows are all read). */
function readAhead (sent: ExportAnswer): void {
  if (!('chunk' in sent) || sent.chunk === null) return
  const current = session!
  try {
    current.ahead = chunk(current)
  } catch (error) {
    current.ahead = error as Error
  }
}

parentPort!.on('message', (command: ExportCommand) => {
  let reply: ExportAnswer
  try {
    reply = answer(command)
  } catch (error) {
    // The thread is stopped after a failure: its connection, and any snapshot, go with it.
    reply = { failed: String(error) }
  }
  parentPort!.postMessage(reply)
  readAhead(reply)
})
parentPort!.postMessage({ ready: true } satisfies ExportAnswer)
