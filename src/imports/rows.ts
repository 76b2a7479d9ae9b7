// Reads an import's file as it arrives: CSV or NDJSON rows with their line numbers, within the byte and row limits.
import type { ImportProblem } from '../contract/api-types.js'
import { csvRecords, type ReaderOptions, unescapeFormula } from '../formats/csv.js'
import { type JsonProblem, parseIJson } from '../formats/i-json.js'
import { unmetered } from '../formats/work-meter.js'
import { type Pacer, pacer } from './pacer.js'

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
  readonly limit: 'IMPORT_MAX_BYTES' | 'IMPORT_MAX_ROWS'
  readonly value: number

  constructor (limit: 'IMPORT_MAX_BYTES' | 'IMPORT_MAX_ROWS', value: number) {
    super(`The file has more than the ${value} ${limit === 'IMPORT_MAX_BYTES' ? 'bytes' : 'rows'} one import takes (${limit}); split it`)
    this.limit = limit
    this.value = value
  }
}

/** A CSV header the collection cannot take: `refused` columns, each name refused said once, with why (the first ones if `more`). */
export class InvalidHeaderError extends Error {
  override name = 'InvalidHeaderError'
  readonly columns: { parameter: string, detail: string }[]

  constructor (columns: { parameter: string, detail: string }[], refused = columns.length, more = false) {
    super(`The CSV header has ${refused === 1 ? '1 column' : `${refused} columns`} the import cannot take${more ? `; the first ${columns.length} names refused are listed` : ''}`)
    this.columns = columns
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

/** Rows between two looks at the clock: a look costs about what reading a small row does (0.2 µs against 1). */
export const rowsPerLook = 16

/**
 * The file's rows in order; `counted` is given each chunk read, `pace` asked for a turn of the event loop
 * between chunks and every `rowsPerLook` rows. Throws ImportTooLargeError as soon as a limit is passed,
 * InvalidHeaderError before the first row of a CSV whose header will not do.
 */
export async function * fileRows (body: AsyncIterable<Arrived>, format: ImportFormat, shape: RowShape, limits: FileLimits, counted: Counted, pace: Pacer = pacer()): AsyncGenerator<FileRow> {
  let rows = 0
  // The loop is shared by time, checked with each chunk (a record that never ends gives no row) and every few rows.
  const text = paced(utf8(metered(body, limits.maxBytes, counted)), pace)
  const source = format === 'csv' ? csvRows(text, shape) : ndjsonRows(text)
  for await (const row of source) {
    if (++rows > limits.maxRows) throw new ImportTooLargeError('IMPORT_MAX_ROWS', limits.maxRows)
    if (rows % rowsPerLook === 0) {
      const turn = pace()
      if (turn !== null) await turn
    }
    yield row
  }
}

/** A chunk of the file, and the pieces of the request's body it arrived in. */
export interface Arrived { chunk: Buffer, pieces: number }

/**
 * The file's bytes, counted against `maxBytes`, as they arrive; `counted` is given each chunk and the
 * pieces it arrived in, and awaited (it may charge the quota for them).
 */
async function * metered (body: AsyncIterable<Arrived>, maxBytes: number, counted: Counted): AsyncGenerator<Buffer> {
  let bytes = 0
  for await (const { chunk, pieces } of body) {
    bytes += chunk.length
    if (bytes > maxBytes) throw new ImportTooLargeError('IMPORT_MAX_BYTES', maxBytes)
    const charged = counted(chunk, pieces)
    if (charged !== undefined) await charged
    yield chunk
  }
}

/** Told of each chunk of the file read, and of the pieces of the body it arrived in. */
export type Counted = (chunk: Buffer, pieces: number) => Promise<void> | void

/** The chunks, the event loop given a turn between two of them once one is due. */
async function * paced<T> (chunks: AsyncIterable<T>, pace: Pacer): AsyncGenerator<T> {
  for await (const chunk of chunks) {
    const turn = pace()
    if (turn !== null) await turn
    yield chunk
  }
}

/** The file is not UTF-8. */
export class NotUtf8Error extends Error {
  override name = 'NotUtf8Error'
  readonly offset: number

  constructor (offset: number, atEnd = false) {
    super(atEnd ? `The file is not valid UTF-8: it ends inside a character (at byte ${offset}, counting from 0)` : `The file is not valid UTF-8 at byte ${offset} (counting from 0)`)
    this.offset = offset
  }
}

const replacementCharacter = Buffer.from('\uFFFD')

/**
 * Where in `chunk` its first byte that is not UTF-8 is: the first U+FFFD a lenient decoder makes of
 * it that the chunk did not hold as such. 0 when there is none: the sequence that failed began in the
 * chunk before.
 */
function firstBadByte (chunk: Buffer): number {
  const text = new TextDecoder('utf-8').decode(chunk)
  // Every character before a U+FFFD was decoded from bytes as they are, so their length in UTF-8 is
  // where it came from; counted from the one before, so that a chunk of many is read once, not once each.
  let byte = 0
  let counted = 0
  for (let at = text.indexOf('\uFFFD'); at !== -1; at = text.indexOf('\uFFFD', at + 1)) {
    byte += Buffer.byteLength(text.slice(counted, at))
    counted = at
    if (!chunk.subarray(byte, byte + replacementCharacter.length).equals(replacementCharacter)) return byte
  }
  return 0
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
      throw new NotUtf8Error(offset + firstBadByte(chunk))
    }
    offset += chunk.length
  }
  try {
    yield decoder.decode()
  } catch {
    throw new NotUtf8Error(offset, true)
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
 * The text's lines, without their line ends (LF or CRLF). A line longer than `longest` characters is not
 * held whole: once it is known to be, its first `longest` + 1 characters are handed on (to be refused),
 * and the rest of it passed over. Each character is examined once whatever the chunks: a line's pieces
 * are kept until it ends, not joined and split again with every chunk.
 */
export async function * lines (text: AsyncIterable<string>, { longest = longestLine, meter = unmetered }: ReaderOptions = {}): AsyncGenerator<string> {
  let pieces: string[] = []
  let length = 0
  let skipping = false
  for await (const chunk of text) {
    // Counted here, added to the meter once a chunk: each line's search, and its copy.
    let scanned = chunk.length
    let from = 0
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', from)) {
      if (skipping) {
        skipping = false
      } else {
        let line = pieces.length === 0 ? chunk.slice(from, end) : pieces.join('') + chunk.slice(from, end)
        scanned += line.length
        if (line.endsWith('\r')) line = line.slice(0, -1)
        yield line.length > longest ? line.slice(0, longest + 1) : line
      }
      pieces = []
      length = 0
      from = end + 1
    }
    meter(scanned)
    if (skipping || from === chunk.length) continue
    // Enough of the line to tell whether it is too long (a last CR may start its line end), no more.
    const piece = chunk.slice(from, from + longest + 2 - length)
    pieces.push(piece)
    length += piece.length
    if (length - (piece.endsWith('\r') ? 1 : 0) > longest) {
      meter(length)
      yield pieces.join('').slice(0, longest + 1)
      pieces = []
      length = 0
      skipping = true
    }
  }
  if (length > 0) {
    meter(length)
    yield pieces.join('')
  }
}

/** Problems a CSV header is answered with at most: the contract's maxItems for a problem's errors. */
const headerProblemsMax = 100
/** Characters of a column's name a problem repeats (the contract's maxLength for a parameter). */
const echoedName = 100

/** What a header's unknown name may be: a field in other letter case, or a whole header cut by another separator than a comma. */
function unknownHint (name: string, known: ReadonlySet<string>, columns: number): string {
  if (known.has(name.trim().toLowerCase())) return `: names are lower case, without spaces around them (${name.trim().toLowerCase()})`
  const separator = columns === 1 ? [';', '\t'].find(candidate => name.includes(candidate)) : undefined
  if (separator !== undefined) return `: the header seems to separate its names with ${separator === ';' ? 'semicolons' : 'tabs'}; an import's CSV separates them, and its cells, with commas (RFC 4180)`
  return ''
}

/**
 * Refuses a header naming a field the collection does not have, or a field twice: one problem per name
 * (a name given 500,000 times is one problem, not 500,000), the first 100 names, each cut to 100
 * characters; the error counts every column refused.
 */
function checkHeader (header: string[], fields: readonly string[]): void {
  const known = new Set(fields)
  const seen = new Set<string>()
  const named = new Map<string, number>()
  let refused = 0
  for (const name of header) {
    if (known.has(name) && !seen.has(name)) {
      seen.add(name)
      continue
    }
    refused++
    const columns = named.get(name)
    if (columns !== undefined || named.size < headerProblemsMax) named.set(name, (columns ?? 0) + 1)
  }
  if (refused === 0) return
  const problems = [...named].map(([name, columns]) => ({
    parameter: name.length > echoedName ? name.slice(0, echoedName - 1) + '…' : name,
    detail: !known.has(name)
      ? `is not a field of this resource${unknownHint(name, known, header.length)} (the fields are ${fields.join(', ')})${columns > 1 ? `; ${columns} columns have this name` : ''}`
      : columns === 1 ? 'is named twice' : `is named ${columns + 1} times`
  }))
  let listed = 0
  for (const columns of named.values()) listed += columns
  throw new InvalidHeaderError(problems, refused, refused > listed)
}
