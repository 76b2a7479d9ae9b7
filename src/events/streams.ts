// Live event streams (Server-Sent Events) of this process: each pulls pages from the feed at its own client's pace.
import { Readable } from 'node:stream'
import { eventJson } from '../storage/events.js'
import type { ApiKeyRepository, EventFeed } from '../storage/types.js'

export interface StreamSettings {
  /** Milliseconds between heartbeat comments; each also re-checks the caller's key (a revocation ends its streams before, once heard of). */
  heartbeat: number
  /** Milliseconds a client may leave written frames unread before its stream is cut off. */
  stall: number
  /** Milliseconds a stream lasts at most. */
  maxAge: number
  /** Streams one key may hold open at once. */
  perKey: number
  /** Milliseconds between looks for events that other processes or nodes committed. */
  poll: number
}

/** Who a stream is for and what it sends. */
export interface StreamRequest {
  keyId: string
  types: readonly string[]
  /** The position to send the events after (already checked). */
  after: string
  /** Resolves false once the caller's key is revoked: the stream then ends. */
  stillAuthorised: () => Promise<boolean>
  /** Told of a read the feed failed (the stream then ends; its client resumes). */
  onError: (error: Error) => void
}

/** Why a stream ended, for the metrics. */
export type StreamEnd = 'client' | 'stalled' | 'max-age' | 'revoked' | 'shutdown' | 'error'

// What a client's EventSource waits before reconnecting.
const retryMs = 3000
// Events per read: a frame is some 400 bytes, so a page fits a socket's buffers.
const pageSize = 200

export class EventStreams {
  readonly #feed: EventFeed
  readonly #keys: Pick<ApiKeyRepository, 'onRevoked'>
  readonly #settings: StreamSettings
  readonly #open = new Set<FeedStream>()
  /** Streams ended so far, by why (for the metrics, read when scraped). */
  readonly ended = new Map<StreamEnd, number>()
  readonly #perKey = new Map<string, number>()
  /** Streams at the head, waiting for something to read. */
  readonly #waiting = new Set<() => void>()
  #unsubscribe: (() => void) | null = null
  #stopHearingRevocations: (() => void) | null = null
  #poller: NodeJS.Timeout | null = null
  #lastHead: string | null = null
  #wakeQueued = false
  /** Counts the wake-ups, so that a stream that was reading when one came reads again rather than wait. */
  #wakes = 0

  /** `keys` tells of revocations, so that a revoked key's streams end at once rather than at their next heartbeat. */
  constructor (feed: EventFeed, keys: Pick<ApiKeyRepository, 'onRevoked'>, settings: StreamSettings) {
    this.#feed = feed
    this.#keys = keys
    this.#settings = settings
  }

  get size (): number {
    return this.#open.size
  }

  get perKey (): number {
    return this.#settings.perKey
  }

  /** Whether the key may open one more stream. */
  admits (keyId: string): boolean {
    return (this.#perKey.get(keyId) ?? 0) < this.#settings.perKey
  }

  /** Starts a stream; its body is the reply's payload. */
  open (request: StreamRequest): Readable {
    const stream = new FeedStream(this.#feed, this.#settings, request, {
      wakes: () => this.#wakes,
      wait: wake => this.#wait(wake),
      ended: reason => this.#ended(stream, request.keyId, reason)
    })
    this.#open.add(stream)
    this.#perKey.set(request.keyId, (this.#perKey.get(request.keyId) ?? 0) + 1)
    if (this.#open.size === 1) this.#watch()
    stream.start()
    return stream.body
  }

  /** Ends every open stream (the server is shutting down): each client sees a clean end and resumes elsewhere. */
  closeAll (): void {
    for (const stream of this.#open) stream.end('shutdown')
  }

  #ended (stream: FeedStream, keyId: string, reason: StreamEnd): void {
    this.#open.delete(stream)
    const left = this.#perKey.get(keyId)! - 1
    if (left === 0) this.#perKey.delete(keyId)
    else this.#perKey.set(keyId, left)
    if (this.#open.size === 0) this.#unwatch()
    this.ended.set(reason, (this.ended.get(reason) ?? 0) + 1)
  }

  #wait (wake: () => void): () => void {
    this.#waiting.add(wake)
    return () => this.#waiting.delete(wake)
  }

  /** Wakes the waiting streams once per turn, however many batches committed in it. */
  #wakeAll = (): void => {
    if (this.#wakeQueued) return
    this.#wakeQueued = true
    setImmediate(() => {
      this.#wakeQueued = false
      this.#wakes++
      const waiting = [...this.#waiting]
      this.#waiting.clear()
      for (const wake of waiting) wake()
    })
  }

  // This process's commits wake the streams at once; other writers' are found by one look at the head
  // per poll for all streams, not one read per stream.
  #watch (): void {
    this.#stopHearingRevocations = this.#keys.onRevoked(keyId => {
      for (const stream of this.#open) if (stream.keyId === keyId) stream.end('revoked')
    })
    this.#unsubscribe = this.#feed.onCommit(this.#wakeAll)
    this.#poller = setInterval(() => {
      // A failed look wakes the streams too: each then reads, and ends on the error its read meets.
      this.#feed.head().catch(() => null).then(head => {
        if (head === null || head !== this.#lastHead) {
          this.#lastHead = head
          this.#wakeAll()
        }
      })
    }, this.#settings.poll)
  }

  #unwatch (): void {
    this.#stopHearingRevocations!()
    this.#unsubscribe!()
    clearInterval(this.#poller!)
    this.#lastHead = null
  }
}

interface Coordinator {
  /** How many wake-ups there have been so far. */
  wakes: () => number
  /** Registers a stream at the head; returns how to take it back. */
  wait: (wake: () => void) => () => void
  ended: (reason: StreamEnd) => void
}

/** One client's stream: read a page, write its frames, wait for the client to take them, repeat; at the head, wait for news. */
class FeedStream {
  readonly body: Readable
  readonly #feed: EventFeed
  readonly #settings: StreamSettings
  readonly #request: StreamRequest
  readonly #coordinator: Coordinator
  #cursor: string
  /** The position the client last heard of (an event's id, or a bookmark). */
  #told: string
  #ended = false
  /** Resolves the current wait (for the client to read, or for news). */
  #resume: (() => void) | null = null
  readonly #timers: NodeJS.Timeout[] = []

  get keyId (): string {
    return this.#request.keyId
  }

  constructor (feed: EventFeed, settings: StreamSettings, request: StreamRequest, coordinator: Coordinator) {
    this.#feed = feed
    this.#settings = settings
    this.#request = request
    this.#coordinator = coordinator
    this.#cursor = this.#told = request.after
    this.body = new Readable({
      read: () => this.#wakeUp(),
      // Fastify destroys the payload when the client goes away.
      destroy: (error, done) => {
        this.end('client')
        done(error)
      }
    })
  }

  start (): void {
    this.body.push(`retry: ${retryMs}\n\n`)
    this.#timers.push(
      setInterval(() => { this.#heartbeat() }, this.#settings.heartbeat),
      setTimeout(() => this.end('max-age'), this.#settings.maxAge)
    )
    this.#run().catch((error: Error) => {
      this.#request.onError(error)
      this.end('error')
    })
  }

  end (reason: StreamEnd): void {
    if (this.#ended) return
    this.#ended = true
    for (const timer of this.#timers) clearTimeout(timer)
    this.#wakeUp()
    // A clean end of the body for the reasons the server chose; a client that left is already gone.
    if (reason === 'stalled') this.body.destroy()
    else if (reason !== 'client') this.body.push(null)
    this.#coordinator.ended(reason)
  }

  #wakeUp (): void {
    const resume = this.#resume
    this.#resume = null
    resume?.()
  }

  async #run (): Promise<void> {
    while (!this.#ended) {
      const wakes = this.#coordinator.wakes()
      const page = await this.#feed.read(this.#cursor, this.#request.types, pageSize)
      if (this.#ended) return
      this.#cursor = page.next
      if (page.events.length > 0) {
        this.#told = page.next
        // One data line per event: JSON text never holds a raw line break, so no value can start a field.
        const frames = page.events.map(({ position, type, envelope }) => `id: ${position}\nevent: ${type}\ndata: ${eventJson(position, envelope)}\n\n`)
        if (!this.body.push(frames.join('')) && !await this.#drained()) return
      }
      // A read that stopped short of the head, or news that came while reading (which it may not have seen): read on at once.
      if (page.more || wakes !== this.#coordinator.wakes()) continue
      await this.#news()
    }
  }

  /** Waits for the client to take what was written; false (and the stream cut off) when it does not in time. */
  async #drained (): Promise<boolean> {
    let stalled = false
    const timer = setTimeout(() => {
      stalled = true
      this.#wakeUp()
    }, this.#settings.stall)
    await new Promise<void>(resolve => { this.#resume = resolve })
    clearTimeout(timer)
    if (stalled) this.end('stalled')
    return !this.#ended
  }

  async #news (): Promise<void> {
    await new Promise<void>(resolve => {
      const cancel = this.#coordinator.wait(resolve)
      this.#resume = () => {
        cancel()
        resolve()
      }
    })
  }

  #heartbeat (): void {
    // Past events this stream leaves out: an id-only frame moves the client's Last-Event-ID without an event.
    const bookmark = this.#cursor !== this.#told ? `id: ${this.#cursor}\n\n` : ''
    this.#told = this.#cursor
    this.body.push(`${bookmark}: heartbeat\n\n`)
    // A key that cannot be checked (the database is away) cannot be trusted either: the client resumes later.
    this.#request.stillAuthorised().then(authorised => { if (!authorised) this.end('revoked') }, (error: Error) => {
      this.#request.onError(error)
      this.end('error')
    })
  }
}
