// The storage interface handlers depend on; every engine (sqlite/, postgres/) implements it.
import type { Book, Import, ImportProblem, Student } from '../contract/api-types.js'
import type { ApiKeyInfo, Scope } from '../domain/api-key-types.js'
import type { SearchQuery } from '../domain/search/query.js'
import type { ValueTakenError } from '../domain/outcomes.js'
import type { BookValues, StudentValues } from '../domain/records.js'

// What a record's values are is the domain's (src/domain/records.ts); the engines store them as they are.
export type { BookValues, StudentValues }

export interface Page<T> {
  items: T[]
  /** Position after the last item when more records follow, else null; opaque to callers. */
  after: string | null
}

/** A page of a list, and the feed's position when it was asked for (else null). */
export interface ListedPage<T> extends Page<T> {
  position: string | null
}

/** A record and its revision, which grows by one on every change of the record. */
export interface Versioned<T> {
  record: T
  revision: number
}

/** The revisions a conditional write accepts; null when any will do. */
export type ExpectedRevisions = readonly number[] | null

/** A response kept to be replayed to a retry with the same idempotency key. */
export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export interface IdempotencyEntry {
  /** Who and which operation the key belongs to; keys of different scopes never meet. */
  scope: string
  key: string
  /** Digest of the request, to tell a true retry from a reuse of the key. */
  fingerprint: string
  /** Milliseconds since the epoch after which the entry is forgotten. */
  expiresAt: number
  response: StoredResponse
}

/**
 * What a list asks for, normalised (text values folded, sorted, distinct), in the field names of the
 * table's ListSpec: equality filters (any of a field's values) and ranges, all ANDed, an optional
 * search, and one sort key (`relevance` only with a search).
 */
export interface ListQuery {
  equals: { field: string, values: string[] }[]
  /** Inclusive bounds, except a range the ListSpec marks `beforeIsExclusive`; null for an open end. */
  ranges: { field: string, min: number | string | null, max: number | string | null }[]
  search: SearchQuery | null
  sort: { key: string, descending: boolean }
}

/** The text an export is written as: CSV rows (RFC 4180, CRLF) or NDJSON lines. */
export type ExportFormat = 'csv' | 'ndjson'

export interface ExportOptions {
  format: ExportFormat
  /** Whether to read the change feed's head in the snapshot (RecordExport.position). */
  feedPosition?: boolean
  /**
   * Most ms the caller may leave the export unread between two chunks (its stall deadline): where the
   * database itself times out a snapshot left idle (PostgreSQL), it gives the export at least this.
   */
  idleMs?: number
}

/**
 * Whom a list page is read for: the engines share the readers of costly pages (searches, filters) fairly
 * between callers, a queue each, anonymous callers as a whole a smaller share (src/storage/fair-queue.ts).
 * `id` names the caller within its kind: an API key's id, or an anonymous client's address.
 */
export interface ListCaller {
  id: string
  anonymous: boolean
}

/** Whom a list is read for when no caller says: the service itself, as one keyed caller. */
export const serviceCaller: ListCaller = { id: 'service', anonymous: false }

/**
 * Every record a list query matches, in its order, read from one snapshot of the data, as text in the
 * format asked for, a chunk at a time, so that memory stays bounded however many records there are.
 * The snapshot is held until the chunks end or are left (a `for await` that breaks, or `return()`,
 * which resolves once the snapshot is released), which every caller must do.
 */
export interface RecordExport {
  /** The change feed's head in the snapshot when asked for (else null): every later change is after it in the feed. */
  position: string | null
  /** The record's field names, in the contract's order (a CSV export's header row). */
  fields: readonly string[]
  /**
   * The records' rows or lines (no CSV header row). A chunk that is not read within the list's time
   * budget throws ListTimeoutError (the export is then over); any other failure throws as it is.
   */
  chunks: AsyncIterableIterator<string>
}

/** The id of a record an import creates (fixed before it is written), and the times an exported record had, kept as they are. */
export interface GivenIdentity {
  id: string
  /** Now when absent. */
  createdAt?: string | undefined
  /** createdAt when absent. */
  updatedAt?: string | undefined
}

export interface RecordStore<T, V> {
  /**
   * Up to `limit` records matching `query` in its order, starting after `after` (a previous page's,
   * for the same query). Reads a bounded number of rows whatever the table's size; a page may hold
   * fewer than `limit` records (even none) while `after` is not null. Throws SearchTooBroadError
   * when a search matches too many records for a sort other than relevance or creation order. With
   * `feedPosition`, also the change feed's head read with the page (before it, or in its snapshot):
   * every change after that position is in the page or after it in the feed. A page that is more than
   * one seek waits its `caller`'s turn for a reader (ListCaller; serviceCaller when absent): it throws
   * ListTimeoutError when not read within the engine's budget, TooManyWaitingError when the caller
   * already has as many pages waiting as one caller may.
   */
  list (query: ListQuery, limit: number, after: string | null, feedPosition?: boolean, caller?: ListCaller): Promise<ListedPage<T>>
  /** Every record `query` matches, streamed from one snapshot (see RecordExport); no cap on a search's matches. */
  export (query: ListQuery, options: ExportOptions): Promise<RecordExport>
  get (id: string): Promise<Versioned<T> | null>
  /**
   * Throws ValueTakenError when a unique field is taken. With `remember`, its entry is stored in the
   * same transaction as the record, so a key is never stored without its record or the reverse; throws
   * IdempotencyKeyTakenError, writing nothing, when another request stored the same scope and key first.
   * With `given`, the record keeps that id and those times (a ValueTakenError naming the id field when
   * the id is taken); its event is dated now all the same.
   */
  create (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry, given?: GivenIdentity): Promise<Versioned<T>>
  /**
   * Creates records as create() does with `given`, together (an import's batch: one transaction on
   * SQLite, one statement on PostgreSQL); each record's outcome in order, a ValueTakenError for a
   * record refused, which writes nothing of it and leaves the others be. Their events go on the imported lane.
   */
  createMany (records: { values: V, given: GivenIdentity }[]): Promise<(Versioned<T> | ValueTakenError)[]>
  /**
   * Null when no record has `id`; throws RevisionNotCurrentError when its revision is not `expected`
   * (checked and written in one transaction), ValueTakenError when a unique field is taken.
   */
  replace (id: string, values: V, expected: ExpectedRevisions): Promise<Versioned<T> | null>
}

export interface BookRepository extends RecordStore<Book, BookValues> {
  /** False when no book has `id`; throws RevisionNotCurrentError when its revision is not `expected`. */
  delete (id: string, expected: ExpectedRevisions): Promise<boolean>
}

export interface IdempotencyStore {
  /** The unexpired entry stored under `scope` and `key`, or null. */
  find (scope: string, key: string, now: number): Promise<Omit<IdempotencyEntry, 'scope' | 'key' | 'expiresAt'> | null>
}

export type StudentRepository = RecordStore<Student, StudentValues>

export interface ApiKeyRepository {
  /** Stores a key by its id and the hash of its secret. */
  create (key: { keyId: string, name: string, scopes: Scope[], secretHash: Buffer }): Promise<ApiKeyInfo>
  /**
   * The key with its secret's hash, revoked or not; null when no key has this id. While the key is
   * unchanged this may be the same object as before, and once it changes it must be a new one:
   * callers may skip checking a secret again against the object they checked it against.
   */
  find (keyId: string): Promise<(ApiKeyInfo & { secretHash: Buffer }) | null>
  /** Every key, in creation order. */
  list (): Promise<ApiKeyInfo[]>
  /** False when no unrevoked key has this id. */
  revoke (keyId: string): Promise<boolean>
  /**
   * Stores the service's first key, unless any key is stored or a first key ever was: of processes
   * that try at once (nodes on one database), exactly one stores it. Null when this one did not.
   */
  createFirst (key: { keyId: string, name: string, scopes: Scope[], secretHash: Buffer }): Promise<ApiKeyInfo | null>
  rename (keyId: string, name: string): Promise<void>
  /**
   * Calls `listener` with the id of each key revoked from now on: at once for a revocation by this
   * process, and for one by another process or node once this one hears of it (within a second while
   * its connection to the database holds), possibly more than once. Returns what unsubscribes it.
   */
  onRevoked (listener: (keyId: string) => void): () => void
}

/** A change as the feed stores it. */
export interface StoredEvent {
  /** The event's id and its position in the feed (engine-made, opaque outside storage). */
  position: string
  /** `book.created`, …; see eventTypes in src/storage/events.ts. */
  type: string
  /** The CloudEvents envelope as JSON text, without `id` (the position is the id): see eventEnvelope(). */
  envelope: string
}

export interface EventPage {
  /** In feed order: one total order per database. */
  events: StoredEvent[]
  /**
   * Where the next read continues: the last event's position when the page is full, else past every
   * event this read scanned (including those `types` left out) up to the head it saw. Equal to
   * `after` only when nothing newer can be read yet.
   */
  next: string
  /**
   * Whether the read stopped before the head it saw (a full page, or the bound on the rows one read
   * scans): a reader that wants everything reads again from `next` at once rather than wait for news.
   */
  more: boolean
}

/** What a position names, for a reader resuming from it. */
export type PositionState =
  /** The events after it are all still kept: reading from it misses nothing. */
  | 'current'
  /** Events after it were pruned (retention), or it belongs to another database or a feed it never reached (a restore): resuming would miss events. */
  | 'gone'
  /** Not a position of any feed (malformed): a client error. */
  | 'invalid'

/**
 * The change feed (outbox): the record tables write one event per create, replace and delete in the
 * same transaction as the change. Positions are totally ordered per database, and a reader never
 * sees a position before an earlier one has become visible (PostgreSQL: reads are gated on the oldest
 * open transaction), so resuming from the last position read gives no gap and no duplicate.
 */
export interface EventFeed {
  /** The position after every event a reader can see now (the empty feed has one too). */
  head (): Promise<string>
  /** The position before the oldest event kept: reading from it gives every event kept. */
  oldest (): Promise<string>
  /** Whether `position` may be resumed from. */
  check (position: string): Promise<PositionState>
  /**
   * Up to `limit` events after `after` whose type is in `types`, reading a bounded number of rows
   * however many events `types` leaves out (so a page may hold fewer than `limit`, even none, while
   * `next` moves on). `after` must have been checked 'current'. With a `lane`, only that lane's events.
   */
  read (after: string, types: readonly string[], limit: number, lane?: EventLane): Promise<EventPage>
  /** Deletes events older than `before` (milliseconds since the epoch), a bounded batch per call; resolves to how many. */
  prune (before: number): Promise<number>
  /** Calls `listener` after this process commits events, so that streams read at once instead of at their next poll. */
  onCommit (listener: () => void): () => void
}

/**
 * Which writes an event came from: an import's (imported) or any other (live). Webhooks queue each lane
 * apart and take turns between them, so that a million imported events never hold up the rest.
 */
export const eventLanes = ['live', 'imported'] as const
export type EventLane = typeof eventLanes[number]

export type WebhookDisabledReason = 'gone' | 'failing' | 'key_revoked'

/** A webhook endpoint as stored; times the worker compares are milliseconds since the epoch. */
export interface StoredWebhookEndpoint {
  endpointId: string
  url: string
  types: string[]
  description: string | null
  /** The API key that registered it ('admin' for ADMIN_API_KEY): deliveries keep its rights. */
  keyId: string
  /** `whsec_<base64>` */
  secret: string
  previousSecret: string | null
  previousSecretExpiresAt: number | null
  status: 'enabled' | 'disabled'
  disabledReason: WebhookDisabledReason | null
  failingSince: number | null
  createdAt: string
  /** Where in the feed its deliveries have been queued up to, per lane. */
  positions: Record<EventLane, string>
}

/** A delivery claimed for one attempt: no other worker makes an attempt at it until `leaseUntil`. */
export interface ClaimedDelivery {
  deliveryId: string
  endpoint: StoredWebhookEndpoint
  /** The event's position, which is its id (`webhook-id`). */
  position: string
  body: string
  /** Attempts made so far, this one included. */
  attempts: number
}

/**
 * Whose endpoints a management operation reaches: one API key's (its key_id), or every endpoint (null:
 * an admin key, or the delivery worker). Another key's endpoint is, to that operation, absent.
 */
export type EndpointOwner = string | null

export interface WebhookRepository {
  /**
   * Stores an enabled endpoint, unless its key already has `perKey` endpoints (when given) or the
   * deployment `max`: then throws EndpointCapError and stores nothing.
   */
  create (endpoint: Pick<StoredWebhookEndpoint, 'endpointId' | 'url' | 'types' | 'description' | 'keyId' | 'secret' | 'createdAt'> & { position: string }, max: number, perKey?: number): Promise<StoredWebhookEndpoint>
  /** The owner's endpoints (every one for null), oldest first. */
  list (owner: EndpointOwner): Promise<StoredWebhookEndpoint[]>
  /** Null when no endpoint of the owner has this id. */
  get (endpointId: string, owner: EndpointOwner): Promise<StoredWebhookEndpoint | null>
  /** Deletes the endpoint and its pending deliveries; false when no endpoint of the owner has this id. */
  delete (endpointId: string, owner: EndpointOwner): Promise<boolean>
  /** Replaces the secret, keeping the current one as the previous until `previousExpiresAt`. */
  rotate (endpointId: string, owner: EndpointOwner, secret: string, previousExpiresAt: number): Promise<StoredWebhookEndpoint | null>
  /** Enabled again, not failing, both cursors moved to `position` (what happened meanwhile is not sent). */
  enable (endpointId: string, owner: EndpointOwner, position: string): Promise<StoredWebhookEndpoint | null>
  /**
   * Queues `events` (due at `now`) on one lane of an endpoint and moves that lane's cursor from `from` to
   * `to`, in one transaction and only if the cursor is still at `from`, the endpoint enabled and the
   * lane holding fewer than `max` deliveries: a concurrent fan-out queues nothing twice, and a receiver
   * that is down or slow leaves what it has not taken in the feed rather than in the queue.
   * False when nothing was queued (the cursor moved, or the lane is full).
   */
  enqueue (queue: { endpointId: string, lane: EventLane, from: string, to: string, events: { position: string, body: string }[], now: number, max: number }): Promise<boolean>
  /**
   * Up to `limit` due deliveries of enabled endpoints, each leased until `leaseUntil` with its attempt
   * counted. Lanes (an endpoint's live or imported deliveries) take turns: the oldest due of each lane,
   * then the second of each, and so on, so that no lane's backlog holds up another's.
   */
  claim (now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]>
  /** The delivery is done: it goes, and its endpoint is no longer failing. */
  succeeded (delivery: ClaimedDelivery): Promise<void>
  /**
   * The attempt failed: another at `nextAttemptAt`; the endpoint failing since `now` unless it already was.
   * True when this failure began the endpoint's run of failures (one caller learns so, whichever node it is on).
   */
  failed (delivery: ClaimedDelivery, outcome: { status: number | null, error: string, nextAttemptAt: number, now: number }): Promise<boolean>
  /** Disabled for `reason`; its pending deliveries go. False when it was disabled already (another caller disabled it). */
  disable (endpointId: string, reason: WebhookDisabledReason): Promise<boolean>
}

/** How much of the database's connections a node uses, read when metrics are scraped. */
export interface StorageUsage {
  connections: number
  maxConnections: number
  /** Statements sent and not yet answered (always 0 on SQLite, whose calls are synchronous). */
  queriesInFlight: number
}

/** An import as stored: what the contract shows, and what only the service sees. */
export interface StoredImport extends Import {
  keyId: string
  idempotencyKey: string | null
  /** Digest of the file, to tell a retried upload from another file sent with the same key. */
  fingerprint: string | null
  /** The last staged line written (0 before the first batch): a runner taking the import up goes on after it. */
  writtenTo: number
}

/** A checked row waiting to be written: the record's id, its unique value as its index compares it, and the values with any given times (JSON). */
export interface StagedRow {
  line: number
  recordId: string
  unique: string | null
  record: string
}

/** What moves an import on; counters are added to, problems appended (beyond 1,000 only counted). */
export interface ImportChanges {
  state?: Import['state']
  read?: number
  written?: number
  refused?: number
  bytes?: number
  startedAt?: string
  finishedAt?: string
  detail?: string
  writtenTo?: number
  /** A cancellation is never taken back. */
  cancelRequested?: true
  /** Frees the import's idempotency key: its file never arrived whole, so a retry of the upload starts afresh. */
  releaseKey?: true
  problems?: ImportProblem[]
}

/** Imports and their staged rows; the records themselves are written through the collection's RecordStore. */
export interface ImportStore {
  /**
   * Stores a new import (state `receiving`, its lease held by `runner` until `leaseUntil`). With an
   * idempotency key another import of the same API key holds, stores nothing and returns that one.
   */
  start (started: Pick<StoredImport, 'import_id' | 'keyId' | 'collection' | 'mode' | 'format' | 'created_at' | 'idempotencyKey'>, runner: string, leaseUntil: number): Promise<StoredImport | null>
  /** Stages rows; a row whose id or unique value an earlier row of the import holds is not staged: its line and the earlier line are returned. */
  stage (importId: string, rows: StagedRow[]): Promise<{ line: number, earlier: number, field: 'id' | 'unique' }[]>
  /** The staged rows whose id or unique value a stored record of `table` holds, in line order. */
  conflicts (importId: string, table: 'books' | 'students'): Promise<{ line: number, field: 'id' | 'unique' }[]>
  /** Up to `limit` staged rows after line `after`, in line order. */
  staged (importId: string, after: number, limit: number): Promise<StagedRow[]>
  /** Removes staged rows: these lines, or every row of the import (in bounded steps). */
  unstage (importId: string, lines?: number[]): Promise<void>
  /** Removes an import and its staged rows: one whose upload was refused, whose caller never got its id. */
  discard (importId: string): Promise<void>
  /** Applies `changes` and, when given, sets the fingerprint and renews the lease (something must change). Returns the import as it is now. */
  update (importId: string, changes: ImportChanges, lease?: { runner: string, until: number }, fingerprint?: string): Promise<StoredImport>
  get (importId: string): Promise<StoredImport | null>
  /** The newest `limit` imports of `keyId` (of every key when null). */
  list (keyId: string | null, limit: number): Promise<StoredImport[]>
  /**
   * Takes over one import whose runner's lease ran out by `now` (a node that stopped), for `runner`
   * until `leaseUntil`: one left `receiving` (its upload was cut) or `running`. Null when there is none.
   * Of nodes that try at once, one takes each import.
   */
  claim (runner: string, now: number, leaseUntil: number): Promise<StoredImport | null>
}

export interface Repositories {
  /** Which engine stores the data, for readiness checks and logs. */
  readonly engine: 'sqlite' | 'postgres'
  books: BookRepository
  students: StudentRepository
  idempotency: IdempotencyStore
  apiKeys: ApiKeyRepository
  events: EventFeed
  webhooks: WebhookRepository
  imports: ImportStore
  /** A secret that lives as long as the data, for signing list cursors. */
  cursorSecret (): Promise<Buffer>
  /** Resolves when the database answers and its schema is at the version this code expects; rejects otherwise. */
  probe (): Promise<void>
  usage (): StorageUsage
  /** Commits what is pending, then lets go of the database. */
  close (): Promise<void>
}
