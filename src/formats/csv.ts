// CSV as exports write it: RFC 4180 quoting, CRLF, and text that spreadsheets will not run as a formula.
import { unmetered, type WorkMeter } from './work-meter.js'
/** A cell a spreadsheet would read as a formula (OWASP's list), after any apostrophes already escaping one. */
const formula = /^'*[=+\-@\t\r]/
const quoted = /[",\r\n]/
const quotes = /"/g

/**
 * One cell: null is empty, numbers as they are, text quoted when it holds a comma, quote or line end.
 * Text that a spreadsheet would run (`=HYPERLINK(…)`) gets a `'` in front, which spreadsheets show as
 * text; unescapeFormula() takes it off again, so that an export imports back unchanged.
 */
export function csvCell (value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value !== 'string') return String(value)
  const text = formula.test(value) ? `'${value}` : value
  return quoted.test(text) ? `"${text.replace(quotes, '""')}"` : text
}

/** A cell's text as the export had it before csvCell() escaped a formula. */
export function unescapeFormula (cell: string): string {
  return cell.startsWith("'") && formula.test(cell) ? cell.slice(1) : cell
}

/** A row of cells, ended by CRLF. */
export function csvRow (values: readonly unknown[]): string {
  let line = ''
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : ',') + csvCell(values[i])
  return line + '\r\n'
}

/** A record of a CSV file and the line it starts on, or why the text from that line is not a record. */
export type CsvRecord = { line: number, cells: string[] } | { line: number, error: string }

export interface ReaderOptions {
  /** Characters one record may hold; past them, it is refused and the rest of it passed over. */
  longest?: number
  /** Told of the characters the reader examines, each time it examines one (tests prove it linear). */
  meter?: WorkMeter
}

/** Characters one record may take: far beyond any record's cells (the longest field is 500 characters). */
export const longestRecord = 1 << 20

const [quote, comma, lf, cr] = ['"', ',', '\n', '\r'].map(c => c.charCodeAt(0)) as [number, number, number, number]

// Where a reader stands in the text; a chunk that ends anywhere leaves it there for the next one.
/** Before a record's first character (a blank line holds no record). */
const atRecord = 0
/** A record began with CR: LF makes it a blank line. */
const atRecordCr = 1
/** After a comma: a cell begins. */
const atCell = 2
/** In a cell that is not quoted. */
const inCell = 3
/** In a quoted cell. */
const inQuotes = 4
/** After a quote in a quoted cell: a second quote is a quote in the cell, anything else closed it. */
const atQuote = 5
/** After a CR that ends a cell: LF ends the record. */
const atCr = 6
/** After a CR that follows a closing quote: LF ends the record. */
const atCrAfterQuote = 7
/** In a record in error: the rest of its line is passed over, to its LF. */
const skipping = 8

const problems = {
  quoteInCell: 'has a quote inside a cell that is not quoted (quote the cell, and write the quote twice: "")',
  afterQuote: 'has a character after the closing quote of a cell (a quote inside a quoted cell is written twice: "")',
  loneCr: 'has a carriage return that does not end the line (quote the cell)',
  unclosed: 'opens a quoted cell that is never closed, so the rest of the file was read into that cell (close the quote, or write a quote inside the cell twice: "")'
}

/**
 * Reads RFC 4180 records from text given in chunks: cells quoted or not, `""` for a quote inside a
 * quoted cell, which may hold commas and line ends; records end with CRLF or LF; blank lines hold none.
 * A record that breaks the grammar (a quote inside an unquoted cell, text after a closing quote, a
 * quoted cell never closed) is given as an error, and reading goes on at the next line. A record
 * longer than `longest` characters is given as an error as soon as it is, and the rest of it read
 * (as the grammar reads it) without being kept.
 *
 * Each character is examined once or twice whatever the chunks: where a chunk ends, the reader keeps its
 * place (and whether it is in quotes) rather than reading the record again with the next chunk,
 * which cost time in the square of a record's length. Written here rather than taken from
 * csv-parse, which cost 7 µs a record with line numbers and error recovery against about 1 µs here
 * (docs/benchmarks-history.md, imports).
 */
export class CsvReader {
  readonly #longest: number
  readonly #meter: WorkMeter
  #state = atRecord
  /** Characters of the text before the current chunk; where in the text the current record starts. */
  #offset = 0
  #start = 0
  /** Line ends (LF) read so far; the line the current record starts on. */
  #lineEnds = 0
  #line = 1
  #cells: string[] = []
  #cell = ''
  /** The current record has been given as an error already: the rest of it is read, not kept. */
  #refused = false

  constructor ({ longest = longestRecord, meter = unmetered }: ReaderOptions = {}) {
    this.#longest = longest
    this.#meter = meter
  }

  /** Reads the next chunk of the text; the records it ends are appended to `out`. */
  read (chunk: string, out: CsvRecord[]): void {
    const n = chunk.length
    const offset = this.#offset
    let state = this.#state
    let scanned = 0
    // The first LF at or after a place in this chunk (n when there is none), each stretch searched once.
    let nextLf = -1
    const lfFrom = (from: number): number => {
      if (nextLf < from) {
        const found = chunk.indexOf('\n', from)
        nextLf = found === -1 ? n : found
        scanned += nextLf + 1 - from
      }
      return nextLf
    }
    let i = 0
    while (i < n) {
      switch (state) {
        case atRecord: {
          this.#start = offset + i
          this.#line = this.#lineEnds + 1
          const c = chunk.charCodeAt(i)
          scanned++
          if (c === lf) {
            this.#lineEnds++
            i++
          } else if (c === cr) {
            state = atRecordCr
            i++
          } else if (c === quote) {
            state = inQuotes
            i++
          } else {
            state = inCell
          }
          break
        }
        case atCell:
          scanned++
          if (chunk.charCodeAt(i) === quote) {
            state = inQuotes
            i++
          } else {
            state = inCell
          }
          break
        case inCell: {
          // An unquoted cell runs to the next comma or line end.
          let j = i
          let c = 0
          while (j < n) {
            c = chunk.charCodeAt(j)
            if (c === comma || c === lf || c === cr || c === quote) break
            j++
          }
          scanned += j - i + 1
          if (!this.#refused) this.#cell += chunk.slice(i, j)
          if (j === n) {
            i = n
            break
          }
          i = j + 1
          if (c === quote) {
            this.#fail(offset + i, problems.quoteInCell, out)
            state = skipping
            break
          }
          state = this.#cellEnds(c, offset + j, atCr, out)
          break
        }
        case inQuotes: {
          const close = chunk.indexOf('"', i)
          const end = close === -1 ? n : close
          scanned += end + 1 - i
          // Line ends inside the cell are lines of the file.
          for (let at = lfFrom(i); at < end; at = lfFrom(at + 1)) this.#lineEnds++
          if (!this.#refused) this.#cell += chunk.slice(i, end)
          if (close === -1) {
            i = n
          } else {
            state = atQuote
            i = close + 1
          }
          break
        }
        case atQuote: {
          const c = chunk.charCodeAt(i)
          scanned++
          i++
          if (c === quote) {
            if (!this.#refused) this.#cell += '"'
            state = inQuotes
            break
          }
          if (c !== comma && c !== lf && c !== cr) {
            this.#fail(offset + i, problems.afterQuote, out)
            state = skipping
            break
          }
          state = this.#cellEnds(c, offset + i - 1, atCrAfterQuote, out)
          break
        }
        case atRecordCr:
        case atCr:
        case atCrAfterQuote:
          scanned++
          if (chunk.charCodeAt(i) === lf) {
            this.#lineEnds++
            // A blank line (CRLF) holds no record.
            if (state !== atRecordCr) this.#end(offset + i - 1, out)
            state = atRecord
            i++
          } else {
            // A lone CR ends no line (RFC 4180 ends lines with CRLF; LF is taken too).
            this.#fail(offset + i, state === atCrAfterQuote ? problems.afterQuote : problems.loneCr, out)
            state = skipping
          }
          break
        default: {
          const at = lfFrom(i)
          if (at < n) {
            this.#lineEnds++
            this.#refused = false
            state = atRecord
          }
          i = at + 1
        }
      }
    }
    // A record still open: past the bound it is refused now, whatever follows, and no more of it kept.
    if (!this.#refused && state !== atRecord && state !== skipping) {
      const pendingCr = state === atRecordCr || state === atCr || state === atCrAfterQuote ? 1 : 0
      if (offset + n - pendingCr - this.#start > this.#longest) this.#fail(offset + n, '', out)
    }
    this.#offset = offset + n
    this.#state = state
    this.#meter(scanned)
  }

  /** The text has ended: the record it ends, if any, is appended to `out`. */
  end (out: CsvRecord[]): void {
    const end = this.#offset
    switch (this.#state) {
      case atCell:
      case inCell:
      case atQuote:
        this.#take()
        this.#end(end, out)
        break
      case inQuotes:
        this.#fail(end, problems.unclosed, out)
        break
      case atRecordCr:
      case atCr:
        this.#fail(end, problems.loneCr, out)
        break
      case atCrAfterQuote:
        this.#fail(end, problems.afterQuote, out)
        break
    }
    this.#state = atRecord
  }

  /** The current cell is complete. */
  #take (): void {
    if (!this.#refused) this.#cells.push(this.#cell)
    this.#cell = ''
  }

  /** The current record ended, its text running to `to` (its line end left out). */
  #end (to: number, out: CsvRecord[]): void {
    if (!this.#refused) out.push(to - this.#start > this.#longest ? { line: this.#line, error: this.#tooLong() } : { line: this.#line, cells: this.#cells })
    this.#cells = []
    this.#refused = false
  }

  /** A cell ended at `c` (a comma, LF or CR, at `at` in the text): the state that follows, `afterCr` after a CR. */
  #cellEnds (c: number, at: number, afterCr: number, out: CsvRecord[]): number {
    this.#take()
    if (c === comma) return atCell
    if (c !== lf) return afterCr
    this.#lineEnds++
    this.#end(at, out)
    return atRecord
  }

  /**
   * The current record is in error, found once its text up to `to` was read: that error, unless the
   * record was too long by then (which is said instead, whatever chunks the text came in).
   */
  #fail (to: number, error: string, out: CsvRecord[]): void {
    if (!this.#refused) out.push({ line: this.#line, error: to - this.#start > this.#longest ? this.#tooLong() : error })
    this.#cells = []
    this.#cell = ''
    this.#refused = true
  }

  #tooLong (): string {
    return `starts a record longer than ${this.#longest} characters (a quoted cell never closed?), which is passed over`
  }
}

/** The records of text arriving in chunks, as CsvReader reads them. */
export async function * csvRecords (chunks: AsyncIterable<string>, options?: ReaderOptions): AsyncGenerator<CsvRecord> {
  const reader = new CsvReader(options)
  const records: CsvRecord[] = []
  for await (const chunk of chunks) {
    reader.read(chunk, records)
    for (const record of records) yield record
    records.length = 0
  }
  reader.end(records)
  for (const record of records) yield record
}
