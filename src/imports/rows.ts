// Reads an import's file as it arrives: CSV or NDJSON rows with their line numbers, within the byte and row limits.
import { type Readable, Transform } from 'node:stream'
import type { ImportProblem } from '../contract/api-types.js'
import { csvRecords, unescapeFormula } from '../formats/csv.js'
import { type JsonProblem, parseIJson } from '../formats/i-json.js'

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

/** Characters of one NDJSON line: far beyond any row (the longest field is 500 characters). */
const longestLine = 1 << 20
/** ImportProblem.pointer's maxLength in openapi.yaml: a member's name may be longer. */
const longestPointer = 200
const clip = (text: string, max: number): string => text.length <= max ? text : text.slice(0, max - 1) + '…'

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
  const text = utf8(metered)
  const source = format === 'csv' ? csvRows(text, shape) : ndjsonRows(text)
  for await (const row of source) {
    if (++rows > limits.maxRows) throw new ImportTooLargeError('IMPORT_MAX_ROWS', limits.maxRows)
    yield row
  }
}

/** The file is not UTF-8. */
export class NotUtf8Error extends Error {
  override name = 'NotUtf8Error'
  constructor (readonly offset: number) {
    super(`The file is not valid UTF-8 (at byte ${offset} or after it)`)
  }
}

/**
 * The bytes as text, refusing what is not UTF-8 (decoding it into U+FFFD would store text the client
 * never sent), without a byte order mark at the start.
 */
async function * utf8 (bytes: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
  let offset = 0
  for await (const chunk of bytes) {
    try {
      yield decoder.decode(chunk, { stream: true })
    } catch {
      throw new NotUtf8Error(offset)
    }
    offset += chunk.length
  }
  try {
    yield decoder.decode()
  } catch {
    throw new NotUtf8Error(offset)
  }
}

async function * ndjsonRows (text: AsyncIterable<string>): AsyncGenerator<FileRow> {
  let line = 0
  for await (const json of lines(text)) {
    line++
    // Blank lines (a last line end, say) hold no row.
    if (json.trim() === '') continue
    if (json.length > longestLine) {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: `is longer than ${longestLine} characters` } }
      continue
    }
    let fields: unknown
    let problems: JsonProblem[]
    try {
      ({ value: fields, problems } = parseIJson(json, { max: 1 }))
    } catch {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: 'is not JSON' } }
      continue
    }
    // A row is refused as a body would be (a lone surrogate, a member given twice), for the first reason.
    const [broken] = problems
    if (broken !== undefined) {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: broken.detail, pointer: clip(broken.pointer, longestPointer) } }
      continue
    }
    if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: 'is not a JSON object' } }
      continue
    }
    yield { line, fields: fields as Record<string, unknown> }
  }
}

async function * csvRows (text: AsyncIterable<string>, { fields, integers }: RowShape): AsyncGenerator<FileRow> {
  let header: string[] | null = null
  for await (const record of csvRecords(text)) {
    const { line } = record
    if ('error' in record) {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: record.error } }
      continue
    }
    if (header === null) {
      header = record.cells
      checkHeader(header, fields)
      continue
    }
    if (record.cells.length !== header.length) {
      yield { line, problem: { line, type: '/problems/invalid-import', detail: `has ${record.cells.length} cells, the header ${header.length}` } }
      continue
    }
    const row: Record<string, unknown> = {}
    for (let i = 0; i < header.length; i++) {
      const [name, cell] = [header[i]!, record.cells[i]!]
      if (cell === '') continue
      row[name] = integers.includes(name) && decimal.test(cell) ? Number(cell) : unescapeFormula(cell)
    }
    yield { line, fields: row }
  }
  if (header === null) throw new InvalidHeaderError([{ parameter: 'header', detail: 'is missing: the file is empty' }])
}

/**
 * The text's lines, without their line ends (LF or CRLF). A line past longestLine is not held whole: it
 * is handed on as it stands once (to be refused), and the rest of it passed over.
 */
async function * lines (text: AsyncIterable<string>): AsyncGenerator<string> {
  let pending = ''
  let skipping = false
  for await (let chunk of text) {
    if (skipping) {
      const end = chunk.indexOf('\n')
      if (end === -1) continue
      chunk = chunk.slice(end + 1)
      skipping = false
    }
    const parts = (pending + chunk).split('\n')
    pending = parts.pop()!
    for (const part of parts) yield part.endsWith('\r') ? part.slice(0, -1) : part
    if (pending.length > longestLine) {
      yield pending
      pending = ''
      skipping = true
    }
  }
  if (pending !== '') yield pending
}

function checkHeader (header: string[], fields: readonly string[]): void {
  const problems = header.flatMap((name, i) => {
    if (!fields.includes(name)) return [{ parameter: name, detail: `is not a field of this resource (the fields are ${fields.join(', ')})` }]
    if (header.indexOf(name) !== i) return [{ parameter: name, detail: 'is named twice' }]
    return []
  })
  if (problems.length > 0) throw new InvalidHeaderError(problems)
}
