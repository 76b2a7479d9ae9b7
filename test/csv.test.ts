// CSV as exports write it and imports read it: any cells, written then read back in chunks of any size, are the same cells.
import fc from 'fast-check'
import t from 'tap'
import { csvCell, type CsvRecord, csvRecords, csvRow, unescapeFormula } from '../src/formats/csv.js'

async function read (text: string, cuts: number[]): Promise<CsvRecord[]> {
  const at = [...new Set(cuts.map(c => c % (text.length + 1)))].sort((a, b) => a - b)
  const chunks = [...at, text.length].map((end, i) => text.slice(i === 0 ? 0 : at[i - 1], end)).filter(c => c !== '')
  const records: CsvRecord[] = []
  for await (const record of csvRecords((async function * () { yield * chunks })())) records.push(record)
  return records
}

const cell = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('', '"', '""', ',', '\r\n', '\n', '\r', "'=1+1", '=SUM(A1)', '-5', '@x', ' '))
const row = fc.array(cell, { minLength: 1, maxLength: 5 })

t.test('rows written with csvRow read back as the same cells, with their first lines, however the text is cut', async t => {
  await fc.assert(fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), async (rows, cuts, lastLineEnd) => {
    // A record of one empty cell is a blank line, which holds no record: written, it is quoted.
    const written = rows.map(cells => cells.length === 1 && cells[0] === '' ? '""\r\n' : csvRow(cells)).join('')
    const text = lastLineEnd ? written : written.slice(0, -2)
    const records = await read(text, cuts)
    if (JSON.stringify(records.map(r => 'cells' in r ? r.cells.map(unescapeFormula) : r)) !== JSON.stringify(rows)) {
      throw new Error(`${JSON.stringify(text)} read as ${JSON.stringify(records)}`)
    }
    let line = 1
    for (const [i, cells] of rows.entries()) {
      if (records[i]!.line !== line) throw new Error(`record ${i} starts on line ${records[i]!.line}, not ${line}: ${JSON.stringify(text)}`)
      line += 1 + cells.join('').split('\n').length - 1
    }
  }), { seed: 20261127, numRuns: 400 })
  t.pass('every generated file read back')
})

t.test('a formula is escaped, and only text that could be one', async t => {
  for (const [value, written] of [['=1+1', "'=1+1"], ['+1', "'+1"], ['-x', "'-x"], ['@a', "'@a"], ['\tx', "'\tx"], ["'=x", "''=x"], ["'Salem's Lot", "'Salem's Lot"], ['Dune', 'Dune'], [-5, '-5'], [null, '']] as const) {
    t.equal(csvCell(value).replace(/^"|"$/g, ''), written, JSON.stringify(value))
    if (typeof value === 'string') t.equal(unescapeFormula(written), value, `${JSON.stringify(written)} reads back`)
  }
})

t.test('what is not RFC 4180 is refused by the line it starts on, and reading goes on', async t => {
  const text = 'a,b\r\nx"y,z\r\n"q"r,s\r\nlone\rcr,t\r\n\r\n\nok,1\n"never closed,\r\n'
  const records = await read(text, [])
  // However the text arrives, it reads the same.
  for (let cut = 1; cut < text.length; cut++) t.same(await read(text, [cut]), records, `cut at ${cut}`)
  t.same(await read('"a""b"\r\nc\r', [5, 7, 9]), [{ line: 1, cells: ['a"b'] }, { line: 2, error: 'has a carriage return that does not end the line (quote the cell)' }])
  t.same(records.map(r => [r.line, 'cells' in r ? r.cells : r.error.split(' ').slice(0, 5).join(' ')]), [
    [1, ['a', 'b']],
    [2, 'has a quote inside a'],
    [3, 'has a character after the'],
    [4, 'has a carriage return that'],
    [7, ['ok', '1']],
    [8, 'opens a quoted cell that']
  ])
  const long = await read('"' + 'x'.repeat((1 << 20) + 10), [1 << 19, (1 << 20) + 5])
  t.match(long, [{ line: 1, error: /longer than 1048576 characters/ }], 'an unclosed quote is given up past a bound, not read again for ever')
})

// Text near the grammar's edges: quotes, escaped quotes, commas, every kind of line end, characters of two code units.
const hostileText = fc.array(fc.constantFrom('a', 'bc', ',', '"', '""', '\r', '\n', '\r\n', 'é', '😀'), { maxLength: 60 }).map(parts => parts.join(''))

t.test('however a file is cut into chunks, it reads as the same records, errors and line numbers as in one piece', async t => {
  const read = async (text: string, cuts: number[], longest?: number) => {
    const records: CsvRecord[] = []
    for await (const record of csvRecords(chunked(text, cuts), longest === undefined ? {} : { longest })) records.push(record)
    return records
  }
  // A small bound stands in for the 1 MiB one: records longer than it are refused, wherever the chunks end.
  await fc.assert(fc.asyncProperty(hostileText, fc.array(fc.nat(), { maxLength: 10 }), fc.option(fc.integer({ min: 1, max: 24 }), { nil: undefined }), async (text, cuts, longest) => {
    const whole = await read(text, [], longest)
    const cut = await read(text, cuts, longest)
    if (JSON.stringify(cut) !== JSON.stringify(whole)) throw new Error(`${JSON.stringify(text)} cut at ${cuts} (longest ${longest}): ${JSON.stringify(cut)}, in one piece ${JSON.stringify(whole)}`)
  }), { seed: 20261128, numRuns: 3000 })
  t.pass('every generated file')
  // A record just over the bound is refused whether it arrives whole or cut, and the next one read.
  const long = 'x'.repeat((1 << 20) + 1) + '\r\nok\r\n'
  for (const cuts of [[], [1 << 19], [1 << 20, (1 << 20) + 2]]) {
    t.match(await read(long, cuts), [{ line: 1, error: /^starts a record longer than 1048576 characters/ }, { line: 2, cells: ['ok'] }], `cut at ${cuts}`)
  }
  // Passed over as the grammar reads it: quoted line ends are the record's, and count as lines.
  t.match(await read('"a\nb\nc,d"\r\ne\r\n"f\n', [], 4), [{ line: 1, error: /^starts a record longer than 4 characters/ }, { line: 4, cells: ['e'] }, { line: 5, error: /^opens a quoted cell that is never closed, so the rest of the file was read into that cell/ }])
  const longest = 'x'.repeat(1 << 20)
  t.same(await read(`${longest}\r\n"${longest.slice(2)}"\r\n`, [1 << 20, (1 << 20) + 1]), [{ line: 1, cells: [longest] }, { line: 2, cells: [longest.slice(2)] }], 'a record of 1 MiB is read, its CRLF cut or not')
})

/** The text cut at these places (any number, in any order), as chunks. */
function chunked (text: string, cuts: number[]): AsyncIterable<string> {
  const at = [...new Set(cuts.map(c => c % (text.length + 1)))].sort((a, b) => a - b)
  const chunks = [...at, text.length].map((end, i) => text.slice(i === 0 ? 0 : at[i - 1], end)).filter(c => c !== '')
  return (async function * () { yield * chunks })()
}
