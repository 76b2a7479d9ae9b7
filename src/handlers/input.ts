// Turns validated request bodies into complete record values, field-agnostic: the fields and their rules are in domain/records.ts.
import type { BookInput, StudentInput } from '../contract/api-types.js'
import { bookFields, type BookValues, recordValues, studentFields, type StudentValues } from '../domain/records.js'

/**
 * The id in a path, as the service writes ids: UUIDs compare regardless of letter case (RFC 9562), and
 * the storage engines would not agree on an upper-case one (PostgreSQL's uuid type ignores case, a
 * SQLite text column does not).
 */
export const recordId = (id: string): string => id.toLowerCase()

/** A book's values from a validated body: which fields there are, and how each is kept, is domain/records.ts's business. */
export const bookValues = (input: BookInput): BookValues => recordValues(bookFields, input)

/** A student's values from a validated body, as for books. */
export const studentValues = (input: StudentInput): StudentValues => recordValues(studentFields, input)
