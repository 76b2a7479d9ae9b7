// Reads an import's file as it arrives: CSV or NDJSON rows with their line numbers, within the byte and row limits.
import { createInterface } from 'node:readline'
import { type Readable, Transform } from 'node:stream'
import { type CsvError, parse } from 'csv-parse'
import type { ImportProblem } from '../contract/api-types.js'
import { unescapeFormula } from '../formats/csv.js'

export type ImportFormat = 'csv' | 'ndjson'

/** A row as the file gives it: its fields (a CSV's empty cells left out), or why its line is not a row. */
export type FileRow = { line: number, fields: Record<string, unknown> } | { line: number, problem: ImportProblem }

export interface FileLimits {
  maxBytes: number
  maxRows: number
}

/** The file is beyond one of its limits; `limit` names the setting. */
export class ImportTooLargeError extends Error {
  override name = 'ImportTooLargeError'
  constructor (readonly limit: 'IMPORT_MAX_BYTES' | 'IMPORT_MAX_ROWS', readonly value: number) {
    super(`The file has more than the ${value} ${limit === 'IMPORT_MAX_BYTES' ? 'bytes' : 'rows'} one import takes (${limit}); split it`)
  }
}

/** A CSV header the collection cannot take: each column named, with why. */
export class InvalidHeaderError extends Error {
  override name = 'InvalidHeaderError'
  constructor (readonly columns: { parameter: string, detail: string }[]) {
    super(columns.length === 1 ? 'The CSV header has 1 column the import cannot take' : `The CSV header has ${columns.length} columns the import cannot take`)
  }
}

export interface RowShape {
  /** Every field a row may have. */
  fields: readonly string[]
  /** Those that hold integers: a CSV cell of decimal digits is read as one. */
  integers: readonly string[]
}

const decimal = /^-?[0-9]{1,15}$/

/**
 * The file's rows in order; `counted` is given each chunk read. Throws ImportTooLargeError
 * as soon as a limit is passed, InvalidHeaderError before the first row of a CSV whose header will not do.
 */
export async function * fileRows (body: Readable, format: ImportFormat, shape: RowShape, limits: FileLimits, counted: (chunk: Buffer) => void): AsyncGenerator<FileRow> {
  let bytes = 0
  const metered = body.pipe(new Transform({
    transform (chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      if (bytes > limits.maxBytes) {
        done(new ImportTooLargeError('IMPORT_MAX_BYTES', limits.maxBytes))
        return
      }
      counted(chunk)
      done(null, chunk)
    }
  }))
  // A failed upload (the client went away) fails the read too.
  body.once('error', error => metered.destroy(error))
  let rows = 0
  const source = format === 'csv' ? csvRows(metered, shape) : ndjsonRows(metered)
  for await (const row of source) {
    if (++rows > limits.maxRows) throw new ImportTooLargeError('IMPORT_MAX_ROWS', limits.maxRows)
    yield row
  }
}

async function * ndjsonRows (input: Readable): AsyncGenerator<FileRow> {
  let line = 0
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++
    // A byte order mark may open the file; blank lines (a last line end, say) hold no row.
    const json = line === 1 ? text.replace(/^\uFEFF/, '') : text
    if (json.trim() === '') continue
    let fields: unknown
    try {
      fields = JSON.parse(json)
    } catch {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: 'is not JSON' } }
      continue
    }
    if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: 'is not a JSON object' } }
      continue
    }
    yield { line, fields: fields as Record<string, unknown> }
  }
}

async function * csvRows (input: Readable, { fields, integers }: RowShape): AsyncGenerator<FileRow> {
  const skipped: FileRow[] = []
  const parser = input.pipe(parse({ bom: true, info: true, skip_empty_lines: true, skip_records_with_error: true }))
  // A row csv-parse cannot read (a stray quote, a wrong number of cells) is reported and passed over.
  parser.on('skip', (error: CsvError & { lines?: number }) => {
    const line = error.lines ?? 0
    skipped.push({ line, problem: { line, type: '/problems/invalid-import', detail: csvDetail(error) } })
  })
  input.once('error', error => parser.destroy(error))
  let header: string[] | null = null
  for await (const { record, info } of parser as AsyncIterable<{ record: string[], info: { lines: number } }>) {
    yield * skipped.splice(0)
    if (header === null) {
      header = record
      checkHeader(header, fields)
      continue
    }
    const row: Record<string, unknown> = {}
    for (let i = 0; i < header.length; i++) {
      const [name, cell] = [header[i]!, record[i]!]
      if (cell === '') continue
      row[name] = integers.includes(name) && decimal.test(cell) ? Number(cell) : unescapeFormula(cell)
    }
    yield { line: info.lines, fields: row }
  }
  yield * skipped.splice(0)
  if (header === null) throw new InvalidHeaderError([{ parameter: 'header', detail: 'is missing: the file is empty' }])
}

function checkHeader (header: string[], fields: readonly string[]): void {
  const problems = header.flatMap((name, i) => {
    if (!fields.includes(name)) return [{ parameter: name, detail: `is not a field of this resource (the fields are ${fields.join(', ')})` }]
    if (header.indexOf(name) !== i) return [{ parameter: name, detail: 'is named twice' }]
    return []
  })
  if (problems.length > 0) throw new InvalidHeaderError(problems)
}

/** csv-parse's reasons in the service's words, without the text of the row. */
function csvDetail (error: CsvError): string {
  switch (error.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return 'has a different number of cells than the header'
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'opens a quoted cell that is never closed'
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return 'has a character after the closing quote of a cell (a quote inside a quoted cell is written twice: "")'
    default:
      return 'is not a CSV row (RFC 4180)'
  }
}
