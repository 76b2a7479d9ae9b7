// Shared by the engines' exports: rows handed out in batches, and the snapshot released exactly once.
import type { RecordExport } from './types.js'

/**
 * Rows an export hands out at a time: for books about 50 kB of CSV, encoded in about a millisecond, so
 * that other requests get the event loop between batches and memory holds a batch or two.
 */
export const exportBatch = 500

/**
 * RecordExport's batches from `read` (the next batch, or null at the end). `close` runs once: at the
 * end, on an error, or when the batches are left, even before the first was read (a generator's
 * return() skips its `finally` until it has started, and would leave the snapshot open).
 */
export function exportBatches (read: () => Promise<unknown[][] | null>, close: () => Promise<void> | void): RecordExport['batches'] {
  let closed = false
  const end = async (): Promise<IteratorReturnResult<undefined>> => {
    if (!closed) {
      closed = true
      await close()
    }
    return { done: true, value: undefined }
  }
  const iterator: AsyncIterableIterator<unknown[][]> = {
    [Symbol.asyncIterator]: () => iterator,
    async next () {
      if (closed) return { done: true, value: undefined }
      let rows: unknown[][] | null
      try {
        rows = await read()
      } catch (error) {
        await end()
        throw error
      }
      return rows === null ? end() : { done: false, value: rows }
    },
    return: end
  }
  return iterator
}
