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
