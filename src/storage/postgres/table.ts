// One PostgreSQL record table (books or students): each write one conditional statement, group-committed.
import { uuidv7 } from 'uuidv7'
import { IdempotencyKeyBusyError, IdempotencyKeyTakenError, RevisionNotCurrentError, ValueTakenError } from '../../domain/outcomes.js'
import pg from 'pg'
import { type SearchQuery, type SearchScope, toTsquery } from '../../domain/search/query.js'
import { type ListDialect, type ListLimits, ListStatements, ListTimeoutError, type SqlValue } from '../list-sql.js'
import { derivedColumns, type TableSpec } from '../tables.js'
import { type EventLane, type ExpectedRevisions, type ExportOptions, type GivenIdentity, type IdempotencyEntry, type ListCaller, type ListedPage, type ListQuery, type RecordExport, serviceCaller, type Versioned } from '../types.js'
import type { FairGate } from '../fair-queue.js'
import { exportBatch, exportChunks, LoopSlice, rowWriter } from '../export.js'
import { eventEnvelope, type EventType } from '../events.js'
import type { GroupCommit, SharedStatement } from './group-commit.js'
import type { PipelinedClients } from './connection.js'
import { head, type PositionRow, type PostgresEventFeed } from './events.js'

type Row = Record<string, unknown>

/** The SQL type of every column a record is written to. */
export type ColumnTypes<V> = Record<keyof V | 'created_at' | 'updated_at', string> & Record<string, string>

/** A timestamptz in the ISO form the service writes (`2026-11-23T19:20:00.000Z`), formatted by PostgreSQL. */
export const isoTimestamp = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const weights = ['A', 'B', 'C', 'D']

/**
 * An envelope cut where only the write's statement knows what goes: after `"revision":` (written as 0
 * here) and, for a replace, inside `"created_at":""`. Both markers are found where JSON structure puts
 * them: inside a string value every quote is escaped, so no text a client sent can imitate them.
 */
function envelopeParts (envelope: string, withCreatedAt: boolean): string[] {
  const revision = envelope.indexOf('"revision":0,') + '"revision":'.length
  if (!withCreatedAt) return [envelope.slice(0, revision), envelope.slice(revision + 1)]
  const createdAt = envelope.indexOf('"created_at":""', revision) + '"created_at":"'.length
  return [envelope.slice(0, revision), envelope.slice(revision + 1, createdAt), envelope.slice(createdAt)]
}

function postgresDialect (spec: TableSpec<object>): ListDialect {
  const { table, idColumn } = spec
  const searched = spec.list.searched
  const searchWeights = weights.slice(0, searched.length)
  // A GIN index on tsv cannot tell a title's word from an author's (it ignores weights): each scope of
  // several fields also asks its field's own index (migration 9) for the rows it can be among.
  const fieldWords = (alias: string, field: number) => `search_words(${alias}.${searched[field]!}, '${searchWeights[field]!}')`
  const tsquery = (add: (value: SqlValue) => string, text: string) => `${add(text)}::tsquery`
  // One row's test needs no index: its weighted vector tells a title's words from an author's (and
  // search_words, PL/pgSQL, would cost a call per row walked).
  const rowMatches = (alias: string, search: SearchQuery, scope: SearchScope, add: (value: SqlValue) => string): string =>
    `${alias}.tsv @@ ${tsquery(add, toTsquery(search, searchWeights, scope))}`
  const found = (alias: string, search: SearchQuery, scope: SearchScope, add: (value: SqlValue) => string): string => {
    const all = rowMatches(alias, search, scope, add)
    if (scope === 'all' || searched.length === 1) return all
    const sought = { clauses: search.clauses.filter(clause => !clause.exclude) }
    // In the title: every clause; elsewhere: at least one clause in another field (the author).
    const among = scope === 'first' ? toTsquery(sought, ['A']) : toTsquery({ clauses: [{ exclude: false, any: sought.clauses.flatMap(clause => clause.any) }] }, ['A'])
    const fields = scope === 'first' ? [0] : searched.slice(1).map((_, i) => i + 1)
    const candidates = fields.map(field => `${fieldWords(alias, field)} @@ ${tsquery(add, among)}`)
    return `${candidates.length === 1 ? candidates[0]! : `(${candidates.join(' OR ')})`} AND ${all}`
  }
  return {
    placeholder: n => `$${n}`,
    // Timestamps as PostgreSQL's text, turned into the service's form by PostgresTable.list.
    record: alias => [idColumn, ...Object.keys(spec.writable), 'created_at', 'updated_at'].map(c => `${alias}.${c}`).join(', '),
    matches: (search, scope, add, where, tail) => `SELECT seq FROM ${table} s
      WHERE ${[found('s', search, scope, add), ...where('seq')].join(' AND ')}${tail === undefined ? '' : ` ${tail('seq')}`}`,
    rowMatches,
    streamsMatches: false,
    equalsIgnoringCase: (column, values) => `lower(${column}) IN (${values.map(v => `lower(${v})`).join(', ')})`,
    seq: value => value
  }
}

/**
 * A timestamptz as a read connection writes it (ISO, UTC: `2026-11-23 19:20:00.1+00`) in the service's
 * form (`2026-11-23T19:20:00.100Z`). The service stores milliseconds, so no digit is lost.
 */
function isoFromPostgres (text: string): string {
  const fraction = text.length > 22 ? text.slice(20, -3) : ''
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(3, '0').slice(0, 3)}Z`
}

// List rows keep timestamps as PostgreSQL's text: a sort key goes back into the next page's query as it came.
const listTypes = { getTypeParser: (oid: number, format?: string) => oid === pg.types.builtins.TIMESTAMPTZ ? (value: string) => value : pg.types.getTypeParser(oid, format as 'text') }

/** Expected revisions as an array's text: a shared statement's parameter holds one value per write. */
const revisionsText = (expected: ExpectedRevisions) => expected === null ? null : `{${expected.join(',')}}`

// SQLSTATEs a write expects: another row holds a unique value; a lock wait ran out. And a list: a statement ran out of time.
const uniqueViolation = '23505'
const lockNotAvailable = '55P03'
const queryCanceled = '57014'

export class PostgresTable<T, V extends object> {
  readonly #spec: TableSpec<V>
  readonly #reads: PipelinedClients
  readonly #writes: GroupCommit
  readonly #writable: string[]
  readonly #columns: string[]
  readonly #select: string
  readonly #listing: ListStatements
  readonly #listBudgetMs: number
  readonly #listGate: FairGate | null
  readonly #connect: () => Promise<pg.Client>
  readonly #derived: string[]
  readonly #feed: PostgresEventFeed
  readonly #statementNames = new Map<string, string>()
  /** Where created_at and updated_at are in a list row. */
  readonly #timestamps: Set<number>
  readonly #get: string
  /** Each kind of write's statement, which the writes of a batch share. */
  readonly #shared: Record<'insert' | 'insertImported' | 'insertKeyed' | 'forgetKey' | 'replace' | 'remove', SharedStatement>

  /**
   * `types`: each column's SQL type, for parameters PostgreSQL cannot type from their place (INSERT …
   * SELECT). `lists.budgetMs`: the statement timeout, after which a list statement is cancelled (or
   * half of it, waiting for a lock), and the request answers ListTimeoutError, as a SQLite reader's does.
   * `lists.connect`: opens the connection of an export, which holds its snapshot (not pipelined).
   * `lists.gate`: the turns of the list pages that are more than a seek, shared by the node's tables
   * (without one, each page is read at once).
   */
  constructor (spec: TableSpec<V>, types: ColumnTypes<V>, reads: PipelinedClients, writes: GroupCommit, feed: PostgresEventFeed,
    lists: { limits: ListLimits, budgetMs: number, connect: () => Promise<pg.Client>, gate?: FairGate }) {
    this.#spec = spec
    this.#feed = feed
    this.#reads = reads
    this.#writes = writes
    const { table, idColumn } = spec
    const writable = this.#writable = Object.keys(spec.writable)
    const derived = this.#derived = Object.keys(spec.derived)
    const record = [idColumn, ...writable, 'created_at', 'updated_at']
    this.#listing = new ListStatements(table, spec.list, postgresDialect(spec as unknown as TableSpec<object>), lists.limits, record.length)
    this.#listBudgetMs = lists.budgetMs
    this.#listGate = lists.gate ?? null
    this.#connect = lists.connect
    const all = this.#columns = [...record, ...derived]
    this.#timestamps = new Set([all.indexOf('created_at'), all.indexOf('updated_at')])
    this.#select = [idColumn, ...writable].join(', ') + `, ${isoTimestamp('created_at')} AS created_at, ${isoTimestamp('updated_at')} AS updated_at`
    // A value another row holds, as the unique index sees it (lower() where it ignores case).
    const unique = spec.unique as string[]
    const foldsCase = (c: string) => (spec.uniqueIgnoringCase as string[]).includes(c)
    const sameValue = (c: string, stored: string, given: string) =>
      foldsCase(c) ? `lower(${stored}.${c}) = lower(${given}.${c})` : `${stored}.${c} = ${given}.${c}`
    const typeOf = { ...Object.fromEntries(derived.map(c => [c, 'text'])), ...types } as Record<string, string>
    // A shared statement's rows: each parameter an array of one type, unnested side by side.
    const input = (columns: Array<[string, string]>) => `input AS (
          SELECT * FROM unnest(${columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')}) WITH ORDINALITY
            AS i(${columns.map(([name]) => name).join(', ')}, n)
        )`
    const typed = (columns: string[]) => columns.map(c => [c, typeOf[c]!] as [string, string])
    // An idempotency entry's columns, named apart from the record's (a student has a status too).
    const keyColumns = ['scope', 'key', 'fingerprint', 'status', 'headers', 'body', 'expires_at']
    const keyTypes: Array<[string, string]> = [...['text', 'text', 'text', 'integer', 'text', 'text', 'bigint'].map((type, i) => [`entry_${keyColumns[i]!}`, type] as [string, string]), ['entry_now', 'bigint']]
    const eventTypes: Array<[string, string]> = [['event_type', 'text'], ['event_envelope', 'text'], ['event_time', 'timestamptz']]
    // The record rows `from` lets through; ON CONFLICT DO NOTHING: a taken unique value (held by a
    // stored row, or an earlier row of the batch) writes no row instead of aborting the batch. Each
    // write's event goes in with it, and in the rows' order; a write that changes nothing (a duplicate,
    // a stale revision, a taken key) inserts no event.
    const recordAndEvent = (from: string, imported = false) => `record AS (
          INSERT INTO ${table} (${all.join(', ')}) SELECT ${all.join(', ')} FROM ${from} ORDER BY n ON CONFLICT DO NOTHING RETURNING ${idColumn}
        ), event AS (
          INSERT INTO events (type, envelope, time, imported) SELECT event_type, event_envelope, event_time, ${imported} FROM input
          WHERE ${idColumn} IN (SELECT ${idColumn} FROM record) ORDER BY n
        )`
    const isTaken = (row: string) => unique.length === 0
      ? 'false'
      : `EXISTS (SELECT 1 FROM ${table} r WHERE r.${idColumn} <> ${row}.${idColumn} AND (${unique.map(c => sameValue(c, 'r', row)).join(' OR ')}))`
    const changed = [...writable, ...derived]
    // Replaces and deletes lock their rows first, in the rows' order (the batch's lock order; the sort
    // comes before the lock), so `current` is each row's latest revision: of racing writers with the
    // same expected revision, one gets the lock, and the others find its revision and fail the check.
    const locked = `current AS (
          SELECT i.n, r.revision FROM input i JOIN ${table} r ON r.${idColumn} = i.${idColumn} ORDER BY i.n FOR UPDATE OF r
        )`
    const matchesExpected = '(i.expected IS NULL OR r.revision = ANY(i.expected::int[]))'
    this.#shared = {
      insert: {
        name: `${table}-insert`,
        text: `WITH ${input([...typed(all), ...eventTypes])}, ${recordAndEvent('input')}
        SELECT n FROM input WHERE ${idColumn} IN (SELECT ${idColumn} FROM record)`
      },
      // An import's creates: their events go on the imported lane.
      insertImported: {
        name: `${table}-insert-imported`,
        text: `WITH ${input([...typed(all), ...eventTypes])}, ${recordAndEvent('input', true)}
        SELECT n FROM input WHERE ${idColumn} IN (SELECT ${idColumn} FROM record)`
      },
      // The key is claimed first and the record written only if the claim held, so the same key sent to
      // several nodes at once creates one record. An expired entry is taken over; a live one is left alone.
      insertKeyed: {
        name: `${table}-insert-keyed`,
        text: `WITH ${input([...keyTypes, ...typed(all), ...eventTypes])},
        claim AS (
          INSERT INTO idempotency_keys (${keyColumns.join(', ')}) SELECT ${keyColumns.map(c => `entry_${c}`).join(', ')} FROM input ORDER BY n
          ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
            headers = excluded.headers, body = excluded.body, expires_at = excluded.expires_at
          WHERE idempotency_keys.expires_at <= (SELECT entry_now FROM input WHERE entry_scope = excluded.scope AND entry_key = excluded.key)
          RETURNING scope, key
        ), claimed AS (
          SELECT * FROM input WHERE (entry_scope, entry_key) IN (SELECT scope, key FROM claim)
        ), ${recordAndEvent('claimed')}
        SELECT n, n IN (SELECT n FROM claimed) AS claimed, ${idColumn} IN (SELECT ${idColumn} FROM record) AS created FROM input`
      },
      // A claim whose record could not be written (a unique value taken) is given back in the same transaction.
      forgetKey: {
        name: `${table}-forget-key`,
        text: `WITH ${input([['scope', 'text'], ['key', 'text'], ['body', 'text'], [idColumn, typeOf[idColumn]!]])}
        DELETE FROM idempotency_keys k USING input i WHERE k.scope = i.scope AND k.key = i.key AND k.body = i.body
          AND NOT EXISTS (SELECT 1 FROM ${table} r WHERE r.${idColumn} = i.${idColumn})
        RETURNING i.n`
      },
      // A unique value taken by an earlier row of the same statement raises, and the batch's writes
      // run again one by one.
      replace: {
        name: `${table}-replace`,
        text: `WITH ${input([...typed([idColumn, ...changed, 'updated_at']), ['expected', 'text'],
          ['event_type', 'text'], ['envelope_head', 'text'], ['envelope_middle', 'text'], ['envelope_tail', 'text']])},
        ${locked}, taken AS (
          SELECT i.n FROM input i WHERE ${isTaken('i')}
        ), updated AS (
          UPDATE ${table} r SET ${[...changed, 'updated_at'].map(c => `${c} = i.${c}`).join(', ')}, revision = r.revision + 1
          FROM current c JOIN input i USING (n)
          WHERE r.${idColumn} = i.${idColumn} AND ${matchesExpected} AND i.n NOT IN (SELECT n FROM taken)
          RETURNING i.n, r.revision, ${isoTimestamp('r.created_at')} AS created_at
        ), event AS (
          INSERT INTO events (type, envelope, time)
          SELECT i.event_type, i.envelope_head || u.revision::text || i.envelope_middle || u.created_at || i.envelope_tail, i.updated_at
          FROM updated u JOIN input i USING (n) ORDER BY n
        )
        SELECT i.n, c.revision AS current, u.revision, u.created_at
        FROM input i LEFT JOIN current c USING (n) LEFT JOIN updated u USING (n)`
      },
      // The tombstone's revision is the deleted row's plus one.
      remove: {
        name: `${table}-delete`,
        text: `WITH ${input([[idColumn, typeOf[idColumn]!], ['expected', 'text'], ['event_type', 'text'], ['envelope_head', 'text'], ['envelope_tail', 'text'], ['event_time', 'timestamptz']])},
        ${locked}, deleted AS (
          DELETE FROM ${table} r USING current c JOIN input i USING (n)
          WHERE r.${idColumn} = i.${idColumn} AND ${matchesExpected}
          RETURNING i.n, r.revision
        ), event AS (
          INSERT INTO events (type, envelope, time)
          SELECT i.event_type, i.envelope_head || (d.revision + 1)::text || i.envelope_tail, i.event_time
          FROM deleted d JOIN input i USING (n) ORDER BY n
        )
        SELECT i.n, c.revision AS current, d.n IS NOT NULL AS deleted FROM input i LEFT JOIN current c USING (n) LEFT JOIN deleted d USING (n)`
      }
    }
    this.#get = `SELECT ${this.#select}, revision FROM ${table} WHERE ${idColumn} = $1`
  }

  async list (query: ListQuery, limit: number, after: string | null, feedPosition = false, caller: ListCaller = serviceCaller): Promise<ListedPage<T>> {
    // The feed's head rides on the page's first statement, in its snapshot: no round trip of its own.
    let position: string | null = null
    let withHead = feedPosition
    // A page that is more than a seek waits its caller's turn: a burst of costly pages would otherwise
    // queue every other caller's statements behind its own on the pipelined connections.
    const costly = this.#listGate !== null && !this.#listing.seeks(query)
    const read = async (text: string, values: SqlValue[], planFixed?: boolean): Promise<SqlValue[][]> => {
      const joined = withHead
      withHead = false
      const statement = joined ? `SELECT h.xid, h.seq, p.* FROM (${head}) AS h LEFT JOIN LATERAL (${text}) AS p ON true` : text
      // Planned for its values unless its plan is fixed: the generic plan PostgreSQL gives a named
      // statement after five runs walked the whole primary key for a rare search (test/list-query.postgres.test.ts).
      const name = planFixed === true ? this.#statementName(statement) : undefined
      const { rows } = await this.#reads.query({ name, text: statement, values, rowMode: 'array', types: listTypes } as pg.QueryConfig, costly)
      const result = rows as unknown as SqlValue[][]
      if (!joined) return result
      const [xid, seq] = result[0]! as [string, string]
      position = this.#feed.positionOf({ xid, seq })
      // No row of the page leaves one row of NULLs (a list statement's first column is never NULL).
      return result[0]![2] === null ? [] : result.map(row => row.slice(2))
    }
    const readPage = async () => this.#listing.page(query, limit, after, async (text, values, planFixed) => {
      // Each statement of the page is cut at the statement timeout (or half of it, waiting for a lock).
      try {
        return await read(text, values, planFixed)
      } catch (error) {
        const code = (error as { code?: string }).code
        throw code === queryCanceled || code === lockNotAvailable ? new ListTimeoutError(this.#listBudgetMs) : error
      }
    })
    const page = costly ? await this.#listGate!.run(caller, readPage) : await readPage()
    const names = this.#columns
    const timestamps = this.#timestamps
    const items = page.items.map(row => {
      const record: Row = {}
      for (let i = 0; i < row.length; i++) record[names[i]!] = timestamps.has(i) ? isoFromPostgres(row[i] as string) : row[i]
      return record as T
    })
    return { items, after: page.after, position }
  }

  /**
   * An export reads in a transaction of its own connection (not pipelined), each statement within the
   * list's budget, as a page's are: a FETCH cancelled at the statement timeout fails the export with
   * ListTimeoutError. The rows are written as text here, on the event loop, in slices of its time.
   */
  async export (query: ListQuery, { format, feedPosition = false, idleMs = this.#listBudgetMs }: ExportOptions): Promise<RecordExport> {
    const statements = this.#listing.everything(query)
    const client = await this.#connect()
    // The server ends a connection left idle in its transaction too long (or restarting): that must fail
    // the export's next statement, not the process (an 'error' event nobody hears throws).
    client.on('error', () => {})
    const timedOut = (error: unknown) => {
      const code = (error as { code?: string }).code
      return code === queryCanceled || code === lockNotAvailable ? new ListTimeoutError(this.#listBudgetMs) : error
    }
    let position: string | null = null
    try {
      // One snapshot for the head and every statement, however long the client takes to read. Ending
      // the connection ends the transaction: a read-only one has nothing to commit. Between two FETCHes
      // the connection waits on the client, which may take up to its stall deadline.
      await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
        SET LOCAL statement_timeout = ${this.#listBudgetMs};
        SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1000, 2 * idleMs)}`)
      if (feedPosition) position = this.#feed.positionOf((await client.query<PositionRow>(head)).rows[0]!)
    } catch (error) {
      await client.end()
      throw timedOut(error)
    }
    const fields = this.#columns.slice(0, this.#columns.length - this.#derived.length)
    const write = rowWriter(format, fields)
    const slice = new LoopSlice()
    const timestamps = [...this.#timestamps]
    let next = 0
    let declared = false
    return {
      position,
      fields,
      chunks: exportChunks(async () => {
        try {
          for (; next < statements.length; next++, declared = false) {
            const cursor = `export_${next}`
            if (!declared) {
              const { sql, params } = statements[next]!
              await client.query({ text: `DECLARE ${cursor} NO SCROLL CURSOR FOR ${sql}`, values: params })
              declared = true
            }
            const { rows } = await client.query({ text: `FETCH ${exportBatch} FROM ${cursor}`, rowMode: 'array', types: listTypes } as pg.QueryConfig)
            if (rows.length === 0) continue
            for (const row of rows as unknown as unknown[][]) for (const i of timestamps) row[i] = isoFromPostgres(row[i] as string)
            return await slice.write(rows as unknown as unknown[][], write)
          }
          return null
        } catch (error) {
          throw timedOut(error)
        }
      }, () => client.end())
    }
  }

  /** A name per statement text (there are few with a fixed plan: a sort, its direction, a first page or not). */
  #statementName (text: string): string {
    let name = this.#statementNames.get(text)
    if (name === undefined) this.#statementNames.set(text, name = `${this.#spec.table}-list-${this.#statementNames.size}`)
    return name
  }

  async get (id: string): Promise<Versioned<T> | null> {
    const { rows } = await this.#reads.query<Row & { revision: number }>({
      name: `${this.#spec.table}-get`, text: this.#get, values: [id]
    })
    const row = rows[0]
    if (row === undefined) return null
    const { revision, ...record } = row
    return { record: record as T, revision }
  }

  async create (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry, given?: GivenIdentity): Promise<Versioned<T>> {
    return this.#create(values, remember, given, 'live')
  }

  async #create (values: V, remember: ((created: Versioned<T>) => IdempotencyEntry) | undefined, given: GivenIdentity | undefined, lane: EventLane): Promise<Versioned<T>> {
    const now = new Date().toISOString()
    const createdAt = given?.createdAt ?? now
    const record = { [this.#spec.idColumn]: given?.id ?? uuidv7(), ...values, created_at: createdAt, updated_at: given?.updatedAt ?? createdAt } as Row
    const created: Versioned<T> = { record: record as T, revision: 1 }
    const derived = derivedColumns(this.#spec, values)
    const row = this.#columns.map(c => record[c] ?? derived[c] ?? null)
    const id = record[this.#spec.idColumn] as string
    const type = this.#eventType('created')
    const event = [type, eventEnvelope(type, this.#subject(id), now, id, 1, record), now]
    if (remember === undefined) {
      return this.#writes.run({
        statements: [{ shared: lane === 'imported' ? this.#shared.insertImported : this.#shared.insert, values: [...row, ...event] }],
        outcome: ([inserted]) => {
          if (inserted!.rowCount === 0) throw this.#duplicate(values)
          this.#writes.changed()
          return created
        },
        failure: error => this.#failure(error)
      })
    }
    const { scope, key, fingerprint, expiresAt, response } = remember(created)
    return this.#writes.run({
      statements: [
        {
          shared: this.#shared.insertKeyed,
          values: [scope, key, fingerprint, response.status, JSON.stringify(response.headers), response.body, expiresAt, Date.now(), ...row, ...event]
        },
        { shared: this.#shared.forgetKey, values: [scope, key, response.body, record[this.#spec.idColumn]] }
      ],
      locks: `idempotency_keys ${JSON.stringify([scope, key])}`,
      outcome: ([result]) => {
        const { claimed, created: written } = result!.rows[0] as { claimed: boolean, created: boolean }
        // Another request stored this key first (on this node or another) and has committed.
        if (!claimed) throw new IdempotencyKeyTakenError()
        if (!written) throw this.#duplicate(values)
        this.#writes.changed()
        return created
      },
      // Waiting on the key's row timed out: the first request with it is still running.
      failure: error => (error as { code?: string }).code === lockNotAvailable ? new IdempotencyKeyBusyError() : this.#failure(error)
    })
  }

  async replace (id: string, values: V, expected: ExpectedRevisions): Promise<Versioned<T> | null> {
    const updatedAt = new Date().toISOString()
    const derived = derivedColumns(this.#spec, values)
    // created_at and the revision are the row's, known only in the statement, which puts them in the envelope.
    const type = this.#eventType('replaced')
    const answered = { [this.#spec.idColumn]: id, ...values, created_at: '', updated_at: updatedAt }
    const envelope = envelopeParts(eventEnvelope(type, this.#subject(id), updatedAt, id, 0, answered), true)
    const params = [id, ...this.#writable.map(c => (values as Row)[c]), ...this.#derived.map(c => derived[c]), updatedAt, revisionsText(expected), type, ...envelope]
    return this.#writes.run({
      statements: [{ shared: this.#shared.replace, values: params }],
      locks: `${this.#spec.table} ${id}`,
      outcome: ([result]) => {
        const row = result!.rows[0] as { current: number | null, revision: number | null, created_at: string | null }
        if (row.revision !== null) {
          const record = { ...answered, created_at: row.created_at }
          this.#writes.changed()
          return { record: record as T, revision: row.revision }
        }
        if (row.current === null) return null
        // The row was locked before it was checked: refused by If-Match, or else for a unique value taken.
        if (expected !== null && !expected.includes(row.current)) throw RevisionNotCurrentError.of(this.#spec.kind, expected, row.current)
        throw this.#duplicate(values)
      },
      failure: error => this.#failure(error)
    })
  }

  async delete (id: string, expected: ExpectedRevisions): Promise<boolean> {
    const time = new Date().toISOString()
    // The tombstone's revision is the deleted row's plus one, which the statement fills in.
    const type = this.#eventType('deleted')
    const envelope = envelopeParts(eventEnvelope(type, this.#subject(id), time, id, 0, null), false)
    return this.#writes.run({
      statements: [{ shared: this.#shared.remove, values: [id, revisionsText(expected), type, ...envelope, time] }],
      locks: `${this.#spec.table} ${id}`,
      outcome: ([result]) => {
        const row = result!.rows[0] as { current: number | null, deleted: boolean }
        if (row.deleted) {
          this.#writes.changed()
          return true
        }
        if (row.current === null) return false
        // The row was locked before it was checked: only If-Match can have refused it, so expected names revisions.
        throw RevisionNotCurrentError.of(this.#spec.kind, expected as readonly number[], row.current)
      },
      // A delete takes no unique value: whatever it raises is the server's fault.
      failure: error => error
    })
  }

  #eventType (change: 'created' | 'replaced' | 'deleted'): EventType {
    return `${this.#spec.kind}.${change}` as EventType
  }

  #subject (id: string): string {
    return `${this.#spec.path}/${id}`
  }

  /** The unique field a write could not take; each table has one, named in the 409. */
  /** Group commit puts creates sent together in one statement. */
  async createMany (records: { values: V, given: GivenIdentity }[]): Promise<(Versioned<T> | ValueTakenError)[]> {
    return Promise.all(records.map(({ values, given }) => this.#create(values, undefined, given, 'imported').catch((error: unknown) => {
      if (error instanceof ValueTakenError) return error
      throw error
    })))
  }

  /** The field a create found taken: the statement does not say which, so a unique value's, else the id's (a given id). */
  #duplicate (values: V): ValueTakenError {
    const field = this.#spec.unique.find(c => values[c] !== null) ?? this.#spec.idColumn
    return new ValueTakenError(this.#spec.kind, field)
  }

  /**
   * A write run alone raised: a unique value taken by a write that committed while this one waited on
   * it (a race the write's own check cannot see) is the usual 409, naming the field by its index;
   * anything else (an index an operator added, say) is the server's fault.
   */
  #failure (error: Error): Error {
    const { code, constraint } = error as { code?: string, constraint?: string }
    if (code !== uniqueViolation) return error
    const { table, kind } = this.#spec
    const field = this.#writable.find(c => constraint === `${table}_${c}_key` || constraint === `${table}_${c}_unique`)
    return field === undefined ? error : new ValueTakenError(kind, field)
  }
}
