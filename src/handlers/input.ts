// Turns validated request bodies into complete record values: the contract has already checked every rule but one.
import type { BookInput, ProblemError, StudentInput } from '../api-types.js'
import { ValidationError } from '../errors.js'
import { toIsbn13 } from '../isbn.js'
import type { BookValues, StudentValues, Versioned } from '../storage/types.js'

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

type ServerSet = Partial<Record<'created_at' | 'updated_at', string>>

/**
 * A replacement may carry the read-only fields as a GET returned them (read, change one field, PUT
 * back); each must be the record's own: its id as in the path, its timestamps as stored. The one
 * body rule a schema cannot state, as it depends on the record; read only when such a field was sent.
 */
export async function checkServerSetFields<T extends Required<ServerSet>> (
  body: ServerSet & Record<string, unknown>,
  idField: string,
  id: string,
  current: () => Promise<Versioned<T> | null>
): Promise<void> {
  const problems: ProblemError[] = []
  if (body[idField] !== undefined && body[idField] !== id) problems.push({ detail: `must be the id in the path, ${id}, or be left out`, pointer: `#/${idField}` })
  const timestamps = (['created_at', 'updated_at'] as const).filter(field => body[field] !== undefined)
  const stored = timestamps.length > 0 ? await current() : null
  for (const field of timestamps) {
    // A missing record is the replace's 404 to answer; an equal instant in another notation is the same value.
    if (stored !== null && Date.parse(body[field]!) !== Date.parse(stored.record[field])) {
      problems.push({ detail: `is set by the server: send ${stored.record[field]}, the current value, or leave it out`, pointer: `#/${field}` })
    }
  }
  if (problems.length > 0) throw new ValidationError('body', problems)
}
