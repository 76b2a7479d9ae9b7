// The PostgreSQL change feed: the events the record tables write with their changes, read in (xid, seq) order below every open transaction.
import type { EventFeed, EventLane, EventPage, PositionState } from '../types.js'
import type { PipelinedClients } from './connection.js'
import type { GroupCommit } from './group-commit.js'

/** Rows one read looks at, at most, however many of them its types leave out. */
export const readScan = 2000
/** Events one prune deletes, at most, so that it never holds locks for long. */
export const pruneBatch = 10_000

// Sequence values are drawn at insert and commit in any order, so a reader only looks at transactions
// older than the oldest one still running: those have all ended, and nothing can commit before a
// position it already read (the commit-order gap, research A3). A long transaction delays the feed.
const gate = 'pg_snapshot_xmin(pg_current_snapshot())'

// The greatest position a reader can see now: the last gated event's, or the last pruned one's.
export const head = `SELECT xid, seq FROM (
    (SELECT xid, seq FROM events WHERE xid < ${gate} ORDER BY xid DESC, seq DESC LIMIT 1)
    UNION ALL SELECT xid, seq FROM events_pruned
  ) AS candidates ORDER BY xid DESC, seq DESC LIMIT 1`

// Canonical base 36, no leading zeros: one text per position. Thirteen digits hold any 64-bit value.
const positionPattern = /^([0-9a-z]{8})-(0|[1-9a-z][0-9a-z]{0,12})-(0|[1-9a-z][0-9a-z]{0,12})$/
const maxXid = 2n ** 64n - 1n
const maxSeq = 2n ** 63n - 1n

interface Position { xid: bigint, seq: bigint }

function fromBase36 (digits: string): bigint {
  let value = 0n
  for (const digit of digits) value = value * 36n + BigInt(parseInt(digit, 36))
  return value
}

/** Rows hold xid8 and bigint as decimal text (pg parses neither into a number). */
export interface PositionRow { xid: string, seq: string }

export class PostgresEventFeed implements EventFeed {
  readonly #reads: PipelinedClients
  readonly #writes: GroupCommit
  readonly #feedId: string

  /** `feedId`: this database's, so that a position from another database (or a restore) is told apart. */
  constructor (reads: PipelinedClients, writes: GroupCommit, feedId: string) {
    this.#reads = reads
    this.#writes = writes
    this.#feedId = feedId
  }

  async head (): Promise<string> {
    const { rows } = await this.#reads.query<PositionRow>({ name: 'events-head', text: head })
    return this.#position(rows[0]!)
  }

  async oldest (): Promise<string> {
    const { rows } = await this.#reads.query<PositionRow>({ name: 'events-oldest', text: 'SELECT xid, seq FROM events_pruned' })
    return this.#position(rows[0]!)
  }

  async check (position: string): Promise<PositionState> {
    const match = positionPattern.exec(position)
    // Another engine's or database's position (its feed id differs) names events this feed never had.
    if (match === null) return /^[0-9a-z]+(-[0-9a-z]+)+$/.test(position) && !position.startsWith(`${this.#feedId}-`) ? 'gone' : 'invalid'
    const xid = fromBase36(match[2]!)
    const seq = fromBase36(match[3]!)
    if (xid > maxXid || seq > maxSeq) return 'invalid'
    if (match[1] !== this.#feedId) return 'gone'
    // Before the last pruned event, events after it are gone; beyond the head, it was never issued here.
    const { rows } = await this.#reads.query<{ pruned: boolean, beyond: boolean }>({
      name: 'events-check',
      text: `SELECT ($1::xid8, $2::bigint) < (p.xid, p.seq) AS pruned, ($1::xid8, $2::bigint) > (h.xid, h.seq) AS beyond
        FROM events_pruned AS p, (${head}) AS h`,
      values: [xid.toString(), seq.toString()]
    })
    const { pruned, beyond } = rows[0]!
    return pruned || beyond ? 'gone' : 'current'
  }

  /**
   * One statement, so one snapshot: the rows scanned, the events picked from them and the head all agree.
   * The last row answered is where the scan ended (or, when it found nothing, the head).
   */
  async read (after: string, types: readonly string[], limit: number, lane?: EventLane): Promise<EventPage> {
    const from = this.#parse(after)
    const { rows } = await this.#reads.query<PositionRow & { type: string | null, envelope: string | null, bounded: boolean | null }>({
      name: 'events-read',
      text: `WITH scanned AS MATERIALIZED (
          SELECT xid, seq, type, envelope, imported FROM events
          WHERE (xid, seq) > ($1::xid8, $2::bigint) AND xid < ${gate}
          ORDER BY xid, seq LIMIT ${readScan}
        ), picked AS (
          SELECT xid, seq, type, envelope FROM scanned WHERE type = ANY($3::text[]) AND ($5::boolean IS NULL OR imported = $5)
          ORDER BY xid, seq LIMIT $4
        ), last AS (
          SELECT xid, seq FROM scanned ORDER BY xid DESC, seq DESC LIMIT 1
        ), ended AS (
          SELECT xid, seq FROM last UNION ALL SELECT xid, seq FROM (${head}) AS h WHERE NOT EXISTS (SELECT 1 FROM last)
        )
        SELECT xid, seq, type, envelope, bounded FROM (
          SELECT 0 AS part, xid, seq, type, envelope, NULL AS bounded FROM picked
          UNION ALL SELECT 1, xid, seq, NULL, NULL, (SELECT count(*) FROM scanned) = ${readScan} FROM ended
        ) AS answer ORDER BY part, xid, seq`,
      values: [from.xid.toString(), from.seq.toString(), types, limit, lane === undefined ? null : lane === 'imported']
    })
    // The last row is where the scan ended, and whether it stopped at its bound rather than the head.
    const ended = rows.pop()!
    const events = rows.map(row => ({ position: this.#position(row), type: row.type!, envelope: row.envelope! }))
    const full = events.length === limit
    return { events, next: full ? events.at(-1)!.position : this.#position(ended), more: full || ended.bounded! }
  }

  /**
   * Deletes the oldest gated events up to the first one not older than `before`, and moves the
   * watermark to the last deleted in the same statement: the feed only ever loses a prefix, so a
   * position is gone exactly when it is before the watermark. Positions are never drawn again (the
   * sequence goes on, and xids only grow). The guard keeps a slower prune on another node from moving it back.
   */
  async prune (before: number): Promise<number> {
    const { rows } = await this.#reads.query<{ deleted: number }>({
      name: 'events-prune',
      text: `WITH candidates AS MATERIALIZED (
          SELECT xid, seq, time FROM events WHERE xid < ${gate} ORDER BY xid, seq LIMIT ${pruneBatch}
        ), stop AS (
          SELECT xid, seq FROM candidates WHERE time >= $1::timestamptz ORDER BY xid, seq LIMIT 1
        ), deleted AS (
          DELETE FROM events AS e USING candidates AS c
          WHERE e.xid = c.xid AND e.seq = c.seq AND (NOT EXISTS (SELECT 1 FROM stop) OR (c.xid, c.seq) < (SELECT xid, seq FROM stop))
          RETURNING e.xid, e.seq
        ), marked AS (
          UPDATE events_pruned AS p SET xid = d.xid, seq = d.seq
          FROM (SELECT xid, seq FROM deleted ORDER BY xid DESC, seq DESC LIMIT 1) AS d
          WHERE (p.xid, p.seq) < (d.xid, d.seq)
          RETURNING 1
        )
        SELECT count(*)::int AS deleted FROM deleted`,
      values: [new Date(before).toISOString()]
    })
    return rows[0]!.deleted
  }

  onCommit (listener: () => void): () => void {
    return this.#writes.onCommit(listener)
  }

  /** The position of a row of the head statement, read by a list with its page. */
  positionOf (row: PositionRow): string {
    return this.#position(row)
  }

  #position (row: PositionRow): string {
    return `${this.#feedId}-${BigInt(row.xid).toString(36)}-${BigInt(row.seq).toString(36)}`
  }

  /** A position read() is given, which its caller checked 'current'. */
  #parse (position: string): Position {
    const [, xid, seq] = position.split('-') as [string, string, string]
    return { xid: fromBase36(xid), seq: fromBase36(seq) }
  }
}
