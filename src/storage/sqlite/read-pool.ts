// Reader threads for the list pages that may take long, each request with a time budget: the event loop never waits on them.
import { Worker } from 'node:worker_threads'
import { FairQueue } from '../fair-queue.js'
import { ListTimeoutError, type ListLimits, SearchTooBroadError } from '../list-sql.js'
import { type ListCaller, type ListQuery, type Page, serviceCaller } from '../types.js'

export interface ReaderData { path: string, limits: ListLimits }
export interface ListRequest { id: number, table: 'books' | 'students', query: ListQuery, limit: number, after: string | null }
export type ListReply = { id: number } & ({ page: Page<unknown> } | { tooBroad: number } | { failed: string })
/** What a reader says once, when its connection is open: it takes requests from then on. */
export interface ReaderReady { ready: true }

/** A thread reading the file at `data.path`, saying ReaderReady first; tests start others (one that never answers, say). */
export type StartReader = (data: ReaderData) => Worker

const startReader: StartReader = data => new Worker(new URL('./list-worker.js', import.meta.url), { workerData: data })

interface Job {
  request: ListRequest
  caller: ListCaller
  resolve: (page: Page<unknown>) => void
  reject: (error: Error) => void
  /** Set when the budget starts: at once, or once the first thread is ready (not while the service starts). */
  timer?: NodeJS.Timeout
  settled: boolean
  /** A job whose thread died is given to another thread once. */
  retried: boolean
}

interface Reader { worker: Worker, ready: boolean, job: Job | null }

const maxDeathsInARow = 8

export class ReadPool {
  readonly #data: ReaderData
  readonly #budgetMs: number
  readonly #start: StartReader
  readonly #readers = new Set<Reader>()
  /** Pages waiting for a thread: a queue per caller, served in turn (src/storage/fair-queue.ts). */
  readonly #queue: FairQueue<Job>
  #nextId = 0
  #closed = false
  /** Threads that died since one last answered. */
  #deaths = 0
  /** Whether a thread was ever ready: until then, the budgets wait too. */
  #started = false
  /** Pages asked for before then, whose budgets start with the first thread. */
  #unarmed: Job[] = []
  /** Threads kept dying and are no longer started: every page fails at once rather than wait for none. */
  #gaveUp = false

  /**
   * `perCaller`: pages one caller may have waiting; beyond, its next page is refused at once with TooManyWaitingError.
   * `clock`: milliseconds, monotonic, for the anonymous callers' share of the time (tests move their own).
   */
  constructor (data: ReaderData, { threads, budgetMs, perCaller, start = startReader, clock }: { threads: number, budgetMs: number, perCaller: number, start?: StartReader, clock?: () => number }) {
    this.#data = data
    this.#budgetMs = budgetMs
    this.#start = start
    this.#queue = new FairQueue({ slots: threads, perCaller, clock, wake: () => this.#dispatch() })
    for (let i = 0; i < threads; i++) this.#spawn()
  }

  /**
   * The page, read by a thread once it is `caller`'s turn. Throws ListTimeoutError when it is not read
   * within the budget (waiting included): the caller answers at once, while a statement already
   * running finishes on its thread, its page dropped; the threads are few, so that work is bounded.
   * Throws TooManyWaitingError at once when the caller already has `perCaller` pages waiting.
   */
  async page<T> (table: ListRequest['table'], query: ListQuery, limit: number, after: string | null, caller: ListCaller = serviceCaller): Promise<Page<T>> {
    return new Promise<Page<T>>((resolve, reject) => {
      if (this.#gaveUp) {
        reject(new Error('reader threads keep dying'))
        return
      }
      const job: Job = {
        request: { id: ++this.#nextId, table, query, limit, after },
        caller,
        resolve: resolve as (page: Page<unknown>) => void,
        reject,
        settled: false,
        retried: false
      }
      // Refused here, the promise rejects with the bound's error; nothing is queued or armed.
      this.#queue.push(caller, job)
      if (this.#started) this.#arm(job)
      else this.#unarmed.push(job)
      this.#dispatch()
    })
  }

  /** Starts the job's budget. */
  #arm (job: Job): void {
    job.timer = setTimeout(() => this.#settle(job, () => {
      // Out of the queue, if it still waits there; a thread reading it finishes, and its page is dropped.
      this.#queue.remove(job.caller, job)
      job.reject(new ListTimeoutError(this.#budgetMs))
    }), this.#budgetMs)
  }

  /** How many threads are running now (for tests and metrics). */
  get threads (): number {
    return this.#readers.size
  }

  async close (): Promise<void> {
    this.#closed = true
    const unread = [...this.#queue.drain(), ...[...this.#readers].flatMap(reader => reader.job ?? [])]
    for (const job of unread) this.#settle(job, () => job.reject(new Error('the service is closing')))
    await Promise.all([...this.#readers].map(async reader => reader.worker.terminate()))
  }

  #settle (job: Job, outcome: () => void): void {
    if (job.settled) return
    job.settled = true
    clearTimeout(job.timer)
    outcome()
  }

  #spawn (): void {
    const reader: Reader = { worker: this.#start(this.#data), ready: false, job: null }
    this.#readers.add(reader)
    reader.worker.on('message', (reply: ListReply | ReaderReady) => {
      if ('ready' in reply) {
        reader.ready = true
        if (!this.#started) {
          this.#started = true
          for (const job of this.#unarmed) this.#arm(job)
          this.#unarmed = []
        }
        this.#dispatch()
        return
      }
      const job = reader.job!
      reader.job = null
      this.#queue.finished(job.caller, job)
      this.#deaths = 0
      this.#settle(job, () => {
        if ('page' in reply) job.resolve(reply.page)
        else job.reject('tooBroad' in reply ? new SearchTooBroadError(reply.tooBroad) : new Error(reply.failed))
      })
      this.#dispatch()
    })
    // A thread that dies (out of memory, a crash in native code) is replaced; its job goes to another once.
    reader.worker.on('exit', () => {
      this.#readers.delete(reader)
      if (this.#closed) return
      const job = reader.job
      if (job !== null) this.#queue.finished(job.caller, job)
      if (job !== null && !job.settled) {
        if (job.retried) this.#settle(job, () => job.reject(new Error('a reader thread died twice reading this page')))
        else {
          job.retried = true
          this.#queue.retry(job.caller, job)
        }
      }
      // Threads that die before answering anything (a file they cannot open) are not started for ever.
      if (++this.#deaths > maxDeathsInARow) {
        this.#gaveUp = true
        for (const queued of this.#queue.drain()) this.#settle(queued, () => queued.reject(new Error('reader threads keep dying')))
        return
      }
      this.#spawn()
      this.#dispatch()
    })
    // Its exit follows, and is handled above.
    reader.worker.on('error', () => {})
  }

  #dispatch (): void {
    for (const reader of this.#readers) {
      if (!reader.ready || reader.job !== null) continue
      const job = this.#queue.next()?.job
      if (job === undefined) return
      reader.job = job
      reader.worker.postMessage(job.request)
    }
  }
}
