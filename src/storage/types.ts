// The storage interface handlers depend on; every engine (sqlite/, postgres/) implements it.
import type { Book, Student } from '../api-types.js'
import type { ApiKeyInfo, Scope } from '../api-keys.js'
import type { SearchQuery } from '../search/query.js'

/** A record's writable fields, normalised and complete (absent optional fields are null). */
export type BookValues = Omit<Book, 'book_id' | 'created_at' | 'updated_at'>
export type StudentValues = Omit<Student, 'student_id' | 'created_at' | 'updated_at'>

export interface Page<T> {
  items: T[]
  /** Position after the last item when more records follow, else null; opaque to callers. */
  after: string | null
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

export interface RecordStore<T, V> {
  /**
   * Up to `limit` records matching `query` in its order, starting after `after` (a previous page's,
   * for the same query). Reads a bounded number of rows whatever the table's size; a page may hold
   * fewer than `limit` records (even none) while `after` is not null. Throws SearchTooBroadError
   * when a search matches too many records for a sort other than relevance or creation order.
   */
  list (query: ListQuery, limit: number, after: string | null): Promise<Page<T>>
  get (id: string): Promise<Versioned<T> | null>
  /**
   * Throws DuplicateError when a unique field is taken. With `remember`, its entry is stored in the
   * same transaction as the record, so a key is never stored without its record or the reverse; throws
   * IdempotencyKeyTakenError, writing nothing, when another request stored the same scope and key first.
   */
  create (values: V, remember?: (created: Versioned<T>) => IdempotencyEntry): Promise<Versioned<T>>
  /**
   * Null when no record has `id`; throws PreconditionFailedError when its revision is not `expected`
   * (checked and written in one transaction), DuplicateError when a unique field is taken.
   */
  replace (id: string, values: V, expected: ExpectedRevisions): Promise<Versioned<T> | null>
}

export interface BookRepository extends RecordStore<Book, BookValues> {
  /** False when no book has `id`; throws PreconditionFailedError when its revision is not `expected`. */
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
}

/** How much of the database's connections a node uses, read when metrics are scraped. */
export interface StorageUsage {
  connections: number
  maxConnections: number
  /** Statements sent and not yet answered (always 0 on SQLite, whose calls are synchronous). */
  queriesInFlight: number
}

export interface Repositories {
  /** Which engine stores the data, for readiness checks and logs. */
  readonly engine: 'sqlite' | 'postgres'
  books: BookRepository
  students: StudentRepository
  idempotency: IdempotencyStore
  apiKeys: ApiKeyRepository
  /** A secret that lives as long as the data, for signing list cursors. */
  cursorSecret (): Promise<Buffer>
  /** Resolves when the database answers and its schema is at the version this code expects; rejects otherwise. */
  probe (): Promise<void>
  usage (): StorageUsage
  /** Commits what is pending, then lets go of the database. */
  close (): Promise<void>
}
