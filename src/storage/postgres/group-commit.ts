// PostgreSQL group commit: the writes of one event-loop tick share one pipelined BEGIN … COMMIT.
import type pg from 'pg'
import { Reconnecting } from './connection.js'

/**
 * A statement that the writes of a batch share: each of its parameters an array holding one element
 * per write, and at most one row of its result per write, led by `n`, the write's 1-based place.
 */
export interface SharedStatement {
  name: string
  text: string
}

/** A write's part of a shared statement: its element of each parameter. */
export interface SharedPart {
  shared: SharedStatement
  values: unknown[]
}

/** What a write's outcome reads of one of its statements: the rows (of a shared statement, its own). */
export interface StatementResult {
  rows: any[]
  /** Null only for a statement that reports no count (pg's own type); a shared statement's part always has one. */
  rowCount: number | null
}

/** One write: its statements, run in order in one transaction, and how their results read. */
export interface Write<R> {
  statements: Array<pg.QueryConfig | SharedPart>
  /** The write's outcome from its statements' results; throws the write's expected failures (404s excepted: those are results). */
  outcome: (results: StatementResult[]) => R
  /** The error to report when a statement of this write fails: a ValueTakenError for a unique violation, say. */
  failure: (error: Error) => Error
  /**
   * The existing row the write locks (table and key), if any: a batch takes its locks in this order,
   * and a shared statement never holds two writes locking the same row.
   */
  locks?: string
}

interface Pending {
  write: Write<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

type Settled = PromiseSettledResult<pg.QueryResult>

/**
 * The batch goes out in one round trip on a connection of its own and costs one WAL flush, which is
 * what a write mostly pays for (2.5–3x autocommit's throughput, issue 11's research). Each write is
 * shaped so that its expected failures (a duplicate, a stale revision, a taken idempotency key)
 * return rows rather than raise an error, which would abort its neighbours' transaction. When one
 * raises anyway (a unique value taken by a write committing at the same moment on another node, a
 * deadlock), the transaction rolled back whole, so each write is run again in a transaction of its
 * own. A write is acknowledged only after its COMMIT; when the COMMIT's fate is unknown (the
 * connection broke), its writes fail and are not run again, since they may have committed.
 */
export class GroupCommit {
  readonly #onBatch: (size: number) => void
  readonly #connection: Reconnecting
  readonly #listeners = new Set<() => void>()
  #queue: Pending[] = []
  #flushing: Promise<void> | null = null
  #changed = false

  constructor (connect: () => Promise<pg.Client>, onBatch: (size: number) => void = () => {}) {
    this.#connection = new Reconnecting(connect)
    this.#onBatch = onBatch
  }

  run<R> (write: Write<R>): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0 && this.#flushing === null) setImmediate(() => { this.#flushNext() })
      this.#queue.push({ write: write as Write<unknown>, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  /** Whether its connection is open or opening. */
  get connected (): boolean {
    return this.#connection.open
  }

  /**
   * Said by a write's outcome (which runs only once its transaction committed) when it wrote an event:
   * the listeners hear of it once, after the batch's writes are settled.
   */
  changed (): void {
    this.#changed = true
  }

  /** Calls `listener` after each batch in which a write said changed(); returns what unsubscribes it. */
  onCommit (listener: () => void): () => void {
    // A wrapper per subscription, so that the same function subscribed twice is unsubscribed once at a time.
    const own = () => listener()
    this.#listeners.add(own)
    return () => { this.#listeners.delete(own) }
  }

  /** Resolves once every write queued so far is settled. */
  async flush (): Promise<void> {
    while (this.#flushing !== null || this.#queue.length > 0) await (this.#flushing ?? this.#flushNext())
  }

  #flushNext (): Promise<void> {
    if (this.#flushing !== null || this.#queue.length === 0) return this.#flushing ?? Promise.resolve()
    const batch = this.#queue
    this.#queue = []
    this.#flushing = this.#commit(batch).finally(() => {
      this.#flushing = null
      // Writes that arrived while this batch was on the wire form the next one: batches grow with load.
      if (this.#queue.length > 0) this.#flushNext()
    })
    return this.#flushing
  }

  async #commit (arrived: Pending[]): Promise<void> {
    this.#onBatch(arrived.length)
    // Every node's batches lock the rows they touch in one global order, so two nodes' batches wait on
    // each other rather than deadlock (which PostgreSQL would break only after deadlock_timeout, 1 s,
    // by rolling one back). The sort is stable: writes to the same row keep their order of arrival.
    const batch = arrived.map((pending, i) => ({ pending, i, locks: pending.write.locks ?? '' }))
      .sort((p, q) => p.locks < q.locks ? -1 : p.locks > q.locks ? 1 : p.i - q.i)
      .map(({ pending }) => pending)
    let client: pg.Client
    try {
      client = await this.#connection.get()
    } catch (error) {
      for (const pending of batch) pending.reject(error)
      return
    }
    const together = await transaction(client, batch.map(p => p.write))
    if (together.committed) {
      batch.forEach(({ write, resolve, reject }, i) => { settle(write, together.results[i]!, resolve, reject) })
      this.#announce()
      return
    }
    if (together.unknown !== null) {
      for (const pending of batch) pending.reject(together.unknown)
      return
    }
    // Rolled back: each write on its own, still in one round trip.
    const alone = await Promise.all(batch.map(({ write }) => transaction(client, [write])))
    batch.forEach(({ write, resolve, reject }, i) => {
      const { committed, unknown, results, failure } = alone[i]!
      if (committed) settle(write, results[0]!, resolve, reject)
      else reject(unknown ?? write.failure(failure!))
    })
    this.#announce()
  }

  #announce (): void {
    if (!this.#changed) return
    this.#changed = false
    for (const listener of this.#listeners) listener()
  }

  async close (): Promise<void> {
    await this.flush()
    await this.#connection.end()
  }
}

function settle (write: Write<unknown>, results: StatementResult[], resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  try {
    resolve(write.outcome(results))
  } catch (error) {
    reject(error)
  }
}

interface TransactionOutcome {
  committed: boolean
  /** Each write's results, one per statement of it. */
  results: StatementResult[][]
  /** The first statement error when the transaction rolled back. */
  failure: Error | null
  /** Set when the COMMIT's fate is not known (the connection failed). */
  unknown: Error | null
}

interface Group {
  shared: SharedStatement
  /** Each write's values, in the order of `n`. */
  parts: unknown[][]
  /** Where its statement goes among the transaction's. */
  at: number
}

/**
 * The statements that run `writes` in order: a shared statement goes where its first part was, so a
 * later part runs earlier than its write's place in the batch. The writes of a batch were all
 * waiting at once, so any order of them is one they could have arrived in; only a write's own
 * statements and writes to the same row (kept in separate shared statements) must keep their order.
 */
function statementsOf (writes: Array<Write<unknown>>): { queries: pg.QueryConfig[], read: (results: pg.QueryResult[]) => StatementResult[][] } {
  const queries: Array<pg.QueryConfig | Group> = []
  const open = new Map<string, Group>()
  // Where the last statement touching each locked row went: a write joins no shared statement before it.
  const lastAt = new Map<string, number>()
  const places = writes.map(write => {
    // A write's statements keep their order too.
    let after = write.locks === undefined ? -1 : lastAt.get(write.locks) ?? -1
    return write.statements.map(statement => {
      let place: { at: number, n: number }
      if (!('shared' in statement)) {
        place = { at: queries.push(statement) - 1, n: 0 }
      } else {
        let group = open.get(statement.shared.name)
        if (group === undefined || group.at <= after) {
          group = { shared: statement.shared, parts: [], at: queries.length }
          queries.push(group)
          open.set(statement.shared.name, group)
        }
        place = { at: group.at, n: group.parts.push(statement.values) }
      }
      if (write.locks !== undefined) lastAt.set(write.locks, place.at)
      after = place.at
      return place
    })
  })
  return {
    queries: queries.map(q => 'shared' in q
      ? { name: q.shared.name, text: q.shared.text, values: q.parts[0]!.map((_, column) => q.parts.map(part => part[column])) }
      : q),
    read: results => {
      const rowByPart = new Map<number, Map<number, unknown>>()
      const partRows = (at: number, n: number): unknown[] => {
        let byPart = rowByPart.get(at)
        if (byPart === undefined) {
          rowByPart.set(at, byPart = new Map())
          for (const row of results[at]!.rows as Array<{ n: unknown }>) byPart.set(Number(row.n), row)
        }
        const row = byPart.get(n)
        return row === undefined ? [] : [row]
      }
      return places.map(statements => statements.map(({ at, n }) => {
        if (n === 0) return results[at]!
        const rows = partRows(at, n)
        return { rows, rowCount: rows.length }
      }))
    }
  }
}

/** Sends BEGIN, the writes' statements and COMMIT without waiting in between (the client pipelines them). */
async function transaction (client: pg.Client, writes: Array<Write<unknown>>): Promise<TransactionOutcome> {
  const { queries, read } = statementsOf(writes)
  const sent = [client.query('BEGIN'), ...queries.map(s => client.query(s)), client.query('COMMIT')]
  const settled: Settled[] = await Promise.allSettled(sent)
  const commit = settled.at(-1)!
  const body = settled.slice(1, -1)
  if (commit.status === 'rejected') return { committed: false, results: [], failure: null, unknown: commit.reason as Error }
  // The COMMIT of a transaction that a statement aborted answers ROLLBACK rather than an error.
  const failed = body.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed !== undefined) return { committed: false, results: [], failure: failed.reason as Error, unknown: null }
  return { committed: true, results: read(body.map(s => (s as PromiseFulfilledResult<pg.QueryResult>).value)), failure: null, unknown: null }
}
