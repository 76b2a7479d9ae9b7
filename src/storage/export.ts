// Shared by the engines' exports: rows written as CSV or NDJSON text, handed out a chunk at a time, the snapshot released exactly once.
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { csvRow } from '../formats/csv.js'
import { ndjsonWriter } from '../formats/ndjson.js'
import type { ExportFormat } from './types.js'

/**
 * Rows an export reads at a time: for books about 50 kB of CSV, encoded in about a millisecond, so
 * that memory holds a chunk or two.
 */
export const exportBatch = 500

/** Milliseconds of an export's work on the event loop (encoding rows) before other callbacks get a turn. */
export const loopSliceMs = 4

/**
 * No export may start now: the exports running hold the WAL, which has grown past its limit. Each new
 * snapshot would hold it longer, and exports that overlap one another could keep it from ever being
 * checkpointed; once those running end, it is, and exports start again.
 */
export class SnapshotsHeldError extends Error {
  override name = 'SnapshotsHeldError'
}

/** How one row (values in the order of `fields`) is written in `format`. */
export function rowWriter (format: ExportFormat, fields: readonly string[]): (row: readonly unknown[]) => string {
  return format === 'csv' ? csvRow : ndjsonWriter(fields)
}

/**
 * An export's work on the event loop, cut in slices of time rather than of rows: once `ms` have passed
 * since it last yielded (or began), it lets the callbacks waiting for the loop run before it goes on.
 * Time spent waiting (for the database, for the client) counts too, so a chunk after a wait may yield
 * once at once: one turn of the loop, never a long run.
 */
export class LoopSlice {
  readonly #ms: number
  readonly #clock: () => number
  #since: number

  constructor (ms = loopSliceMs, clock: () => number = () => performance.now()) {
    this.#ms = ms
    this.#clock = clock
    this.#since = clock()
  }

  /** `rows` written with `write`, as one text. */
  async write (rows: readonly (readonly unknown[])[], write: (row: readonly unknown[]) => string): Promise<string> {
    let text = ''
    for (const row of rows) {
      text += write(row)
      if (this.#clock() - this.#since >= this.#ms) {
        await yieldToLoop()
        this.#since = this.#clock()
      }
    }
    return text
  }
}

/**
 * RecordExport's chunks from `read` (the next chunk, or null at the end). `close` runs once: at the
 * end, on an error, or when the chunks are left, even before the first was read (a generator's
 * return() skips its `finally` until it has started, and would leave the snapshot open). A read that
 * fails is thrown at once, while the close it starts may take longer (a statement still running on a
 * thread); return() resolves once the close is done.
 */
export function exportChunks<T> (read: () => Promise<T | null>, close: () => Promise<void> | void): AsyncIterableIterator<T> {
  let closed: Promise<void> | null = null
  const end = async (): Promise<IteratorReturnResult<undefined>> => {
    closed ??= (async () => { await close() })()
    await closed
    return { done: true, value: undefined }
  }
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next () {
      if (closed !== null) return { done: true, value: undefined }
      let chunk: T | null
      try {
        chunk = await read()
      } catch (error) {
        // Whoever reads on learns of a failed close through return().
        end().catch(() => {})
        throw error
      }
      return chunk === null ? end() : { done: false, value: chunk }
    },
    return: end
  }
  return iterator
}
