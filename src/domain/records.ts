// The writable fields of books and students and how each is kept: the one list a new field joins, read by handlers and both engines.
import type { Book, Student } from '../contract/api-types.js'
import { toIsbn13 } from './isbn.js'

/** A record's writable fields, normalised and complete (absent optional fields are null). */
export type BookValues = Omit<Book, 'book_id' | 'created_at' | 'updated_at'>
export type StudentValues = Omit<Student, 'student_id' | 'created_at' | 'updated_at'>

/** A body's writable fields as the contract lets a client send them: optional ones may be omitted. */
export type SentValues<V> = { [K in keyof V]?: V[K] | undefined }

/** Makes a field's stored value from the sent one (undefined when the client omitted the field). */
export type Keep<T> = (sent: T | undefined) => T

/**
 * Every writable field of a record with the rule that keeps it: a field added to the contract but not
 * here fails to compile, and the engines' column lists (src/storage/tables.ts) follow from these keys.
 */
export type FieldRules<V> = { [K in keyof V & string]-?: Keep<V[K]> }

/** Stored as sent; an omitted optional field is null (a PUT that omits it clears it). */
export const asSent = <T>(sent: T | undefined): T => (sent ?? null) as T

export const bookFields: FieldRules<BookValues> = {
  title: asSent,
  author: asSent,
  // `format: isbn` has verified the check digit; books are kept with the 13-digit form.
  isbn: isbn => isbn == null ? null : toIsbn13(isbn),
  published_year: asSent
}

export const studentFields: FieldRules<StudentValues> = {
  name: asSent,
  email: asSent,
  enrollment_year: asSent,
  // The contract's default fills an omitted status during validation; PUT therefore resets it too.
  status: status => status ?? 'active'
}

/**
 * A record's complete values from a body the contract has validated, each field kept by its rule.
 * It names no field, so a new field needs no change here nor in the handlers that call it.
 */
export function recordValues<V> (fields: FieldRules<V>, sent: SentValues<V>): V {
  const rules = fields as Record<string, Keep<unknown>>
  const values = sent as Record<string, unknown>
  return Object.fromEntries(Object.keys(rules).map(field => [field, rules[field]!(values[field])])) as V
}
