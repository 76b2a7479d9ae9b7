// The storage interface handlers depend on; Promise-based so another engine can implement it later.
import type { Book, Student } from '../api-types.js'
import type { ApiKeyInfo, Scope } from '../api-keys.js'

/** A record's writable fields, normalised and complete (absent optional fields are null). */
export type BookValues = Omit<Book, 'book_id' | 'created_at' | 'updated_at'>
export type StudentValues = Omit<Student, 'student_id' | 'created_at' | 'updated_at'>

export interface Page<T> {
  items: T[]
  /** Position after the last item when more records follow, else null; opaque to callers. */
  after: string | null
}

export interface RecordStore<T, V> {
  /** Up to `limit` records in creation order, starting after `after` (from a previous page). */
  list (limit: number, after: string | null): Promise<Page<T>>
  get (id: string): Promise<T | null>
  /** Throws DuplicateError when a unique field is taken. */
  create (values: V): Promise<T>
  /** Null when no record has `id`; throws DuplicateError when a unique field is taken. */
  replace (id: string, values: V): Promise<T | null>
}

export interface BookRepository extends RecordStore<Book, BookValues> {
  /** False when no book has `id`. */
  delete (id: string): Promise<boolean>
}

export type StudentRepository = RecordStore<Student, StudentValues>

export interface ApiKeyRepository {
  /** Stores a key by its id and the hash of its secret. */
  create (key: { keyId: string, name: string, scopes: Scope[], secretHash: Buffer }): Promise<ApiKeyInfo>
  /** The key with its secret's hash, revoked or not; null when no key has this id. */
  find (keyId: string): Promise<(ApiKeyInfo & { secretHash: Buffer }) | null>
  /** Every key, in creation order. */
  list (): Promise<ApiKeyInfo[]>
  /** False when no unrevoked key has this id. */
  revoke (keyId: string): Promise<boolean>
}

export interface Repositories {
  books: BookRepository
  students: StudentRepository
  apiKeys: ApiKeyRepository
  /** A secret that lives as long as the data, for signing list cursors. */
  cursorSecret (): Promise<Buffer>
  close (): void
}
