// JSON as I-JSON (RFC 7493) asks, for any text a client sends: strings that are Unicode text, members named once; problems listed, never thrown.
import { unmetered, type WorkMeter } from './work-meter.js'

/** One way the text breaks the rules: where (a JSON Pointer in URI fragment form: #/title, #/types/0) and what. */
export interface JsonProblem {
  pointer: string
  detail: string
}

/** The problems one text gets at most: Problem.errors' maxItems in the contract. Checking stops at the last. */
export const maxProblems = 100

/**
 * The deepest nesting of arrays and objects a text may have. The contract's bodies and import rows
 * nest two levels at most (a webhook endpoint's `types`); 64 is far beyond any honest body, while
 * JSON.parse takes any depth (a 64 KiB body can nest 32,000 deep) and every problem's pointer costs
 * its depth: the bound keeps each pointer short, so that a hostile body cannot multiply the work.
 */
export const maxNesting = 64

/**
 * A pointer is built to this many characters at most (Problem.errors' pointers are cut to 500): a
 * member name may be as long as the text, and 100 problems under it would otherwise build it 100 times.
 * Far enough beyond 500 that a credential echoed there is still whole when the redaction reads it.
 */
const longestPointer = 4096

const notUnicode = 'must be Unicode text: it holds a surrogate code point (\\ud800 to \\udfff) without its pair, which is no character and cannot be stored as sent'
const nameNotUnicode = 'holds a member whose name is not Unicode text: a surrogate code point (\\ud800 to \\udfff) without its pair'
const protoName = 'is not accepted as a member name: it would set the prototype of a JavaScript object copied from this one'
const givenTwice = 'is given more than once in its object: send each member once (I-JSON, RFC 7493)'
const tooDeep = `is an array or object nested more than ${maxNesting} deep, which no request of this service needs: flatten it`

type Path = readonly (string | number)[]

/** The problems found so far, up to maxProblems; `full` once no more will be taken. */
class Problems {
  readonly list: JsonProblem[] = []
  readonly #meter: WorkMeter
  readonly #max: number

  constructor (meter: WorkMeter, max: number) {
    this.#meter = meter
    this.#max = max
  }

  get full (): boolean {
    return this.list.length >= this.#max
  }

  /** Takes the problem at `path` unless the list is full: the path is built only if the problem is taken. */
  add (path: () => Path, detail: string): void {
    if (!this.full) this.list.push({ pointer: this.pointer(path()), detail })
  }

  /** A JSON Pointer fragment; a name that is not Unicode text has no URI form: its unpaired surrogates show as U+FFFD. */
  private pointer (path: Path): string {
    let pointer = '#'
    for (const segment of path) {
      // Encoding only lengthens a segment: what is beyond the budget before encoding is beyond it after.
      const raw = String(segment).slice(0, longestPointer - pointer.length)
      pointer += '/' + encodeURIComponent(raw.toWellFormed().replace(/~/g, '~0').replace(/\//g, '~1'))
      this.#meter(1 + raw.length)
      if (pointer.length >= longestPointer) return pointer.slice(0, longestPointer)
    }
    return pointer
  }
}

/** A value met in the walk: where it is, as a chain of places up to the text's value, and how deep. */
interface Place {
  value: unknown
  at: string | number
  parent: Place | null
  /** How many arrays and objects hold it. */
  depth: number
}

/** The path from the top to `place`, in time linear in its depth. */
function pathOf (place: Place, meter: WorkMeter): (string | number)[] {
  const path = new Array<string | number>(place.depth)
  for (let p: Place = place; p.parent !== null; p = p.parent) path[p.depth - 1] = p.at
  meter(place.depth)
  return path
}

/**
 * Strings that are not Unicode text, `__proto__` members and values nested too deep, anywhere in a parsed
 * value; returns how many members its objects have. JSON.parse itself pollutes nothing (it makes
 * `__proto__` a plain own member), but code that copies such an object member by member sets its
 * prototype; no field of the contract has that name. A loop, not recursion: JSON.parse takes nesting
 * deeper than the call stack.
 */
function checkValues (top: unknown, problems: Problems, meter: WorkMeter): number {
  let members = 0
  const pending: Place[] = [{ value: top, at: '', parent: null, depth: 0 }]
  for (let next = pending.pop(); next !== undefined && !problems.full; next = pending.pop()) {
    const place = next
    const { value, depth } = place
    meter(1)
    if (typeof value === 'string') {
      meter(value.length)
      if (!value.isWellFormed()) problems.add(() => pathOf(place, meter), notUnicode)
    } else if (typeof value === 'object' && value !== null && depth >= maxNesting) {
      problems.add(() => pathOf(place, meter), tooDeep)
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index], at: index, parent: place, depth: depth + 1 })
      meter(value.length)
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>
      const names = Object.keys(object)
      members += names.length
      for (const name of names) {
        meter(1 + name.length)
        if (!name.isWellFormed()) problems.add(() => pathOf(place, meter), nameNotUnicode)
        if (name === '__proto__') problems.add(() => [...pathOf(place, meter), name], protoName)
      }
      // Last first, so that the members are checked, and their problems listed, in the text's order.
      for (let index = names.length - 1; index >= 0; index--) {
        const name = names[index]!
        if (name !== '__proto__') pending.push({ value: object[name], at: name, parent: place, depth: depth + 1 })
      }
    }
  }
  return members
}

/** Where the string opened by the quote at `open` is closed: the next quote not escaped by an odd run of backslashes. */
function closingQuote (text: string, open: number, meter: WorkMeter): number {
  let close = text.indexOf('"', open + 1)
  meter(close - open)
  while (escaped(text, close, meter)) {
    const next = text.indexOf('"', close + 1)
    meter(next - close)
    close = next
  }
  return close
}

/** Whether the quote at `quote` is escaped: preceded by an odd number of backslashes. */
function escaped (text: string, quote: number, meter: WorkMeter): boolean {
  let backslashes = 0
  for (let at = quote - 1; text.charCodeAt(at) === 0x5c; at--) backslashes++
  meter(1 + backslashes)
  return backslashes % 2 === 1
}

/**
 * How many member names a JSON text writes, duplicates included: the strings a colon follows. Quotes
 * occur only in strings, so hopping from quote to quote (indexOf) finds them all; a regular
 * expression doing the same costs two and a half times as much.
 */
function namesWritten (text: string, meter: WorkMeter): number {
  let names = 0
  for (let open = text.indexOf('"'); open !== -1; open = text.indexOf('"', open)) {
    open = closingQuote(text, open, meter) + 1
    let next = text.charCodeAt(open)
    // JSON's whitespace: space, tab, line feed, carriage return.
    while (next === 0x20 || next === 0x09 || next === 0x0a || next === 0x0d) {
      next = text.charCodeAt(++open)
      meter(1)
    }
    if (next === 0x3a) names++
  }
  return names
}

interface Frame {
  /** The member names met so far, for an object; null for an array. */
  names: Set<string> | null
  /** Where in this value the value being read is: the member's name, or the item's index. */
  at: string | number
}

// What changes the structure; strings are skipped whole, so what they hold never counts.
const structural = /[{}[\],"]/g

/**
 * Member names given twice in one object (JSON.parse keeps the last silently), in a text that
 * JSON.parse accepted: a scan from one structural character to the next, names compared as decoded.
 * Names nested deeper than maxNesting are not compared: checkValues refused what holds them.
 */
function checkNames (text: string, problems: Problems, meter: WorkMeter): void {
  const stack: Frame[] = []
  let expectingName = false
  structural.lastIndex = 0
  for (let from = 0, match = structural.exec(text); match !== null && !problems.full; from = structural.lastIndex, match = structural.exec(text)) {
    meter(structural.lastIndex - from)
    const top = stack.at(-1)
    switch (match[0]) {
      case '{':
        stack.push({ names: stack.length < maxNesting ? new Set() : null, at: '' })
        expectingName = true
        break
      case '[':
        stack.push({ names: null, at: 0 })
        break
      case '}':
      case ']':
        stack.pop()
        break
      case ',':
        if (typeof top!.at === 'number') (top!.at as number)++
        else expectingName = true
        break
      default: {
        const start = match.index + 1
        const end = closingQuote(text, match.index, meter)
        structural.lastIndex = end + 1
        if (!expectingName) break
        expectingName = false
        if (top!.names === null) break
        const raw = text.slice(start, end)
        meter(raw.length)
        const name = raw.includes('\\') ? JSON.parse(`"${raw}"`) as string : raw
        if (top!.names.has(name)) {
          problems.add(() => {
            meter(stack.length)
            return [...stack.slice(0, -1).map(frame => frame.at), name]
          }, givenTwice)
        }
        top!.names.add(name)
        top!.at = name
      }
    }
  }
}

/**
 * JSON text parsed, and its I-JSON problems: each string that is not Unicode text (a lone surrogate,
 * `"\ud800"`, is valid JSON but no character: stored, it would come back changed), each member name
 * given twice, each `__proto__` member, each array or object nested deeper than maxNesting; at most
 * `max` of them, found in time linear in the text. Throws SyntaxError for text that is not JSON.
 */
export function parseIJson (text: string, { max = maxProblems, meter = unmetered }: { max?: number, meter?: WorkMeter } = {}): { value: unknown, problems: JsonProblem[] } {
  meter(text.length)
  const value: unknown = JSON.parse(text)
  const problems = new Problems(meter, max)
  const members = checkValues(value, problems, meter)
  // A name given twice leaves one member fewer than the text writes; only then is it worth finding where.
  if (!problems.full && namesWritten(text, meter) !== members) checkNames(text, problems, meter)
  return { value, problems: problems.list }
}
