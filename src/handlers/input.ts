// Turns validated request bodies into complete record values, applying the rules JSON Schema cannot state.
import type { BookInput, ProblemError, StudentInput } from '../api-types.js'
import { ValidationError } from '../errors.js'
import { toIsbn13 } from '../isbn.js'
import type { BookValues, StudentValues } from '../repositories/types.js'

function notAfterNextYear (year: number | null | undefined, pointer: string, problems: ProblemError[]): void {
  const nextYear = new Date().getUTCFullYear() + 1
  if (year != null && year > nextYear) problems.push({ detail: `must not be later than ${nextYear}`, pointer })
}

export function bookValues (input: BookInput): BookValues {
  const problems: ProblemError[] = []
  const isbn = input.isbn == null ? null : toIsbn13(input.isbn)
  if (input.isbn != null && isbn === null) problems.push({ detail: 'is not a valid ISBN-10 or ISBN-13 (check digit)', pointer: '#/isbn' })
  notAfterNextYear(input.published_year, '#/published_year', problems)
  if (problems.length > 0) throw new ValidationError('body', problems)
  return { title: input.title, author: input.author, isbn, published_year: input.published_year ?? null }
}

export function studentValues (input: StudentInput): StudentValues {
  const problems: ProblemError[] = []
  notAfterNextYear(input.enrollment_year, '#/enrollment_year', problems)
  if (problems.length > 0) throw new ValidationError('body', problems)
  return {
    name: input.name,
    email: input.email,
    enrollment_year: input.enrollment_year ?? null,
    // The contract's default fills an omitted status during validation; PUT therefore resets it too.
    status: input.status ?? 'active'
  }
}
