// PostgreSQL webhook endpoints and their pending deliveries: every change is one statement, so no
// transaction stays open between round trips (an open one would hold back the feed for every reader).
import { claimedDelivery, type ClaimedRow, EndpointCapError, storedEndpoint, type WebhookEndpointRow } from '../webhook-rows.js'
import type { EndpointOwner, WebhookRepository } from '../types.js'
import type { PipelinedClients } from './connection.js'
import { isoTimestamp } from './table.js'

const columns = (alias: string) => `${alias}.endpoint_id, ${alias}.url, ${alias}.types, ${alias}.description, ${alias}.key_id, ${alias}.secret,
  ${alias}.previous_secret, ${alias}.previous_secret_expires_at, ${alias}.status, ${alias}.disabled_reason, ${alias}.failing_since,
  ${isoTimestamp(`${alias}.created_at`)} AS created_at, ${alias}.position, ${alias}.imported_position`

/** An owner of null (parameter `$n`) reaches every endpoint (an admin key, the worker); a key's id, only those it registered. */
const owned = (n: number) => `($${n}::text IS NULL OR e.key_id = $${n})`

export class PostgresWebhooks implements WebhookRepository {
  readonly #db: PipelinedClients
  /** The registration this node is sending, which the next waits for. */
  #creating: Promise<unknown> = Promise.resolve()

  constructor (db: PipelinedClients) {
    this.#db = db
  }

  async #one (text: string, values: unknown[]) {
    const { rows } = await this.#db.query<WebhookEndpointRow>({ text, values })
    return rows[0] === undefined ? null : storedEndpoint(rows[0])
  }

  /**
   * The caps are checked in the inserting statement itself, and this node sends one such statement at a
   * time: its pipelined connections would otherwise run a burst side by side, each counting before the
   * others inserted, and one key could take far more than its cap. Registrations on several nodes at
   * the same instant may still pass a cap by one each, which the caps (guards against runaway
   * registration, and against one key taking every endpoint) tolerate.
   */
  async create (endpoint: Parameters<WebhookRepository['create']>[0], max: number, perKey?: number) {
    const created = this.#creating.then(async () => this.#insert(endpoint, max, perKey))
    this.#creating = created.catch(() => {})
    return created
  }

  async #insert (endpoint: Parameters<WebhookRepository['create']>[0], max: number, perKey: number | undefined) {
    const { rows: [row] } = await this.#db.query<Partial<WebhookEndpointRow> & { held: number }>({
      text: `WITH counted AS (SELECT count(*) FILTER (WHERE key_id = $5)::int AS held, count(*)::int AS every FROM webhook_endpoints),
      inserted AS (
        INSERT INTO webhook_endpoints AS e (endpoint_id, url, types, description, key_id, secret, status, created_at, position, imported_position)
        SELECT $1, $2, $3, $4, $5, $6, 'enabled', $7, $8, $8 FROM counted WHERE counted.every < $9 AND ($10::int IS NULL OR counted.held < $10)
        RETURNING ${columns('e')}
      )
      SELECT counted.held, inserted.* FROM counted LEFT JOIN inserted ON true`,
      values: [endpoint.endpointId, endpoint.url, endpoint.types.join(' '), endpoint.description, endpoint.keyId, endpoint.secret, endpoint.createdAt, endpoint.position, max, perKey ?? null]
    })
    const { held, ...stored } = row!
    if (stored.endpoint_id !== null) return storedEndpoint(stored as WebhookEndpointRow)
    throw new EndpointCapError(perKey !== undefined && held >= perKey ? 'key' : 'deployment', held)
  }

  async list (owner: EndpointOwner) {
    const { rows } = await this.#db.query<WebhookEndpointRow>({
      text: `SELECT ${columns('e')} FROM webhook_endpoints e WHERE ${owned(1)} ORDER BY e.created_at, e.endpoint_id`,
      values: [owner]
    })
    return rows.map(storedEndpoint)
  }

  async get (endpointId: string, owner: EndpointOwner) {
    return this.#one(`SELECT ${columns('e')} FROM webhook_endpoints e WHERE e.endpoint_id = $1 AND ${owned(2)}`, [endpointId, owner])
  }

  async delete (endpointId: string, owner: EndpointOwner) {
    const { rowCount } = await this.#db.query({ text: `DELETE FROM webhook_endpoints e WHERE e.endpoint_id = $1 AND ${owned(2)}`, values: [endpointId, owner] })
    return rowCount === 1
  }

  async rotate (endpointId: string, owner: EndpointOwner, secret: string, previousExpiresAt: number) {
    return this.#one(`UPDATE webhook_endpoints e SET previous_secret = e.secret, secret = $3, previous_secret_expires_at = $4
      WHERE e.endpoint_id = $1 AND ${owned(2)} RETURNING ${columns('e')}`, [endpointId, owner, secret, previousExpiresAt])
  }

  async enable (endpointId: string, owner: EndpointOwner, position: string) {
    return this.#one(`UPDATE webhook_endpoints e SET status = 'enabled', disabled_reason = NULL, failing_since = NULL, position = $3, imported_position = $3
      WHERE e.endpoint_id = $1 AND ${owned(2)} RETURNING ${columns('e')}`, [endpointId, owner, position])
  }

  /**
   * Moving the cursor and queueing are one statement: a node whose fan-out raced another's finds the
   * cursor moved (the UPDATE re-checks it once the other commits) and queues nothing. Two nodes may
   * together take a lane past `max` by a page: the bound is against a backlog growing without end.
   */
  async enqueue ({ endpointId, lane, from, to, events, now, max }: Parameters<WebhookRepository['enqueue']>[0]) {
    const cursor = lane === 'imported' ? 'imported_position' : 'position'
    const { rows } = await this.#db.query<{ moved: number }>({
      name: `webhooks-enqueue-${lane}`,
      text: `WITH moved AS (
          UPDATE webhook_endpoints SET ${cursor} = $3 WHERE endpoint_id = $1 AND ${cursor} = $2 AND status = 'enabled'
            AND (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND imported = $7) < $8
          RETURNING endpoint_id),
        queued AS (
          INSERT INTO webhook_deliveries (endpoint_id, position, body, next_attempt_at, imported)
          SELECT moved.endpoint_id, v.position, v.body, $6, $7 FROM moved, unnest($4::text[], $5::text[]) AS v (position, body)
          ON CONFLICT (endpoint_id, position) DO NOTHING)
        SELECT count(*)::int AS moved FROM moved`,
      values: [endpointId, from, to, events.map(e => e.position), events.map(e => e.body), now, lane === 'imported', max]
    })
    return rows[0]!.moved === 1
  }

  /**
   * Each lane (an endpoint's live or imported deliveries) offers its oldest due, up to `limit`, locked
   * as read; the first of every lane go before any lane's second. SKIP LOCKED lets racing nodes take
   * different deliveries; one that read a row before another's claim committed re-checks the lease on
   * the row's newest version, so each attempt is made by one node.
   */
  async claim (now: number, leaseUntil: number, limit: number) {
    const { rows } = await this.#db.query<ClaimedRow>({
      name: 'webhooks-claim',
      text: `WITH offered AS (
          SELECT o.delivery_id, o.next_attempt_at, o.turn
          FROM webhook_endpoints e CROSS JOIN (VALUES (false), (true)) AS lane (imported)
          CROSS JOIN LATERAL (
            SELECT q.delivery_id, q.next_attempt_at, row_number() OVER (ORDER BY q.next_attempt_at, q.delivery_id) AS turn FROM (
              SELECT d.delivery_id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.endpoint_id = e.endpoint_id AND d.imported = lane.imported
                AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)
              ORDER BY d.next_attempt_at, d.delivery_id LIMIT $3 FOR UPDATE SKIP LOCKED) AS q
          ) AS o
          WHERE e.status = 'enabled'
        ), due AS (
          SELECT delivery_id FROM offered ORDER BY turn, next_attempt_at, delivery_id LIMIT $3)
        UPDATE webhook_deliveries d SET lease_until = $2, attempts = d.attempts + 1
        FROM due, webhook_endpoints e WHERE d.delivery_id = due.delivery_id AND e.endpoint_id = d.endpoint_id
        RETURNING ${columns('e')}, d.delivery_id, d.position AS delivery_position, d.body, d.attempts`,
      values: [now, leaseUntil, limit]
    })
    return rows.map(claimedDelivery)
  }

  async succeeded (delivery: { deliveryId: string, endpoint: { endpointId: string } }) {
    await this.#db.query({
      text: `WITH done AS (DELETE FROM webhook_deliveries WHERE delivery_id = $1)
        UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = $2 AND failing_since IS NOT NULL`,
      values: [delivery.deliveryId, delivery.endpoint.endpointId]
    })
  }

  async failed (delivery: { deliveryId: string, endpoint: { endpointId: string } }, outcome: { status: number | null, error: string, nextAttemptAt: number, now: number }) {
    const { rowCount } = await this.#db.query({
      text: `WITH retry AS (
          UPDATE webhook_deliveries SET next_attempt_at = $3, lease_until = NULL, last_status = $4, last_error = $5 WHERE delivery_id = $1)
        UPDATE webhook_endpoints SET failing_since = $6 WHERE endpoint_id = $2 AND failing_since IS NULL`,
      values: [delivery.deliveryId, delivery.endpoint.endpointId, outcome.nextAttemptAt, outcome.status, outcome.error, outcome.now]
    })
    // Only the failure that found the endpoint not failing sets failing_since: it began the run.
    return rowCount === 1
  }

  async disable (endpointId: string, reason: string) {
    const { rowCount } = await this.#db.query({
      text: `WITH dropped AS (DELETE FROM webhook_deliveries WHERE endpoint_id = $1)
        UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2 WHERE endpoint_id = $1 AND status = 'enabled'`,
      values: [endpointId, reason]
    })
    return rowCount === 1
  }
}
