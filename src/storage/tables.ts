// What each engine needs to know about the two record tables: names, writable fields, unique fields.
import type { BookValues, StudentValues } from './types.js'

export interface TableSpec<V> {
  table: string
  /** Singular noun used in error messages. */
  kind: string
  idColumn: string
  /** Every writable field, so that a field added to the contract but not here fails to compile. */
  writable: Record<keyof V & string, true>
  /** The writable fields with a unique index. */
  unique: (keyof V & string)[]
  /** Those of them whose index ignores letter case (each engine's migrations make it so). */
  uniqueIgnoringCase: (keyof V & string)[]
}

export const bookTable: TableSpec<BookValues> = {
  table: 'books',
  kind: 'book',
  idColumn: 'book_id',
  writable: { title: true, author: true, isbn: true, published_year: true },
  unique: ['isbn'],
  uniqueIgnoringCase: []
}

export const studentTable: TableSpec<StudentValues> = {
  table: 'students',
  kind: 'student',
  idColumn: 'student_id',
  writable: { name: true, email: true, enrollment_year: true, status: true },
  unique: ['email'],
  uniqueIgnoringCase: ['email']
}
