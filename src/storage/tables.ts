// What each engine needs to know about the two record tables: names, writable fields, unique fields, how lists query them.
import { bookFields, type FieldRules, studentFields } from '../domain/records.js'
import { fold } from '../domain/search/fold.js'
import type { BookValues, StudentValues } from './types.js'

/** How a list filters, sorts and searches a table; the field names are those of ListQuery. */
export interface ListSpec {
  /** Equality filters: the column holding the (normalised) value, and whether it ignores letter case. */
  equals: Record<string, { column: string, ignoringCase?: boolean }>
  /**
   * Range filters over a column. `lowest`: the column stands NULL in as a value below every real
   * one (so that NULL sorts lowest), and a range without a minimum starts at `lowest` to leave it out.
   */
  ranges: Record<string, { column: string, lowest?: number, maxIsExclusive?: boolean }>
  /** Each sort key's columns; seq follows as the tie-breaker, in the same direction. */
  sorts: Record<string, string[]>
  /** Equality filters whose single value an index pairs with these sorts, for a direct seek. */
  seekable: Record<string, string[]>
  /** The folded columns a search looks in, most weighty first. */
  searched: string[]
}

export interface TableSpec<V> {
  table: string
  /** Singular noun used in error messages. */
  kind: string
  /** Plural noun used in error messages. */
  plural: string
  /** The collection's path, which the records' events name as their subject. */
  path: string
  idColumn: string
  /** Every writable field (a column each), from src/domain/records.ts: a field joins there, not here. */
  writable: FieldRules<V>
  /** The writable fields with a unique index. */
  unique: (keyof V & string)[]
  /** Those of them whose index ignores letter case (each engine's migrations make it so). */
  uniqueIgnoringCase: (keyof V & string)[]
  /** Columns the service derives from the values and stores beside them: folded text for sorting and search. */
  derived: Record<string, (values: V) => string>
  list: ListSpec
}

export const bookTable: TableSpec<BookValues> = {
  table: 'books',
  kind: 'book',
  plural: 'books',
  path: '/books',
  idColumn: 'book_id',
  writable: bookFields,
  unique: ['isbn'],
  uniqueIgnoringCase: [],
  derived: { title_key: values => fold(values.title), author_key: values => fold(values.author) },
  list: {
    equals: { author: { column: 'author_key' }, isbn: { column: 'isbn' } },
    ranges: {
      published_year: { column: 'published_year_sort', lowest: -5000 },
      updated_at: { column: 'updated_at', maxIsExclusive: true }
    },
    sorts: { created_at: [], updated_at: ['updated_at'], title: ['title_key'], author: ['author_key', 'title_key'], published_year: ['published_year_sort'] },
    // No (author_key, seq) index: it cost about 11 µs a create (BENCHMARKS.md); books by one author in
    // creation order are counted through (author_key, title_key, seq) and driven or walked.
    seekable: { author: ['title', 'author'] },
    searched: ['title_key', 'author_key']
  }
}

export const studentTable: TableSpec<StudentValues> = {
  table: 'students',
  kind: 'student',
  plural: 'students',
  path: '/api/students',
  idColumn: 'student_id',
  writable: studentFields,
  unique: ['email'],
  uniqueIgnoringCase: ['email'],
  derived: { name_key: values => fold(values.name) },
  list: {
    equals: { email: { column: 'email', ignoringCase: true }, status: { column: 'status' } },
    ranges: {
      enrollment_year: { column: 'enrollment_year_sort', lowest: 1800 },
      updated_at: { column: 'updated_at', maxIsExclusive: true }
    },
    sorts: { created_at: [], updated_at: ['updated_at'], name: ['name_key'], enrollment_year: ['enrollment_year_sort'] },
    seekable: { status: ['created_at', 'name'] },
    searched: ['name_key']
  }
}

/** The derived columns' values for a record's values, as a table stores them beside the record. */
export function derivedColumns<V> (spec: TableSpec<V>, values: V): Record<string, string> {
  return Object.fromEntries(Object.entries(spec.derived).map(([column, derive]) => [column, derive(values)]))
}
