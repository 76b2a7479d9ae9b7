// Checks an imported row as a create's body is checked (the contract's schema, the same words), and stages it.
import { uuidv7 } from 'uuidv7'
import type { ImportProblem } from '../contract/api-types.js'
import { bookFields, type FieldRules, recordValues, studentFields } from '../domain/records.js'
import { bodyProblems } from '../http/problem-details.js'
import { schemaValidator } from '../http/validation.js'
import type { StagedRow } from '../storage/types.js'
import type { RowShape } from './rows.js'

export type Collection = 'books' | 'students'

/** What an import needs to know of a collection's rows. */
interface RowRules {
  schema: string
  idField: string
  fields: FieldRules<object>
  /** The value its unique index compares, or null. */
  unique: (values: Record<string, unknown>) => string | null
}

const rules: Record<Collection, RowRules> = {
  books: { schema: 'BookImportRow', idField: 'book_id', fields: bookFields as FieldRules<object>, unique: values => values['isbn'] as string | null },
  // Emails are unique whatever their letter case.
  students: { schema: 'StudentImportRow', idField: 'student_id', fields: studentFields as FieldRules<object>, unique: values => (values['email'] as string).toLowerCase() }
}

export interface RowChecker {
  shape: RowShape
  /** The row staged, or its problems (each with the row's line). */
  check (line: number, fields: Record<string, unknown>): StagedRow | ImportProblem[]
}

export function rowChecker (document: object, collection: Collection): RowChecker {
  const { schema, idField, fields, unique } = rules[collection]
  const validate = schemaValidator(document, schema)
  // The schema as compiled ($refs followed): which fields there are, and which hold integers.
  const properties = (validate.schema as { properties: Record<string, { type?: string | string[] }> }).properties
  const integers = Object.keys(properties).filter(name => [properties[name]!.type].flat().includes('integer'))
  return {
    shape: { fields: Object.keys(properties), integers },
    check (line, row) {
      if (!validate(row)) return bodyProblems(validate.errors!).map(({ detail, pointer }) => ({ line, type: '/problems/validation-error', detail, pointer }))
      // Kept as a create keeps them (an ISBN in its 13-digit form); an id and times as they were.
      const values = recordValues(fields, row) as Record<string, unknown>
      // Given times stay with the values (JSON leaves out those not given).
      const record = JSON.stringify({ ...values, created_at: row['created_at'], updated_at: row['updated_at'] })
      const id = row[idField] as string | undefined
      return { line, recordId: id?.toLowerCase() ?? uuidv7(), unique: unique(values), record }
    }
  }
}
