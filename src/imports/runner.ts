// Writes imports' staged rows in batches, each record through its collection's store (so every record has its event), on one node at a time.
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type { ImportProblem } from '../contract/api-types.js'
import { ValueTakenError } from '../domain/outcomes.js'
import type { ImportStore, RecordStore, StoredImport } from '../storage/types.js'
import type { Collection } from './check.js'

export interface ImportRunnerOptions {
  imports: ImportStore
  stores: Record<Collection, RecordStore<unknown, object>>
  /** This node's name in the imports' leases. */
  node: string
  /** How long a lease lasts without renewal: a node that stopped hands its imports on after it. */
  leaseMs: number
  /** Rows written at a time: one batch of group commit, then the event loop is yielded. */
  batch: number
  /** How often this node looks for imports whose node stopped. */
  sweepMs: number
  clock: () => number
  onError: (error: unknown, importId: string) => void
  /** Told of an import taken up where another node (or this one before a restart) stopped. */
  onResume: (taken: StoredImport) => void
}

/** An import's rows written so far and what became of them, after a batch. */
interface BatchOutcome { written: number, refused: ImportProblem[], last: number }

export class ImportRunner {
  readonly #options: ImportRunnerOptions
  /** Imports this node is writing now, and how each one's loop ends. */
  readonly #running = new Map<string, Promise<void>>()
  #sweeper: NodeJS.Timeout | null = null
  #closed = false

  constructor (options: ImportRunnerOptions) {
    this.#options = options
  }

  /** The lease to hold from now. */
  lease (): { runner: string, until: number } {
    return { runner: this.#options.node, until: this.#options.clock() + this.#options.leaseMs }
  }

  /** Looks, now and then every sweepMs, for imports whose node stopped: it ends a cut upload as failed and takes a running import up where it stopped. */
  start (): void {
    const sweep = () => { this.sweep().catch(error => this.#options.onError(error, '')) }
    this.#sweeper = setInterval(sweep, this.#options.sweepMs).unref()
    sweep()
  }

  async sweep (): Promise<void> {
    const { imports, node, clock } = this.#options
    for (let claimed = await imports.claim(node, clock(), this.lease().until); claimed !== null && !this.#closed; claimed = await imports.claim(node, clock(), this.lease().until)) {
      if (claimed.state === 'receiving') {
        await imports.unstage(claimed.import_id)
        await imports.update(claimed.import_id, {
          state: 'failed',
          finishedAt: new Date(clock()).toISOString(),
          releaseKey: true,
          detail: `The upload was cut off after ${claimed.rows.read.toLocaleString('en-US')} rows, when the node receiving it stopped; nothing was written. Upload the file again.`
        })
      } else {
        this.#options.onResume(claimed)
        this.run(claimed.import_id)
      }
    }
  }

  /** Starts writing an import's staged rows on this node (which holds its lease), unless it already is. */
  run (importId: string): void {
    if (this.#running.has(importId) || this.#closed) return
    const done = this.#write(importId)
      .catch(error => this.#options.onError(error, importId))
      .finally(() => this.#running.delete(importId))
    this.#running.set(importId, done)
  }

  /**
   * Stops taking imports up and lets the batches being written finish, then gives their leases up: the
   * next node to look (another, or this one's restart) goes on with them at once.
   */
  async close (): Promise<void> {
    this.#closed = true
    if (this.#sweeper !== null) clearInterval(this.#sweeper)
    const stopping = [...this.#running.keys()]
    await Promise.allSettled(this.#running.values())
    await Promise.allSettled(stopping.map(id => this.#options.imports.update(id, {}, { runner: this.#options.node, until: 0 })))
  }

  async #write (importId: string): Promise<void> {
    const { imports, batch, clock } = this.#options
    for (;;) {
      const current = (await imports.get(importId))!
      if (current.state !== 'running') return
      const now = () => new Date(clock()).toISOString()
      if (current.cancel_requested) {
        await imports.unstage(importId)
        await imports.update(importId, { state: 'cancelled', finishedAt: now() }, this.lease())
        return
      }
      // A node closing leaves the rest to whoever takes the import up once its lease runs out.
      if (this.#closed) return
      const rows = await imports.staged(importId, current.writtenTo, batch)
      if (rows.length === 0) {
        await imports.unstage(importId)
        const { written, refused } = current.rows
        await imports.update(importId, { state: 'succeeded', finishedAt: now(), ...(refused > 0 && { detail: `${written.toLocaleString('en-US')} ${written === 1 ? 'row' : 'rows'} written; ${refused.toLocaleString('en-US')} refused (see problems)` }) }, this.lease())
        return
      }
      const outcome = await this.#batch(current, rows)
      await imports.update(importId, { written: outcome.written, refused: outcome.refused.length, problems: outcome.refused, writtenTo: outcome.last }, this.lease())
      // Written rows are not read again (a runner taking the import up goes on after writtenTo).
      await imports.unstage(importId, rows.map(row => row.line))
      // Other requests go first between batches.
      await yieldToLoop()
    }
  }

  /**
   * Creates each row's record; group commit writes them together. A record whose id is stored already
   * was written by this import before its node stopped (ids are fixed when rows are staged): counted
   * as written. Any other value taken meanwhile (a create that came between the check and the write) is refused.
   */
  async #batch (current: StoredImport, rows: Awaited<ReturnType<ImportStore['staged']>>): Promise<BatchOutcome> {
    const store = this.#options.stores[current.collection]
    const outcomes = await store.createMany(rows.map(row => {
      const { created_at: createdAt, updated_at: updatedAt, ...values } = JSON.parse(row.record) as Record<string, unknown> & { created_at?: string, updated_at?: string }
      return { values, given: { id: row.recordId, createdAt, updatedAt } }
    }))
    const refused: ImportProblem[] = []
    let written = 0
    for (const [i, outcome] of outcomes.entries()) {
      if (!(outcome instanceof ValueTakenError)) {
        written++
        continue
      }
      const row = rows[i]!
      if (await store.get(row.recordId) !== null) written++
      else refused.push({ line: row.line, type: '/problems/already-exists', detail: `${outcome.message}, stored while the import was being written` })
    }
    return { written, refused, last: rows.at(-1)!.line }
  }
}
