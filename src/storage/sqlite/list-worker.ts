// A reader thread: answers list pages from its own read-only connection, so that a long statement never holds the event loop.
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { SearchTooBroadError } from '../list-sql.js'
import { bookTable, studentTable } from '../tables.js'
import type { TableSpec } from '../tables.js'
import { SqliteListing } from './listing.js'
import type { ListRequest, ListReply, ReaderData, ReaderReady } from './read-pool.js'

// Below the event loop: where a reader shares a core with it (or the cores are all busy), reads by id,
// writes and plain pages come first, and a list waits, within its budget. Linux lets a thread have its
// own nice value, set through its thread id; elsewhere readers keep the process's priority.
const readerNice = 10
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), readerNice)
} catch {}

const { path, limits } = workerData as ReaderData
const db = new Database(path, { readonly: true, fileMustExist: true })
db.pragma('busy_timeout = 5000')
const tables = {
  books: new SqliteListing(db, bookTable as unknown as TableSpec<object>, limits),
  students: new SqliteListing(db, studentTable as unknown as TableSpec<object>, limits)
}

parentPort!.postMessage({ ready: true } satisfies ReaderReady)
parentPort!.on('message', ({ id, table, query, limit, after }: ListRequest) => {
  tables[table].page(query, limit, after).then(
    page => parentPort!.postMessage({ id, page } satisfies ListReply),
    (error: unknown) => parentPort!.postMessage((error instanceof SearchTooBroadError ? { id, tooBroad: error.cap } : { id, failed: String(error) }) satisfies ListReply)
  )
})
