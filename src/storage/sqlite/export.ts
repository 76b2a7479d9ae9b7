// SQLite exports: a file's read on export threads, each export in a snapshot of its own; a database in memory read here.
import { Worker } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import { exportBatch, exportChunks, LoopSlice, rowWriter, SnapshotsHeldError } from '../export.js'
import { ListTimeoutError, type SqlValue } from '../list-sql.js'
import type { ExportFormat, RecordExport } from '../types.js'
import { walSize } from './database.js'

export type ExportStatements = { sql: string, params: SqlValue[] }[]

const named = (params: SqlValue[]) => Object.fromEntries(params.map((value, i) => [i + 1, value]))

/**
 * Every row of `statements`, in turn, from a database in memory: it is this connection's alone, and
 * could change between chunks, so it is read whole at once (such databases are for tests and trials);
 * the rows are written out in slices of the event loop's time.
 */
export function memoryExport (db: Database.Database, statements: ExportStatements, fields: readonly string[], format: ExportFormat, head: (() => string) | null): RecordExport {
  const position = head?.() ?? null
  const rows = statements.flatMap(({ sql, params }) => db.prepare(sql).raw().all(named(params)) as unknown[][])
  const write = rowWriter(format, fields)
  const slice = new LoopSlice()
  let at = 0
  return {
    position,
    fields,
    chunks: exportChunks(async () => {
      if (at >= rows.length) return null
      at += exportBatch
      return slice.write(rows.slice(at - exportBatch, at), write)
    }, () => {})
  }
}

/**
 * Most ms a thread reads for one chunk: rows a filter leaves far apart come in small chunks, each well
 * within the budget, rather than a batch that outlasts it.
 */
const threadSliceMs = 50

/** What an export thread is started with. */
export interface ExportThreadData {
  /** Most ms a thread reads for one chunk before it hands over what it has. */
  sliceMs: number
}

/** What the event loop asks an export thread, one at a time (a close may follow a read still running). */
export type ExportCommand =
  | { open: { path: string, statements: ExportStatements, fields: readonly string[], format: ExportFormat, head: boolean } }
  | { next: true }
  | { close: true }

/**
 * What it answers, in order: ready once, when it has started; for an open the feed's head in the
 * snapshot (null unless asked for); for a next the next chunk, null once the rows are all read.
 */
export type ExportAnswer =
  | { ready: true }
  | { opened: string | null }
  | { chunk: string | null }
  | { closed: true }
  | { failed: string }

/** Starts an export thread (tests start ones that never answer, or fail). */
export type StartExportThread = (data: ExportThreadData) => Worker

const startExportThread: StartExportThread = data => new Worker(new URL('./export-worker.js', import.meta.url), { workerData: data })

/** A thread that stopped, or failed what it was asked: it is not asked anything again. */
class ExportThreadGone extends Error {
  override name = 'ExportThreadGone'
}

/** The thread's own exit (nothing it was asked got an answer after it). */
class ExportThreadExited extends ExportThreadGone {}

/** One export thread, seen from the event loop: its answers come in the order it was asked. */
class ExportThread {
  readonly #worker: Worker
  readonly #ready: Promise<void>
  readonly #exited: Promise<void>
  readonly #waiting: { resolve: (answer: ExportAnswer) => void, reject: (error: Error) => void }[] = []
  /** Why it may not be asked again: it stopped, failed, or ran out of time (it is then stopped). */
  #spoiled: Error | null = null

  constructor (worker: Worker, onExit: () => void) {
    this.#worker = worker
    // Set by the promise's executor, which runs at once.
    let ready!: () => void
    this.#ready = new Promise<void>(resolve => { ready = resolve })
    worker.on('message', (answer: ExportAnswer) => {
      if ('ready' in answer) ready()
      else this.#waiting.shift()?.resolve(answer)
    })
    this.#exited = new Promise<void>(resolve => worker.once('exit', () => {
      this.#spoil(new ExportThreadExited('an export thread stopped'))
      for (const waiting of this.#waiting.splice(0)) waiting.reject(this.#spoiled!)
      // Asked before it was ready: it never will be.
      ready()
      onExit()
      resolve()
    }))
    // Its exit follows, and is handled above.
    worker.on('error', () => {})
  }

  get spoiled (): boolean {
    return this.#spoiled !== null
  }

  /** Whether the thread keeps the process running: while it reads an export, not while it waits for one. */
  keepsRunning (busy: boolean): void {
    if (busy) this.#worker.ref()
    else this.#worker.unref()
  }

  #spoil (why: Error): void {
    this.#spoiled ??= why
  }

  /**
   * The answer to `command`; with a budget, ListTimeoutError once it has not come within it (counted
   * from when the thread is ready), and the thread is stopped: a statement still running is not waited for.
   */
  async ask (command: ExportCommand, budgetMs: number | null): Promise<ExportAnswer> {
    await this.#ready
    if (this.#spoiled !== null) throw this.#spoiled
    const answer = new Promise<ExportAnswer>((resolve, reject) => this.#waiting.push({ resolve, reject }))
    this.#worker.postMessage(command)
    let timer: NodeJS.Timeout | undefined
    const outcome = budgetMs === null
      ? answer
      : Promise.race([answer, new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new ListTimeoutError(budgetMs)), budgetMs)
      })])
    const answered = await outcome.then(given => {
      clearTimeout(timer)
      return given
    }, (error: Error) => {
      clearTimeout(timer)
      this.#spoil(error)
      throw error
    })
    if (!('failed' in answered)) return answered
    const failure = new ExportThreadGone(answered.failed)
    this.#spoil(failure)
    throw failure
  }

  /** Stops the thread, once whatever native call it is in returns (a SQLite statement cannot be interrupted). */
  async stop (): Promise<void> {
    this.#spoil(new ExportThreadGone('an export thread was stopped'))
    await this.#worker.terminate()
    await this.#exited
  }
}

/**
 * Export threads free for the next export of any database of this process (each opens the file of the
 * export it reads, and nothing between two): a process opens one database, but tests open hundreds, and
 * a thread costs a start. A free thread does not keep the process running.
 */
const freeThreads: ExportThread[] = []

/**
 * The exports of a database file, read on export threads. Each thread reads one export at a time from
 * a read-only connection it opens for it, in a read transaction held until the export ends (in WAL
 * mode, a snapshot however long the client takes, while the service goes on writing), and hands it
 * out as text already written in its format: neither the statements nor the encoding run on the event
 * loop. A thread is started for an export when none is free, and kept for the next; how many run at
 * once is bounded by the exports admitted (EXPORTS_MAX). Each read has the list's time budget
 * (LIST_TIME_BUDGET_MS): beyond it the export fails with ListTimeoutError, and its thread is stopped,
 * not waited for.
 */
export class ExportThreads {
  readonly #path: string
  readonly #budgetMs: number
  readonly #walLimit: number
  readonly #start: StartExportThread
  /** Where this database's threads wait between exports: the process's, or (threads a test starts) its own. */
  readonly #free: ExportThread[]
  /** Threads reading this database's exports now. */
  readonly #busy = new Set<ExportThread>()
  #closed = false

  /** `walLimit`: the WAL's journal_size_limit, past which no export starts while others run. */
  constructor (path: string, { budgetMs, walLimit, start }: { budgetMs: number, walLimit: number, start?: StartExportThread }) {
    this.#path = path
    this.#budgetMs = budgetMs
    this.#walLimit = walLimit
    this.#start = start ?? startExportThread
    this.#free = start === undefined ? freeThreads : []
  }

  async open (statements: ExportStatements, fields: readonly string[], format: ExportFormat, head: boolean): Promise<RecordExport> {
    if (this.#closed) throw new ExportThreadGone('the service is closing')
    if (this.#busy.size > 0 && walSize(this.#path) > this.#walLimit) throw new SnapshotsHeldError(`the WAL is past ${this.#walLimit} bytes while ${this.#busy.size} exports hold it`)
    const open = { open: { path: this.#path, statements, fields, format, head } }
    const free = this.#free.pop()
    // A free thread may have stopped, its exit told before or after it was made free (with its last answer, or
    // later): with nothing opened on it, the export goes to a new one.
    const { thread, opened } = free === undefined
      ? await this.#openOn(this.#thread(), open)
      : await this.#openOn(free, open).catch(async (error: unknown) => {
        if (error instanceof ExportThreadExited) return this.#openOn(this.#thread(), open)
        throw error
      })
    return {
      position: opened,
      fields,
      chunks: exportChunks(async () => (await thread.ask({ next: true }, this.#budgetMs) as { chunk: string | null }).chunk, async () => this.#release(thread))
    }
  }

  /** Opens the export on `thread`: the snapshot's feed position, if asked for. */
  async #openOn (thread: ExportThread, command: ExportCommand): Promise<{ thread: ExportThread, opened: string | null }> {
    this.#busy.add(thread)
    thread.keepsRunning(true)
    try {
      const { opened } = await thread.ask(command, this.#budgetMs) as Extract<ExportAnswer, { opened: unknown }>
      return { thread, opened }
    } catch (error) {
      this.#busy.delete(thread)
      // Answered at once; the thread stops once its statement returns.
      thread.stop().catch(() => {})
      throw error
    }
  }

  /** Ends the export on `thread`: a sound thread ends its transaction and is free again; any other is stopped. */
  async #release (thread: ExportThread): Promise<void> {
    if (!thread.spoiled) {
      try {
        await thread.ask({ close: true }, null)
        this.#busy.delete(thread)
        thread.keepsRunning(false)
        this.#free.push(thread)
        return
      } catch {}
    }
    this.#busy.delete(thread)
    await thread.stop()
  }

  #thread (): ExportThread {
    const thread: ExportThread = new ExportThread(this.#start({ sliceMs: threadSliceMs }), () => {
      const at = this.#free.indexOf(thread)
      if (at !== -1) this.#free.splice(at, 1)
    })
    return thread
  }

  /** Stops the threads reading this database's exports (they fail, and their snapshots are released), and its own free ones. */
  async close (): Promise<void> {
    this.#closed = true
    const threads = [...this.#busy, ...this.#free === freeThreads ? [] : this.#free.splice(0)]
    await Promise.all(threads.map(async thread => thread.stop()))
  }
}
