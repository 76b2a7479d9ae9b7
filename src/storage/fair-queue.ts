// Costly list pages shared fairly between callers: a queue per caller served in turn, anonymous callers as a whole a smaller share.
import { ListTimeoutError } from './list-sql.js'
import type { ListCaller } from './types.js'

/**
 * Turns keyed callers get for each turn of anonymous callers while both wait. A key is accountable
 * (it can be revoked, and its quota is five times an address's), an address is not: anonymous searches
 * get a quarter of the readers, enough for the public catalogue to stay usable, while a keyed search
 * waits for at most one anonymous page beyond the one running.
 */
export const keyedTurns = 3

/**
 * Anonymous callers together hold at most this many of `slots` (a quarter, at least one), whoever
 * waits; a keyed caller that comes finds the others free.
 */
export const anonymousSlots = (slots: number): number => Math.max(1, Math.floor(slots / (keyedTurns + 1)))

/**
 * The share of their slots' time anonymous callers may spend reading, over a second or so: a costly
 * page's work is done where everyone's is (PostgreSQL's processes, the cores a reader thread shares),
 * and a slot kept busy by bursts of anonymous searches took that much from every other request.
 * Measured on PostgreSQL sharing 2 cores (npm run bench -- --hostile, L3): with anonymous callers
 * holding 2 of 3 slots, GET one by id beside their bursts kept 46 % of its rate; 1 slot, 54-74 %;
 * 1 slot a quarter of the time, see BENCHMARKS.md.
 */
export const anonymousDuty = 0.25

/** Milliseconds of reading per anonymous slot that may be spent at once (the credit's ceiling). */
export const anonymousBurstMs = 1000

/** A caller already has as many pages waiting as one caller may: the next is refused at once, not queued. */
export class TooManyWaitingError extends Error {
  override name = 'TooManyWaitingError'
  readonly perCaller: number

  constructor (perCaller: number) {
    super(`the caller already has ${perCaller} list pages waiting`)
    this.perCaller = perCaller
  }
}

type Kind = 'keyed' | 'anonymous'
const kindOf = (caller: ListCaller): Kind => caller.anonymous ? 'anonymous' : 'keyed'

/**
 * The jobs waiting for a slot (a reader thread, a connection), one queue per caller. Each kind of
 * caller (keyed, anonymous) takes its callers in turn, one job each, first come first served within
 * a caller; between the kinds, keyed callers get `keyedTurns` turns for one anonymous turn while both
 * wait, and anonymous callers no turn while they hold anonymousSlots() slots, nor while they have spent
 * their share of the time (anonymousDuty). next() hands a job out and counts its slot taken until
 * finished() gives it back.
 */
export interface FairQueueOptions {
  slots: number
  perCaller: number
  /** Milliseconds, monotonic (tests move their own). */
  clock?: () => number
  /** Called once anonymous jobs that waited for their share of the time may be handed out: call next() again. */
  wake: () => void
}

export class FairQueue<J> {
  readonly #perCaller: number
  readonly #anonymousSlots: number
  /** Per kind, the callers with jobs waiting, in turn order: a Map keeps insertion order, so the first is next, and one served goes last. */
  readonly #waiting: Record<Kind, Map<string, J[]>> = { keyed: new Map(), anonymous: new Map() }
  readonly #running: Record<Kind, number> = { keyed: 0, anonymous: 0 }
  /** Keyed turns since the last anonymous one. */
  #keyedInARow = 0
  #size = 0
  readonly #clock: () => number
  readonly #wake: () => void
  /**
   * Milliseconds of reading anonymous callers may still start on: refilled at `anonymousDuty` of their
   * slots' time, up to `anonymousBurstMs` a slot, spent by what each of their jobs took once it ends.
   */
  #credit: number
  #creditAt: number
  readonly #refill: number
  readonly #ceiling: number
  /** When each anonymous job handed out began. */
  readonly #began = new Map<J, number>()
  #waking: NodeJS.Timeout | null = null

  constructor ({ slots, perCaller, clock = () => performance.now(), wake }: FairQueueOptions) {
    this.#perCaller = perCaller
    this.#anonymousSlots = anonymousSlots(slots)
    this.#clock = clock
    this.#wake = wake
    this.#refill = this.#anonymousSlots * anonymousDuty
    this.#ceiling = this.#anonymousSlots * anonymousBurstMs
    this.#credit = this.#ceiling
    this.#creditAt = clock()
  }

  /** The credit now, refilled for the time since it was last counted. */
  #creditNow (): number {
    const now = this.#clock()
    this.#credit = Math.min(this.#ceiling, this.#credit + (now - this.#creditAt) * this.#refill)
    this.#creditAt = now
    return this.#credit
  }

  /** Queues `job` last of its caller's; throws TooManyWaitingError, queuing nothing, when the caller has `perCaller` waiting. */
  push (caller: ListCaller, job: J): void {
    const callers = this.#waiting[kindOf(caller)]
    const jobs = callers.get(caller.id)
    if (jobs === undefined) callers.set(caller.id, [job])
    else if (jobs.length >= this.#perCaller) throw new TooManyWaitingError(this.#perCaller)
    else jobs.push(job)
    this.#size++
  }

  /** Puts back a job handed out (its slot failed it), first of its caller's and its caller first in turn, whatever the bound. */
  retry (caller: ListCaller, job: J): void {
    const kind = kindOf(caller)
    const jobs = this.#waiting[kind].get(caller.id) ?? []
    this.#waiting[kind] = new Map([[caller.id, [job, ...jobs]], ...[...this.#waiting[kind]].filter(([id]) => id !== caller.id)])
    this.#size++
  }

  /** Takes a waiting job out (its time ran out); false when it was not waiting. */
  remove (caller: ListCaller, job: J): boolean {
    const callers = this.#waiting[kindOf(caller)]
    const jobs = callers.get(caller.id)
    const at = jobs?.indexOf(job) ?? -1
    if (at === -1) return false
    jobs!.splice(at, 1)
    if (jobs!.length === 0) callers.delete(caller.id)
    this.#size--
    return true
  }

  /** The job whose turn it is, its slot counted taken; undefined when none waits, or only anonymous callers, at their share. */
  next (): { caller: ListCaller, job: J } | undefined {
    const keyed = this.#waiting.keyed.size > 0
    const anonymous = this.#waiting.anonymous.size > 0
    let anonymousRoom = anonymous && this.#running.anonymous < this.#anonymousSlots
    if (anonymousRoom && this.#creditNow() <= 0) {
      anonymousRoom = false
      // They have spent their share: told when the credit is back.
      this.#waking ??= setTimeout(() => {
        this.#waking = null
        this.#wake()
      }, Math.ceil(-this.#credit / this.#refill) + 1).unref()
    }
    if (!keyed && !anonymousRoom) return undefined
    const anonymousTurn = !keyed || (anonymousRoom && this.#keyedInARow >= keyedTurns)
    const kind: Kind = anonymousTurn ? 'anonymous' : 'keyed'
    this.#keyedInARow = anonymousTurn ? 0 : this.#keyedInARow + 1
    const callers = this.#waiting[kind]
    const [id, jobs] = callers.entries().next().value as [string, J[]]
    const job = jobs.shift()!
    // Last in turn, or gone until it queues again.
    callers.delete(id)
    if (jobs.length > 0) callers.set(id, jobs)
    this.#size--
    this.#running[kind]++
    if (anonymousTurn) this.#began.set(job, this.#clock())
    return { caller: { id, anonymous: anonymousTurn }, job }
  }

  /** The slot of `job`, which next() handed out for `caller`, is free again; an anonymous job's time is spent from the credit. */
  finished (caller: ListCaller, job: J): void {
    this.#running[kindOf(caller)]--
    const began = this.#began.get(job)
    if (began === undefined) return
    this.#began.delete(job)
    this.#credit = this.#creditNow() - (this.#clock() - began)
  }

  /** Every waiting job, taken out. */
  drain (): J[] {
    const jobs = [...this.#waiting.keyed.values(), ...this.#waiting.anonymous.values()].flat()
    this.#waiting.keyed.clear()
    this.#waiting.anonymous.clear()
    this.#size = 0
    return jobs
  }

  /** Jobs waiting. */
  get size (): number {
    return this.#size
  }
}

interface Waiter {
  start: () => void
  timer: NodeJS.Timeout
}

/**
 * Runs costly reads at most `slots` at a time, in the FairQueue's order (PostgreSQL's list pages, whose
 * statements would otherwise queue on the pipelined connections behind a burst of others). A read that
 * waits longer than `budgetMs` for its turn is refused with ListTimeoutError, as one the readers did not
 * read in time; one beyond its caller's `perCaller` waiting, with TooManyWaitingError at once.
 */
export class FairGate {
  readonly #queue: FairQueue<Waiter>
  readonly #budgetMs: number
  #free: number

  /** `clock`: milliseconds, monotonic, for the anonymous callers' share of the time (tests move their own). */
  constructor ({ slots, perCaller, budgetMs, clock }: { slots: number, perCaller: number, budgetMs: number, clock?: () => number }) {
    this.#queue = new FairQueue({ slots, perCaller, clock, wake: () => this.#dispatch() })
    this.#free = slots
    this.#budgetMs = budgetMs
  }

  async run<T> (caller: ListCaller, read: () => Promise<T>): Promise<T> {
    // Set by the promise's executor, which runs at once.
    let waiter!: Waiter
    await new Promise<void>((resolve, reject) => {
      waiter = {
        start: () => {
          clearTimeout(waiter.timer)
          resolve()
        },
        timer: setTimeout(() => {
          this.#queue.remove(caller, waiter)
          reject(new ListTimeoutError(this.#budgetMs))
        }, this.#budgetMs)
      }
      try {
        this.#queue.push(caller, waiter)
      } catch (error) {
        clearTimeout(waiter.timer)
        throw error
      }
      this.#dispatch()
    })
    try {
      return await read()
    } finally {
      this.#queue.finished(caller, waiter)
      this.#free++
      this.#dispatch()
    }
  }

  /** Slots free now (for tests and metrics). */
  get free (): number {
    return this.#free
  }

  /** Reads waiting for a slot. */
  get waiting (): number {
    return this.#queue.size
  }

  #dispatch (): void {
    while (this.#free > 0) {
      const turn = this.#queue.next()
      if (turn === undefined) return
      this.#free--
      turn.job.start()
    }
  }
}
