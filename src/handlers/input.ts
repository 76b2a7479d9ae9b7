// Turns validated request bodies into complete record values: the contract has already checked every rule but one.
import type { BookInput, StudentInput } from '../contract/api-types.js'
import { toIsbn13 } from '../domain/isbn.js'
import type { BookValues, StudentValues } from '../storage/types.js'

/**
 * The id in a path, as the service writes ids: UUIDs compare regardless of letter case (RFC 9562), and
 * the storage engines would not agree on an upper-case one (PostgreSQL's uuid type ignores case, a
 * SQLite text column does not).
 */
export const recordId = (id: string): string => id.toLowerCase()

export function bookValues (input: BookInput): BookValues {
  return {
    title: input.title,
    author: input.author,
    // `format: isbn` has verified the check digit; books are kept with the 13-digit form.
    isbn: input.isbn == null ? null : toIsbn13(input.isbn),
    published_year: input.published_year ?? null
  }
}

export function studentValues (input: StudentInput): StudentValues {
  return {
    name: input.name,
    email: input.email,
    enrollment_year: input.enrollment_year ?? null,
    // The contract's default fills an omitted status during validation; PUT therefore resets it too.
    status: input.status ?? 'active'
  }
}
