// A Server-Sent Events client for tests: parses frames as the HTML standard says, and can stop reading to stall.
import { type IncomingMessage, request } from 'node:http'

/** One dispatched frame: the fields the standard's parser would hand an EventSource. */
export interface Frame {
  id: string | undefined
  event: string | undefined
  data: string | undefined
  retry: number | undefined
  comment: boolean
}

export interface SseConnection {
  status: number
  headers: IncomingMessage['headers']
  /** Frames received so far (comments included), in order. */
  frames: Frame[]
  /** The last id the stream set (what EventSource would send as Last-Event-ID). */
  lastEventId (): string | undefined
  /**
   * Resolves with the frames received once `until` holds for them; rejects after `timeout` ms (30 s by default: on
   * PostgreSQL other test files' transactions can hold a commit back a while, see feed-contract.ts's settled()).
   */
  waitFor (until: (frames: Frame[]) => boolean, timeout?: number): Promise<Frame[]>
  /** Resolves once the server ends the response (or the connection breaks). */
  ended: Promise<'end' | 'error'>
  /** Stops reading from the socket (a stalled consumer): it then notices nothing, not even the server closing it. */
  pause (): void
  /** Reads again what the socket holds. */
  resume (): void
  close (): void
  /** The body, for a response that is not a stream (a problem). */
  body (): Promise<string>
}

/** `keepData: false` keeps each event's frame but not its data (a test that counts 20,000 of them). */
export async function openStream (url: string, headers: Record<string, string>, { keepData = true } = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, res => {
      const frames: Frame[] = []
      const waiters = new Set<() => void>()
      let buffer = ''
      let lastId: string | undefined
      let raw = ''
      let current: Frame = { id: undefined, event: undefined, data: undefined, retry: undefined, comment: false }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        // Enough for a problem body; a stream's text is in its frames.
        if (raw.length < 65_536) raw += chunk
        buffer += chunk
        let newline: number
        while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
          if (line === '') {
            if (current.id !== undefined) lastId = current.id
            frames.push(current)
            current = { id: undefined, event: undefined, data: undefined, retry: undefined, comment: false }
            continue
          }
          if (line.startsWith(':')) {
            current.comment = true
            continue
          }
          const colon = line.indexOf(':')
          const field = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'id') current.id = value
          else if (field === 'event') current.event = value
          else if (field === 'data') current.data = !keepData ? '' : current.data === undefined ? value : `${current.data}\n${value}`
          else if (field === 'retry') current.retry = Number(value)
        }
        for (const waiter of waiters) waiter()
      })
      const ended = endOf(res)
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        frames,
        lastEventId: () => lastId,
        waitFor: async (until, timeout = 30_000) => waitUntil(() => until(frames) ? frames : null, waiters, timeout, () => `${frames.length} frames`),
        ended,
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
        body: async () => {
          await ended
          return raw
        }
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** How a response ends: whole, or cut off. */
async function endOf (res: IncomingMessage): Promise<'end' | 'error'> {
  return new Promise(resolve => {
    res.on('end', () => resolve('end'))
    res.on('error', () => resolve('error'))
    res.on('close', () => resolve(res.complete ? 'end' : 'error'))
  })
}

/** Resolves with `value()` once it is not null, checked now and whenever a waiter is called; rejects after `timeout`. */
async function waitUntil<T> (value: () => T | null, waiters: Set<() => void>, timeout: number, state: () => string): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = value()
      if (found === null) return
      waiters.delete(check)
      clearTimeout(timer)
      resolve(found)
    }
    const timer = setTimeout(() => {
      waiters.delete(check)
      reject(new Error(`timed out after ${timeout} ms with ${state()}`))
    }, timeout)
    waiters.add(check)
    check()
  })
}

/** The event frames among `frames` (those carrying data). */
export const eventsOf = (frames: Frame[]) => frames.filter(f => f.data !== undefined)
