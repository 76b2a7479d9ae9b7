// CSV as exports write it: RFC 4180 quoting, CRLF, and text that spreadsheets will not run as a formula.
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

/** Characters one record may take: far beyond any record's cells (the longest field is 500 characters). */
const longestRecord = 1 << 20

const [quote, comma, lf, cr] = ['"', ',', '\n', '\r'].map(c => c.charCodeAt(0)) as [number, number, number, number]

/**
 * Reads RFC 4180 records from text arriving in chunks: cells quoted or not, `""` for a quote inside a
 * quoted cell, which may hold commas and line ends; records end with CRLF or LF; blank lines hold none.
 * A record that breaks the grammar (a quote inside an unquoted cell, text after a closing quote, a
 * quoted cell never closed) is given as an error, and reading goes on at the next line. Written here
 * rather than taken from csv-parse, which cost 7 µs a record with line numbers and error recovery
 * against about 1 µs here (BENCHMARKS.md, imports).
 */
export async function * csvRecords (chunks: AsyncIterable<string>): AsyncGenerator<CsvRecord> {
  let text = ''
  let at = 0
  let line = 1
  for await (const chunk of withEnd(chunks)) {
    const last = chunk === null
    text = text.slice(at) + (chunk ?? '')
    at = 0
    for (;;) {
      const read = readRecord(text, at, last)
      if (read === null) {
        // Every record is read again from its start as chunks arrive: one that never ends (an
        // unclosed quote) would cost time in the square of its length. Past a bound, it is given up.
        if (text.length - at > longestRecord) {
          yield { line, error: `is part of a record longer than ${longestRecord} characters (a quoted cell never closed?); the rest of this chunk is passed over` }
          line += count(text, at, text.length)
          at = text.length
        }
        break
      }
      const start = line
      line += read.lines
      at = read.end
      if (read.cells !== null) yield { line: start, cells: read.cells }
      else if (read.error !== null) yield { line: start, error: read.error }
    }
  }
}

/** The chunks, then null once they end. */
async function * withEnd (chunks: AsyncIterable<string>): AsyncGenerator<string | null> {
  yield * chunks
  yield null
}

interface Read {
  /** Null for a blank line, or a record in error. */
  cells: string[] | null
  error: string | null
  /** Where the next record starts, and how many line ends this one took. */
  end: number
  lines: number
}

/** The record starting at `from`, or null when the text ends before it does (more is coming unless `last`). */
function readRecord (text: string, from: number, last: boolean): Read | null {
  if (from >= text.length) return null
  const cells: string[] = []
  let i = from
  let lines = 0
  // A blank line (LF or CRLF) holds no record.
  if (text.charCodeAt(i) === lf) return { cells: null, error: null, end: i + 1, lines: 1 }
  if (text.charCodeAt(i) === cr && i + 1 < text.length && text.charCodeAt(i + 1) === lf) return { cells: null, error: null, end: i + 2, lines: 1 }
  for (;;) {
    if (text.charCodeAt(i) === quote) {
      let cell = ''
      let j = i + 1
      for (;;) {
        const close = text.indexOf('"', j)
        if (close === -1) {
          if (!last) return null
          return { cells: null, error: 'opens a quoted cell that is never closed', end: text.length, lines: lines + count(text, i, text.length) }
        }
        if (close + 1 >= text.length && !last) return null
        cell += text.slice(j, close)
        if (text.charCodeAt(close + 1) === quote) {
          cell += '"'
          j = close + 2
          continue
        }
        lines += count(text, i, close)
        i = close + 1
        break
      }
      cells.push(cell)
      const next = text.charCodeAt(i)
      // Only the last chunk ends right after a closing quote (any other waits for the next character).
      if (i >= text.length) return { cells, error: null, end: i, lines }
      if (next === comma) {
        i++
        continue
      }
      const ended = lineEnd(text, i, last)
      if (ended === null) return null
      if (ended > 0) return { cells, error: null, end: i + ended, lines: lines + 1 }
      return skipLine(text, i, lines, last, 'has a character after the closing quote of a cell (a quote inside a quoted cell is written twice: "")')
    }
    // An unquoted cell runs to the next comma or line end.
    let j = i
    while (j < text.length) {
      const c = text.charCodeAt(j)
      if (c === comma || c === lf || c === cr) break
      if (c === quote) return skipLine(text, j, lines, last, 'has a quote inside a cell that is not quoted (quote the cell, and write the quote twice: "")')
      j++
    }
    if (j >= text.length && !last) return null
    cells.push(text.slice(i, j))
    if (j >= text.length) return { cells, error: null, end: j, lines }
    if (text.charCodeAt(j) === comma) {
      i = j + 1
      continue
    }
    const ended = lineEnd(text, j, last)
    if (ended === null) return null
    // A lone CR ends no line (RFC 4180 ends lines with CRLF; LF is taken too): the cell holds it.
    if (ended === 0) return skipLine(text, j, lines, last, 'has a carriage return that does not end the line (quote the cell)')
    return { cells, error: null, end: j + ended, lines: lines + 1 }
  }
}

/** Characters of the line end at `i`: 1 for LF, 2 for CRLF, 0 for neither; null when the text ends before it is known. */
function lineEnd (text: string, i: number, last: boolean): number | null {
  const c = text.charCodeAt(i)
  if (c === lf) return 1
  if (c !== cr) return 0
  if (i + 1 >= text.length) return last ? 0 : null
  return text.charCodeAt(i + 1) === lf ? 2 : 0
}

/** A record in error: the rest of its line is passed over. */
function skipLine (text: string, from: number, lines: number, last: boolean, error: string): Read | null {
  const end = text.indexOf('\n', from)
  if (end === -1 && !last) return null
  return { cells: null, error, end: end === -1 ? text.length : end + 1, lines: lines + (end === -1 ? 0 : 1) }
}

/** Line ends (LF) between `from` and `to`. */
function count (text: string, from: number, to: number): number {
  let n = 0
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++
  return n
}
