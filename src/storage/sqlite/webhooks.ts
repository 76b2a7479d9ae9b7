// SQLite webhook endpoints and their pending deliveries; every change is one short transaction.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { claimedDelivery, type ClaimedRow, EndpointCapError, storedEndpoint, type WebhookEndpointRow } from '../webhook-rows.js'
import { type EndpointOwner, type EventLane, eventLanes, type WebhookRepository } from '../types.js'

export function sqliteWebhooks (db: Database.Database): WebhookRepository {
  const count = db.prepare<[], number>('SELECT count(*) FROM webhook_endpoints').pluck()
  const countOwned = db.prepare<[string], number>('SELECT count(*) FROM webhook_endpoints WHERE key_id = ?').pluck()
  const insert = db.prepare(`INSERT INTO webhook_endpoints (endpoint_id, url, types, description, key_id, secret, status, created_at, position, imported_position)
    VALUES (@endpoint_id, @url, @types, @description, @key_id, @secret, 'enabled', @created_at, @position, @imported_position)`)
  // An owner of null reaches every endpoint (an admin key, the worker); a key's id, only those it registered.
  const owned = '(@owner IS NULL OR key_id = @owner)'
  type Owned = { id: string, owner: EndpointOwner }
  const get = db.prepare<[Owned], WebhookEndpointRow>(`SELECT * FROM webhook_endpoints WHERE endpoint_id = @id AND ${owned}`)
  const list = db.prepare<[{ owner: EndpointOwner }], WebhookEndpointRow>(`SELECT * FROM webhook_endpoints WHERE ${owned} ORDER BY created_at, endpoint_id`)
  const remove = db.prepare<[Owned]>(`DELETE FROM webhook_endpoints WHERE endpoint_id = @id AND ${owned}`)
  const rotate = db.prepare<[Owned & { secret: string, expires: number }]>(
    `UPDATE webhook_endpoints SET previous_secret = secret, secret = @secret, previous_secret_expires_at = @expires WHERE endpoint_id = @id AND ${owned}`)
  const enable = db.prepare<[Owned & { position: string }]>(
    `UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, failing_since = NULL, position = @position, imported_position = @position
    WHERE endpoint_id = @id AND ${owned}`)
  const cursor = { live: 'position', imported: 'imported_position' } as const
  const move = Object.fromEntries(eventLanes.map(lane => [lane, db.prepare<[string, string, string]>(
    `UPDATE webhook_endpoints SET ${cursor[lane]} = ? WHERE endpoint_id = ? AND ${cursor[lane]} = ? AND status = 'enabled'`)])) as Record<EventLane, Statement<[string, string, string]>>
  const queued = db.prepare<[string, number], number>('SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND imported = ?').pluck()
  const queue = db.prepare<[string, string, string, number, number]>(
    'INSERT INTO webhook_deliveries (endpoint_id, position, body, next_attempt_at, imported) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING')
  // Each lane offers its oldest due (up to the limit, read down its index), numbered oldest first; the
  // first of every lane go before any lane's second. CROSS JOIN keeps SQLite's join order: lanes outside,
  // so that a lane's subquery runs once, not once per queued delivery.
  const due = db.prepare<{ now: number, limit: number }, ClaimedRow>(`
    SELECT * FROM (
      SELECT e.*, d.delivery_id, d.position AS delivery_position, d.body, d.attempts + 1 AS attempts, d.next_attempt_at,
        row_number() OVER (PARTITION BY d.endpoint_id, d.imported ORDER BY d.next_attempt_at, d.delivery_id) AS turn
      FROM webhook_endpoints e CROSS JOIN (SELECT 0 AS imported UNION ALL SELECT 1) AS lane
      CROSS JOIN webhook_deliveries d ON d.delivery_id IN (
        SELECT delivery_id FROM webhook_deliveries
        WHERE endpoint_id = e.endpoint_id AND imported = lane.imported AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
        ORDER BY next_attempt_at, delivery_id LIMIT @limit)
      WHERE e.status = 'enabled'
    ) ORDER BY turn, next_attempt_at, delivery_id LIMIT @limit`)
  const lease = db.prepare<[number, number | string]>('UPDATE webhook_deliveries SET lease_until = ?, attempts = attempts + 1 WHERE delivery_id = ?')
  const done = db.prepare<[string]>('DELETE FROM webhook_deliveries WHERE delivery_id = ?')
  const recovered = db.prepare<[string]>('UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = ?')
  const retry = db.prepare<[number, number | null, string, string]>(
    'UPDATE webhook_deliveries SET next_attempt_at = ?, lease_until = NULL, last_status = ?, last_error = ? WHERE delivery_id = ?')
  const failing = db.prepare<[number, string]>('UPDATE webhook_endpoints SET failing_since = ? WHERE endpoint_id = ? AND failing_since IS NULL')
  const disable = db.prepare<[string, string]>("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ? WHERE endpoint_id = ? AND status = 'enabled'")
  const drop = db.prepare<[string]>('DELETE FROM webhook_deliveries WHERE endpoint_id = ?')

  const find = (id: string, owner: EndpointOwner) => {
    const row = get.get({ id, owner })
    return row === undefined ? null : storedEndpoint(row)
  }
  // In one write transaction: registrations at the same instant cannot pass either cap.
  const create = db.transaction((row: WebhookEndpointRow, max: number, perKey: number) => {
    const held = countOwned.get(row.key_id)!
    if (held >= perKey) throw new EndpointCapError('key', held)
    if (count.get()! >= max) throw new EndpointCapError('deployment', held)
    insert.run(row)
  })
  const enqueue = db.transaction(({ endpointId, lane, from, to, events, now, max }: Parameters<WebhookRepository['enqueue']>[0]) => {
    const imported = lane === 'imported' ? 1 : 0
    if (queued.get(endpointId, imported)! >= max || move[lane].run(to, endpointId, from).changes === 0) return false
    for (const event of events) queue.run(endpointId, event.position, event.body, now, imported)
    return true
  })
  const claim = db.transaction((now: number, leaseUntil: number, limit: number) => {
    const rows = due.all({ now, limit })
    for (const row of rows) lease.run(leaseUntil, row.delivery_id)
    return rows
  })
  const succeeded = db.transaction((deliveryId: string, endpointId: string) => {
    done.run(deliveryId)
    recovered.run(endpointId)
  })
  const failed = db.transaction((deliveryId: string, endpointId: string, status: number | null, error: string, nextAttemptAt: number, now: number) => {
    retry.run(nextAttemptAt, status, error, deliveryId)
    return failing.run(now, endpointId).changes > 0
  })
  const disabled = db.transaction((endpointId: string, reason: string) => {
    drop.run(endpointId)
    return disable.run(reason, endpointId).changes > 0
  })

  return {
    async create (endpoint, max, perKey = Infinity) {
      const row: WebhookEndpointRow = {
        endpoint_id: endpoint.endpointId,
        url: endpoint.url,
        types: endpoint.types.join(' '),
        description: endpoint.description,
        key_id: endpoint.keyId,
        secret: endpoint.secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        status: 'enabled',
        disabled_reason: null,
        failing_since: null,
        created_at: endpoint.createdAt,
        position: endpoint.position,
        imported_position: endpoint.position
      }
      create.immediate(row, max, perKey)
      return storedEndpoint(row)
    },
    async list (owner) {
      return list.all({ owner }).map(storedEndpoint)
    },
    async get (id, owner) {
      return find(id, owner)
    },
    async delete (id, owner) {
      return remove.run({ id, owner }).changes > 0
    },
    async rotate (id, owner, secret, expires) {
      rotate.run({ id, owner, secret, expires })
      return find(id, owner)
    },
    async enable (id, owner, position) {
      enable.run({ id, owner, position })
      return find(id, owner)
    },
    async enqueue (queue) {
      return enqueue.immediate(queue)
    },
    async claim (now, leaseUntil, limit) {
      return claim.immediate(now, leaseUntil, limit).map(claimedDelivery)
    },
    async succeeded (delivery) {
      succeeded.immediate(delivery.deliveryId, delivery.endpoint.endpointId)
    },
    async failed (delivery, { status, error, nextAttemptAt, now }) {
      return failed.immediate(delivery.deliveryId, delivery.endpoint.endpointId, status, error, nextAttemptAt, now)
    },
    async disable (endpointId, reason) {
      return disabled.immediate(endpointId, reason)
    }
  }
}
