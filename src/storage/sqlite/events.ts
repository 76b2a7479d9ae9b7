// The SQLite change feed: events in AUTOINCREMENT order, which is commit order, since SQLite has one writer at a time.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import type { EventFeed, EventLane, EventPage, PositionState, StoredEvent } from '../types.js'

/** Rows one read may scan past, matching or not: reads stay bounded whatever a filter leaves out. */
export const scanLimit = 2000
/** Events one prune deletes, so that it never holds the write lock for long. */
const pruneBatch = 5000

type EventRow = [seq: number, type: string, envelope: string | null]

/** Writes the events of changes; called inside the change's transaction. */
export interface EventWriter {
  append (type: string, envelope: string, time: string, lane: EventLane): void
}

const headSql = 'SELECT max(pruned_to, coalesce((SELECT max(seq) FROM events), 0)) FROM feed'

export class SqliteEventFeed implements EventFeed, EventWriter {
  readonly #feedId: string
  readonly #prefix: string
  readonly #insert: Statement<[string, string, string, number]>
  readonly #scan: Statement<[{ after: number, types: string, scan: number, lanes: string }], EventRow>
  readonly #head: Statement<[], number>
  readonly #prunedTo: Statement<[], number>
  readonly #issued: Statement<[], number | null>
  readonly #pruneCandidates: Statement<[number], [number, string]>
  readonly #prune: (before: string) => number
  readonly #listeners = new Set<() => void>()
  /** Whether the batch being written appended events: a batch of refused writes wakes no stream. */
  #appended = false

  constructor (db: Database.Database) {
    this.#feedId = db.prepare<[], string>('SELECT feed_id FROM feed').pluck().get()!
    this.#prefix = `${this.#feedId}-`
    this.#insert = db.prepare('INSERT INTO events (type, envelope, time, imported) VALUES (?, ?, ?, ?)')
    // The envelope is read only for the types and lanes wanted: `,type,` within the comma-joined list,
    // `imported` (0 or 1) within the lanes' digits.
    this.#scan = db.prepare<[{ after: number, types: string, scan: number, lanes: string }], EventRow>(`SELECT seq, type,
      CASE WHEN instr(@types, ',' || type || ',') > 0 AND instr(@lanes, imported) > 0 THEN envelope END
      FROM events WHERE seq > @after ORDER BY seq LIMIT @scan`).raw()
    // Every list page reads it (Events-Cursor): one statement.
    this.#head = db.prepare<[], number>(headSql).pluck()
    this.#prunedTo = db.prepare<[], number>('SELECT pruned_to FROM feed').pluck()
    // sqlite_sequence keeps the greatest seq ever issued, even once its event is pruned.
    this.#issued = db.prepare<[], number | null>("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck()
    this.#pruneCandidates = db.prepare<[number], [number, string]>(`SELECT seq, time FROM events WHERE seq > ? ORDER BY seq LIMIT ${pruneBatch}`).raw()
    const deleteUpTo = db.prepare('DELETE FROM events WHERE seq <= ?')
    const markPruned = db.prepare('UPDATE feed SET pruned_to = ?')
    this.#prune = db.transaction((before: string) => {
      // A prefix of the order is pruned, so that every event after the mark is still kept.
      let last = 0
      for (const [seq, time] of this.#pruneCandidates.iterate(this.#prunedTo.get()!)) {
        if (time >= before) break
        last = seq
      }
      if (last === 0) return 0
      markPruned.run(last)
      return deleteUpTo.run(last).changes
    })
  }

  #position (seq: number): string {
    return this.#prefix + seq.toString(36)
  }

  /** The seq of one of this feed's positions; null for anything else. */
  #seqOf (position: string): number | null {
    if (!position.startsWith(this.#prefix)) return null
    const digits = position.slice(this.#prefix.length)
    return /^[0-9a-z]{1,11}$/.test(digits) ? parseInt(digits, 36) : null
  }

  append (type: string, envelope: string, time: string, lane: EventLane): void {
    this.#insert.run(type, envelope, time, lane === 'imported' ? 1 : 0)
    this.#appended = true
  }

  /** Called once a batch committed: tells the streams of this process when it held events. */
  committed (): void {
    if (!this.#appended) return
    this.#appended = false
    for (const listener of this.#listeners) listener()
  }

  /** The head as `connection` (another connection to this database, in a read transaction) sees it. */
  headIn (connection: Database.Database): string {
    return this.#position(connection.prepare<[], number>(headSql).pluck().get()!)
  }

  async head (): Promise<string> {
    return this.#position(this.#head.get()!)
  }

  async oldest (): Promise<string> {
    return this.#position(this.#prunedTo.get()!)
  }

  async check (position: string): Promise<PositionState> {
    const seq = this.#seqOf(position)
    // Another database's position (another deployment, or one this file was restored over) names events this feed never had.
    if (seq === null) return /^[0-9a-z]+-[0-9a-z-]+$/.test(position) && !position.startsWith(this.#prefix) ? 'gone' : 'invalid'
    return seq < this.#prunedTo.get()! || seq > (this.#issued.get() ?? 0) ? 'gone' : 'current'
  }

  async read (after: string, types: readonly string[], limit: number, lane?: EventLane): Promise<EventPage> {
    const lanes = lane === undefined ? '01' : lane === 'imported' ? '1' : '0'
    const from = this.#seqOf(after)!
    const events: StoredEvent[] = []
    let last = from
    let scanned = 0
    // One statement, so one snapshot: nothing another process commits meanwhile falls between two reads.
    for (const [seq, type, envelope] of this.#scan.iterate({ after: from, types: `,${types.join(',')},`, scan: scanLimit, lanes })) {
      last = seq
      scanned++
      if (envelope === null) continue
      events.push({ position: this.#position(seq), type, envelope })
      if (events.length === limit) break
    }
    return { events, next: this.#position(last), more: events.length === limit || scanned === scanLimit }
  }

  async prune (before: number): Promise<number> {
    return this.#prune(new Date(before).toISOString())
  }

  onCommit (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}
