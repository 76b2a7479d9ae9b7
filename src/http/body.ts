// A request's body as it arrives: joined into what each turn of the event loop brings, its pieces counted.
import type { Readable } from 'node:stream'
import { finished } from 'node:stream'
import { setImmediate } from 'node:timers/promises'

/**
 * Counts the pieces a request's body arrives in (an HTTP chunk, or what one read of the socket holds of
 * it: a chunk two reads cut in two is two pieces). Node's HTTP parser hands each one to the request's
 * push(), and spends about 2 µs on each whatever reads it, so that a client choosing pieces of 20 bytes
 * costs the server a hundred times what its bytes do. Returns a function that stops counting.
 */
function countPieces (body: Readable, counted: () => void): () => void {
  const push = body.push
  body.push = function (...args: Parameters<Readable['push']>) {
    // null is the body's end, not a piece.
    if (args[0] !== null) counted()
    return push.apply(this, args)
  }
  return () => { body.push = push }
}

/** Bytes of a chunk arriving() hands on at most. */
const handedOn = 1 << 16

/**
 * The body's bytes as they arrive, joined, each with the pieces it came in. Node hands a body on one
 * piece at a time and runs what awaits it after each one (the stream's own async iterator included):
 * a client sending its file in chunks of 20 bytes cost a pass of every reader per 20 bytes, 5 µs each.
 * What arrives before the event loop's next turn (one read of the socket, however many chunks it
 * holds) is handed on here as one buffer. A failed upload (the client went away) fails the read; the
 * body is not destroyed when the read stops early (a limit, a header refused), so that the answer can
 * still be sent.
 */
export async function * arriving (body: Readable): AsyncGenerator<{ chunk: Buffer, pieces: number }> {
  // Undefined while the body goes on; null once it has ended; else why it failed.
  let settled: Error | null | undefined
  let wake = (): void => {}
  const stopWatching = finished(body, { writable: false }, error => {
    settled = error ?? null
    wake()
  })
  const readable = (): void => { wake() }
  body.on('readable', readable)
  let pieces = 0
  const stopCounting = countPieces(body, () => { pieces++ })
  try {
    for (;;) {
      const parts: Buffer[] = []
      for (let part = body.read() as Buffer | null; part !== null; part = body.read() as Buffer | null) parts.push(part)
      if (parts.length > 0) {
        const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts)
        // Handed on at most 64 KiB at a time: text read from a larger buffer lives long enough to be
        // collected as old garbage (reading 100,000 CSV rows joined in 1 MiB took twice the CPU).
        for (let at = 0; at < joined.length; at += handedOn) {
          const arrived = { chunk: joined.subarray(at, at + handedOn), pieces }
          pieces = 0
          yield arrived
        }
        continue
      }
      if (settled === null) return
      if (settled !== undefined) throw settled
      await new Promise<void>(resolve => { wake = resolve })
      // The rest of what this read of the socket holds comes before the loop's next turn.
      await setImmediate()
    }
  } finally {
    stopCounting()
    body.off('readable', readable)
    stopWatching()
  }
}
