// Connections to PostgreSQL: their settings, and a few long-lived pipelined clients shared by every request.
import pg from 'pg'
import { maskPassword } from '../../config/index.js'

export interface PostgresSettings {
  url: string
  /** Pipelined connections for reads and single-statement writes (PG_POOL_MAX). */
  connections: number
  connectTimeout: number
  statementTimeout: number
}

/** Options for every connection this service opens: bounded waits, so a stuck server or lock never stalls a node for ever. */
export function clientOptions ({ url, connectTimeout, statementTimeout }: PostgresSettings, pipeline: boolean, reads = false): pg.ClientConfig {
  return {
    // Every read the service makes has an index built for it, and a list's reads are bounded only
    // through their indexes: a planner that guesses a search matches often enough to stop early in a
    // sequential scan reads the whole table when it matches nothing (test/list-query.postgres.test.ts).
    // enable_seqscan=off prices a sequential scan at 10^10, so a plan with one (events_pruned, one row
    // and no index) passes jit_above_cost and PostgreSQL compiled the feed's head and read statements
    // on every run: 12–20 ms each instead of 0.04 ms (docs/benchmarks-history.md, the change feed). JIT never pays
    // off for this service's short statements. Timestamps come as ISO text in UTC, which lists turn
    // into the service's form in JavaScript (isoFromPostgres): to_char() per row cost a page some 20 µs.
    ...(reads && { options: '-c enable_seqscan=off -c jit=off -c TimeZone=UTC -c DateStyle=ISO' }),
    connectionString: url,
    connectionTimeoutMillis: connectTimeout,
    statement_timeout: statementTimeout,
    // A write waiting on another's row (the same idempotency key, the same record) gives up well before
    // its statement would, so the client hears 409 "still being handled" rather than a timeout.
    lock_timeout: Math.max(100, Math.floor(statementTimeout / 2)),
    // A node cut off mid-transaction (network partition) releases its locks instead of holding them.
    idle_in_transaction_session_timeout: Math.max(1000, statementTimeout * 2),
    keepAlive: true,
    application_name: 'books-students-api',
    pipeline
  }
}

/** The cause of a failed connection in one line, the URL's password masked; never a stack. */
export function connectionFailure (url: string, error: Error): string {
  const code = (error as { code?: string }).code
  return `cannot connect to PostgreSQL at DATABASE_URL=${maskPassword(url)}: ${error.message}${code !== undefined && !error.message.includes(code) ? ` (${code})` : ''}`
}

/** Opens one connection, or throws an Error whose message is connectionFailure()'s line. */
export async function connect (settings: PostgresSettings, pipeline: boolean, reads = false): Promise<pg.Client> {
  const client = new pg.Client(clientOptions(settings, pipeline, reads))
  try {
    await client.connect()
  } catch (error) {
    // The socket may still be half-open after a timeout; ending it lets the process exit.
    client.end().catch(() => {})
    throw new Error(connectionFailure(settings.url, error as Error))
  }
  return client
}

/** One connection, opened on first use and again after it breaks or fails to open. */
export class Reconnecting {
  readonly #open: () => Promise<pg.Client>
  #client: Promise<pg.Client> | null = null

  constructor (open: () => Promise<pg.Client>) {
    this.#open = open
  }

  get (): Promise<pg.Client> {
    if (this.#client === null) {
      const opening = this.#open().then(client => {
        // The statements in flight on it fail; the next use opens a new connection.
        const forget = () => { if (this.#client === opening) this.#client = null }
        client.on('error', forget)
        client.on('end', forget)
        return client
      })
      // A failed connect is not kept: the next use tries again.
      opening.catch(() => { if (this.#client === opening) this.#client = null })
      this.#client = opening
    }
    return this.#client
  }

  /** Whether the connection is open or opening. */
  get open (): boolean {
    return this.#client !== null
  }

  /** Ends the connection once the statements already sent are answered (pg's end() waits for them). */
  async end (): Promise<void> {
    const client = this.#client
    this.#client = null
    await client?.then(c => c.end(), () => {})
  }
}

/**
 * A fixed set of pipelined connections used in turn: many requests' statements share one round trip
 * (pg's opt-in pipelining, each statement with its own Sync, so one's error never touches another's).
 * A connection that breaks is replaced on next use; the requests on it at the time fail (a 500).
 */
export class PipelinedClients {
  readonly #connections: Reconnecting[]
  /** Per connection, the costly statements sent on it that await their answer. */
  readonly #costly: number[]
  /** Per connection, whether its socket is corked until the loop's check phase (see #coalesce). */
  readonly #corked: boolean[]
  #next = 0
  #closed = false
  #inFlight = 0

  constructor (settings: PostgresSettings) {
    this.#connections = Array.from({ length: settings.connections }, () => new Reconnecting(() => connect(settings, true, true)))
    this.#costly = this.#connections.map(() => 0)
    this.#corked = this.#connections.map(() => false)
  }

  /** Connects the first client, so that a start against an unreachable server fails at once. */
  async open (): Promise<void> {
    await this.#client(0)
  }

  /**
   * Sends `query` on the next connection in turn among those with the fewest costly statements awaiting
   * their answer (`costly`: a statement of a list page that is more than a seek). A statement pipelined
   * behind a costly one waits for it: a read by id goes where none is, and costly pages, of which
   * fewer run at once than there are connections (FairGate), leave one connection free of them.
   */
  async query<R extends pg.QueryResultRow> (query: pg.QueryConfig, costly = false): Promise<pg.QueryResult<R>> {
    const slot = this.#pick()
    if (costly) this.#costly[slot]!++
    try {
      const client = await this.#client(slot)
      this.#coalesce(slot, client)
      this.#inFlight++
      try {
        return await client.query<R>(query)
      } finally {
        this.#inFlight--
      }
    } finally {
      if (costly) this.#costly[slot]!--
    }
  }

  /**
   * The statements sent on a connection in one turn of the event loop leave in one write: each write
   * to the socket is a system call that, on a local server, also delivers the bytes and wakes the
   * backend, and pg writes each statement on its own. The socket is uncorked in the check phase,
   * after the poll phase's requests (setImmediate), so no statement waits for another turn.
   */
  #coalesce (slot: number, client: pg.Client): void {
    if (this.#corked[slot]!) return
    const socket = client.connection.stream
    this.#corked[slot] = true
    socket.cork()
    setImmediate(() => {
      this.#corked[slot] = false
      socket.uncork()
    })
  }

  /** The next connection in turn, passing over those with more costly statements in flight than another. */
  #pick (): number {
    const count = this.#connections.length
    let best = this.#next
    for (let i = 1; i < count && this.#costly[best]! > 0; i++) {
      const slot = (this.#next + i) % count
      if (this.#costly[slot]! < this.#costly[best]!) best = slot
    }
    this.#next = (best + 1) % count
    return best
  }

  /** Connections open and statements awaiting their answer, for metrics. */
  usage (): { open: number, max: number, inFlight: number } {
    return { open: this.#connections.filter(connection => connection.open).length, max: this.#connections.length, inFlight: this.#inFlight }
  }

  #client (slot: number): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('the database connections are closed'))
    return this.#connections[slot]!.get()
  }

  async close (): Promise<void> {
    this.#closed = true
    await Promise.allSettled(this.#connections.map(connection => connection.end()))
  }
}
