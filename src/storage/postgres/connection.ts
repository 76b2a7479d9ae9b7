// Connections to PostgreSQL: their settings, and a few long-lived pipelined clients shared by every request.
import pg from 'pg'
import { maskPassword } from '../../config.js'

export interface PostgresSettings {
  url: string
  /** Pipelined connections for reads and single-statement writes (PG_POOL_MAX). */
  connections: number
  connectTimeout: number
  statementTimeout: number
}

/** Options for every connection this service opens: bounded waits, so a stuck server or lock never stalls a node for ever. */
export function clientOptions ({ url, connectTimeout, statementTimeout }: PostgresSettings, pipeline: boolean): pg.ClientConfig {
  return {
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
export async function connect (settings: PostgresSettings, pipeline: boolean): Promise<pg.Client> {
  const client = new pg.Client(clientOptions(settings, pipeline))
  try {
    await client.connect()
  } catch (error) {
    // The socket may still be half-open after a timeout; ending it lets the process exit.
    client.end().catch(() => {})
    throw new Error(connectionFailure(settings.url, error as Error))
  }
  return client
}

/**
 * A fixed set of pipelined connections used in turn: many requests' statements share one round trip
 * (pg's opt-in pipelining, each statement with its own Sync, so one's error never touches another's).
 * A connection that breaks is replaced on next use; the requests on it at the time fail (a 500).
 */
export class PipelinedClients {
  readonly #settings: PostgresSettings
  readonly #slots: (Promise<pg.Client> | null)[]
  #next = 0
  #closed = false

  constructor (settings: PostgresSettings) {
    this.#settings = settings
    this.#slots = Array.from({ length: settings.connections }, () => null)
  }

  /** Connects the first client, so that a start against an unreachable server fails at once. */
  async open (): Promise<void> {
    await this.#client(0)
  }

  async query<R extends pg.QueryResultRow> (query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    const slot = this.#next
    this.#next = (slot + 1) % this.#slots.length
    const client = await this.#client(slot)
    return client.query<R>(query)
  }

  #client (slot: number): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('the database connections are closed'))
    const existing = this.#slots[slot]
    if (existing != null) return existing
    const opening = connect(this.#settings, true).then(client => {
      // The statements in flight on it fail; the next query opens a new connection.
      const forget = () => { if (this.#slots[slot] === opening) this.#slots[slot] = null }
      client.on('error', forget)
      client.on('end', forget)
      return client
    })
    this.#slots[slot] = opening
    // A failed connect is not kept: the next query tries again.
    opening.catch(() => { if (this.#slots[slot] === opening) this.#slots[slot] = null })
    return opening
  }

  async close (): Promise<void> {
    this.#closed = true
    const slots = this.#slots.splice(0, this.#slots.length, ...this.#slots.map(() => null))
    // end() waits for the statements already sent, so requests in flight still get their answers.
    await Promise.allSettled(slots.map(slot => slot?.then(client => client.end())))
  }
}
