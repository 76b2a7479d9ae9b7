// Readers of client bytes cost work linear in them, counted (never timed): JSON bodies, query strings, X-Request-Id, the URL redaction, an import's CSV and NDJSON however chunked.
import fc from 'fast-check'
import t from 'tap'
import { csvRecords } from '../src/formats/csv.js'
import { maxNesting, maxProblems, parseIJson } from '../src/formats/i-json.js'
import type { WorkMeter } from '../src/formats/work-meter.js'
import { queryEncodingProblems } from '../src/http/protocol.js'
import { lines } from '../src/imports/rows.js'
import { urlRedactor } from '../src/observability/log-redaction.js'
import { requestId } from '../src/observability/request-id.js'

/** The work `read` does on `input`, as its meter counts it. */
function workOf (read: (meter: WorkMeter) => unknown): number {
  let work = 0
  try {
    read(units => { work += units })
  } catch {}
  return work
}

/**
 * Holds when doubling the input at most doubles the work, plus `constant`: the input is `shape(n)`,
 * whose size grows in proportion to n. Quadratic work fails it once n is large enough; `constant`
 * is what a reader may spend whatever the size (the capped parts: 100 problems, 64 levels).
 */
function linear (shape: (n: number) => string, read: (input: string, meter: WorkMeter) => unknown, n: number, constant: number): boolean {
  const [small, large] = [shape(n), shape(2 * n)]
  const [smallWork, largeWork] = [workOf(meter => read(small, meter)), workOf(meter => read(large, meter))]
  if (largeWork <= 2 * smallWork + constant) return true
  throw new Error(`${small.length} characters cost ${smallWork}, ${large.length} cost ${largeWork}: ${small.slice(0, 120)}…`)
}

// Values around the rest, repeated as deep as the shape says: each level may also hold a problem (a name
// given twice, a name that is not Unicode, __proto__), whose pointer is as deep as the level.
const levels: Record<string, [string, string]> = {
  array: ['[', ']'],
  object: ['{"a":', '}'],
  duplicate: ['{"a":0,"a":', '}'],
  escapedDuplicate: ['{"\\u0061":0,"a":', '}'],
  surrogateName: ['{"\\ud800":', '}'],
  proto: ['{"__proto__":0,"b":', '}'],
  afterStrings: ['["\\\\\\"",', ']']
}
// What sits at the bottom, n of each: the problems, and the strings that are costly to skip.
const contents: Record<string, (n: number) => string> = {
  loneSurrogates: n => Array(n).fill('"\\ud800"').join(','),
  duplicateMembers: n => '{' + Array(n).fill('"a":1').join(',') + '}',
  namesNotUnicode: n => '{' + Array.from({ length: n }, (_, i) => `"\\udc00${i}":1`).join(',') + '}',
  duplicateObjects: n => Array(n).fill('{"a":1,"\\u0061":2}').join(','),
  backslashes: n => '"' + '\\\\'.repeat(n) + '"',
  escapedQuotes: n => '"' + '\\"'.repeat(n) + '"',
  unicodeEscapes: n => '"' + '\\u0041'.repeat(n) + '"',
  backslashNames: n => `{"${'\\\\'.repeat(n)}":1,"${'\\\\'.repeat(n)}":2}`,
  astral: n => '"' + '😀'.repeat(n) + '"',
  nested: n => '['.repeat(n) + ']'.repeat(n),
  whitespace: n => '{' + Array(n).fill('"a" \r\n\t : 1').join(' , ') + '}'
}

const jsonShape = fc.record({
  around: fc.array(fc.tuple(fc.constantFrom(...Object.keys(levels)), fc.integer({ min: 1, max: 3 })), { maxLength: 3 }),
  inside: fc.array(fc.tuple(fc.constantFrom(...Object.keys(contents)), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 3 }),
  n: fc.integer({ min: 200, max: 1200 })
})

/** The JSON text of a shape, for n. */
function jsonText ({ around, inside }: { around: [string, number][], inside: [string, number][] }, n: number): string {
  const opens = around.map(([level, times]) => levels[level]![0].repeat(times * n)).join('')
  const closes = around.map(([level, times]) => levels[level]![1].repeat(times * n)).reverse().join('')
  return `${opens}[${inside.map(([content, times]) => contents[content]!(times * n)).join(',')}]${closes}`
}

// 100 problems, each with a pointer of at most 64 short segments (these shapes' names are short).
const cappedJsonWork = maxProblems * (maxNesting * 24)

t.test('I-JSON checks: doubling any body, however deep, full of problems or of escapes, at most doubles the work', async t => {
  t.equal(parseIJson(jsonText({ around: [], inside: [['loneSurrogates', 1]] }, 200)).problems.length, maxProblems, 'problems are capped')
  t.equal(parseIJson(jsonText({ around: [['duplicate', 1]], inside: [] }, 200)).problems.length, maxNesting + 1, 'one level too deep, and each level\'s name given twice')
  await fc.assert(fc.property(jsonShape, shape => {
    const text = jsonText(shape, shape.n)
    JSON.parse(text)
    return linear(n => jsonText(shape, n), (input, meter) => parseIJson(input, { meter }), shape.n, cappedJsonWork)
  }), { numRuns: 80, seed: 38, endOnFailure: true })
})

t.test('the research note\'s body (20,000 deep, 2,500 lone surrogates) costs work in proportion to its size', async t => {
  const body = '['.repeat(20_000) + Array(2500).fill('"\\ud800"').join(',') + ']'.repeat(20_000)
  let work = 0
  const { problems } = parseIJson(body, { meter: units => { work += units } })
  t.same(problems.map(problem => problem.detail), [`is an array or object nested more than ${maxNesting} deep, which no request of this service needs: flatten it`])
  t.equal(problems[0]!.pointer, '#' + '/0'.repeat(maxNesting))
  t.ok(work < 10 * body.length, `${work} units for ${body.length} characters`)
})

// Pieces of query strings: escapes that are not UTF-8, lone '%', names without values, '+', long values.
const queryPieces = ['%FF&', 'a&', '%%%%&', 'q=%C3%28&', 'x=' + '%41'.repeat(5) + '&', '&&', 'a+b=c+d&', '?', '=', '%E2%82&']
const queryShape = fc.record({
  pieces: fc.array(fc.constantFrom(...queryPieces), { minLength: 1, maxLength: 4 }),
  n: fc.integer({ min: 100, max: 2000 })
})

t.test('query strings: doubling any query at most doubles the work of checking its escapes, and problems stop at 100', async t => {
  t.equal(queryEncodingProblems('/books?' + '%FF&'.repeat(4000)).length, maxProblems)
  await fc.assert(fc.property(queryShape, ({ pieces, n }) =>
    linear(size => '/books?' + pieces.join('').repeat(size), (url, meter) => queryEncodingProblems(url, meter), n, 1000)), { numRuns: 100, seed: 38 })
})

t.test('X-Request-Id: only a short header is read, whatever its size', async t => {
  const redact = urlRedactor(['operator-secret-value'])
  await fc.assert(fc.property(fc.constantFrom('a', 'bsk_', '%', '-', 'operator-secret-value'), fc.integer({ min: 1, max: 5000 }), (piece, n) =>
    linear(size => piece.repeat(size), (header, meter) => requestId(header, urlRedactor(['operator-secret-value'], { meter }), meter), n, 2000)), { numRuns: 100, seed: 38 })
  t.equal(requestId('a'.repeat(128), redact), 'a'.repeat(128))
  t.not(requestId('a'.repeat(129), redact), 'a'.repeat(129))
})

// Pieces of URLs that have cost the redaction more than their length: question marks (a pattern tried at
// each), key prefixes, escapes nested many times, runs of key characters, secrets, credential names.
const urlPieces = ['?', '&', 'bsk_', 'BSK_', '%62sk_', '%2562', '%25', '%', 'a', '-', '_', 'operator-secret-value', 'operator%2Dsecret', '?api_key=x', '&token=', '=', '/', '%41%42', 'é', '#']
const urlShape = fc.record({
  pieces: fc.array(fc.constantFrom(...urlPieces), { minLength: 1, maxLength: 5 }),
  n: fc.integer({ min: 100, max: 2000 })
})

t.test('URL redaction: doubling any URL at most doubles the work of masking it', async t => {
  // A query of 16,000 question marks once cost a pattern tried at each of them (half a second).
  const questions = '/books?' + '?'.repeat(16_000)
  t.equal(urlRedactor([])(questions), questions)
  await fc.assert(fc.property(urlShape, ({ pieces, n }) =>
    linear(size => '/books/' + pieces.join('').repeat(size), (url, meter) => urlRedactor(['operator-secret-value', 'metrics-token-secret-0123456789'], { meter })(url), n, 1000)), { numRuns: 150, seed: 38 })
})

/** Import files an attacker would send, of about `n` characters. */
const shapes: Record<string, (n: number) => string> = {
  'one record that never ends': n => 'title\n' + 'a'.repeat(n),
  'an unclosed quote': n => 'title\n"' + 'a'.repeat(n),
  'an unclosed quote holding line ends': n => '"' + 'a\r\n'.repeat(n / 3),
  'a long line': n => 'x'.repeat(n) + '\n',
  columns: n => 'x,'.repeat(n / 2),
  'quoted columns': n => '"x",'.repeat(n / 4),
  'quoted columns holding line ends': n => '"\n",'.repeat(n / 4),
  'blank lines': n => '\n'.repeat(n),
  'CRLF blank lines': n => '\r\n'.repeat(n / 2),
  'escaped quotes': n => '"' + '""'.repeat(n / 2) + '"\n',
  'a quote in each unquoted cell': n => 'a"b\n'.repeat(n / 4),
  'a quote in a cell, then a long line': n => 'a"' + 'b'.repeat(n),
  'lone CRs': n => 'a\r'.repeat(n / 2),
  'text after closing quotes': n => '"a"b'.repeat(n / 4)
}

const readers = {
  csv: (chunks: string[], meter: WorkMeter) => drain(csvRecords(fromChunks(chunks), { meter })),
  ndjson: (chunks: string[], meter: WorkMeter) => drain(lines(fromChunks(chunks), { meter }))
}

async function drain (read: AsyncIterable<unknown>): Promise<void> {
  for await (const item of read) if (item === undefined) throw new Error('a reader gave nothing')
}

async function * fromChunks (chunks: string[]): AsyncGenerator<string> {
  yield * chunks
}

/** Characters `reader` examines to read `text` sent in chunks of `size`. */
async function work (reader: keyof typeof readers, text: string, size: number): Promise<number> {
  const chunks: string[] = []
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size))
  let scanned = 0
  await readers[reader](chunks, units => { scanned += units })
  return scanned
}

/** Work of reading twice the file: at most twice the work of reading it, plus a constant. */
async function doubling (reader: keyof typeof readers, shape: string, n: number, size: number): Promise<string | null> {
  const [once, twice] = [await work(reader, shapes[shape]!(n), size), await work(reader, shapes[shape]!(2 * n), size)]
  if (once < n / 2) return `${reader}, ${shape}: ${once} characters examined of ${n}: the meter does not count the work`
  return twice <= 2 * once + 64 ? null : `${reader}, ${shape}, ${n} characters in chunks of ${size}: ${once} examined, ${twice} for twice the file`
}

t.test('doubling a hostile file at most doubles the readers\' work, whatever the chunks (1 byte, 20, a CRLF or a quote cut in two)', async t => {
  await fc.assert(fc.asyncProperty(
    fc.constantFrom(...Object.keys(readers) as (keyof typeof readers)[]),
    fc.constantFrom(...Object.keys(shapes)),
    fc.integer({ min: 500, max: 4000 }),
    fc.constantFrom(1, 2, 3, 20, 1000, 65_536),
    async (reader, shape, n, size) => {
      const failed = await doubling(reader, shape, n, size)
      if (failed !== null) throw new Error(failed)
    }), { seed: 20261128, numRuns: 200 })
  t.pass('every shape, size and chunking')
})

t.test('the attack\'s sizes: a 1 MiB line in 20-byte chunks, 500,000 columns, a record in 1-byte chunks', async t => {
  for (const reader of Object.keys(readers) as (keyof typeof readers)[]) {
    t.equal(await doubling(reader, 'one record that never ends', 1 << 19, 20), null, `${reader}: a 1 MiB record in 20-byte chunks`)
    t.equal(await doubling(reader, 'an unclosed quote', 1 << 19, 20), null, `${reader}: an unclosed quote of 1 MiB in 20-byte chunks`)
    t.equal(await doubling(reader, 'columns', 500_000, 65_536), null, `${reader}: 500,000 columns`)
    t.equal(await doubling(reader, 'one record that never ends', 100_000, 1), null, `${reader}: 200,000 characters in 1-byte chunks`)
  }
})
