// Request bodies as I-JSON (RFC 7493) asks: JSON whose strings are Unicode text and whose objects name each member once.
import type { ProblemError } from '../contract/api-types.js'
import { ValidationError } from './errors.js'

type Path = readonly (string | number)[]

/** A JSON Pointer fragment, as validation problems give them (#/title, #/types/0). */
function pointer (path: Path): string {
  // A name that is not Unicode text has no URI form: its unpaired surrogates show as U+FFFD.
  return '#' + path.map(segment => '/' + encodeURIComponent(String(segment).toWellFormed().replace(/~/g, '~0').replace(/\//g, '~1'))).join('')
}

const notUnicode = 'must be Unicode text: it holds a surrogate code point (\\ud800 to \\udfff) without its pair, which is no character and cannot be stored as sent'

/** A value met in the walk: where it is, as a chain of places up to the body. */
interface Place {
  value: unknown
  at: string | number
  parent: Place | null
}

function pathOf (place: Place): (string | number)[] {
  const path = []
  for (let p: Place | null = place; p.parent !== null; p = p.parent) path.unshift(p.at)
  return path
}

/**
 * Strings that are not Unicode text, and `__proto__` members, anywhere in a parsed body; returns how
 * many members its objects have. JSON.parse itself pollutes nothing (it makes `__proto__` a plain own
 * member), but code that copies such an object member by member sets its prototype; no field of the
 * contract has that name. A loop, not recursion: JSON.parse takes nesting deeper than the call stack.
 */
function checkValues (body: unknown, problems: ProblemError[]): number {
  let members = 0
  const pending: Place[] = [{ value: body, at: '', parent: null }]
  for (let place = pending.pop(); place !== undefined; place = pending.pop()) {
    const { value } = place
    if (typeof value === 'string') {
      if (!value.isWellFormed()) problems.push({ detail: notUnicode, pointer: pointer(pathOf(place)) })
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index], at: index, parent: place })
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>
      const names = Object.keys(object)
      members += names.length
      for (const name of names) {
        if (!name.isWellFormed()) {
          problems.push({ detail: 'holds a member whose name is not Unicode text: a surrogate code point (\\ud800 to \\udfff) without its pair', pointer: pointer(pathOf(place)) })
        }
        if (name === '__proto__') {
          problems.push({ detail: 'is not accepted as a member name: it would set the prototype of a JavaScript object copied from this one', pointer: pointer([...pathOf(place), name]) })
        }
      }
      // Last first, so that the members are checked, and their problems listed, in the body's order.
      for (let index = names.length - 1; index >= 0; index--) {
        const name = names[index]!
        if (name !== '__proto__') pending.push({ value: object[name], at: name, parent: place })
      }
    }
  }
  return members
}

/** Where the string opened by the quote at `open` is closed: the next quote not escaped by an odd run of backslashes. */
function closingQuote (text: string, open: number): number {
  let close = text.indexOf('"', open + 1)
  while (escaped(text, close)) close = text.indexOf('"', close + 1)
  return close
}

/** Whether the quote at `quote` is escaped: preceded by an odd number of backslashes. */
function escaped (text: string, quote: number): boolean {
  let backslashes = 0
  for (let at = quote - 1; text.charCodeAt(at) === 0x5c; at--) backslashes++
  return backslashes % 2 === 1
}

/**
 * How many member names a JSON text writes, duplicates included: the strings a colon follows. Quotes
 * occur only in strings, so hopping from quote to quote (indexOf) finds them all; a regular
 * expression doing the same costs two and a half times as much.
 */
function namesWritten (text: string): number {
  let names = 0
  for (let open = text.indexOf('"'); open !== -1; open = text.indexOf('"', open)) {
    open = closingQuote(text, open) + 1
    let next = text.charCodeAt(open)
    // JSON's whitespace: space, tab, line feed, carriage return.
    while (next === 0x20 || next === 0x09 || next === 0x0a || next === 0x0d) next = text.charCodeAt(++open)
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
 */
function checkNames (text: string, problems: ProblemError[]): void {
  const stack: Frame[] = []
  let expectingName = false
  structural.lastIndex = 0
  for (let match = structural.exec(text); match !== null; match = structural.exec(text)) {
    const top = stack.at(-1)
    switch (match[0]) {
      case '{':
        stack.push({ names: new Set(), at: '' })
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
        if (top!.names === null) (top!.at as number)++
        else expectingName = true
        break
      default: {
        const start = match.index + 1
        const end = closingQuote(text, match.index)
        structural.lastIndex = end + 1
        if (!expectingName) break
        expectingName = false
        const raw = text.slice(start, end)
        const name = raw.includes('\\') ? JSON.parse(`"${raw}"`) as string : raw
        if (top!.names!.has(name)) {
          const path = [...stack.slice(0, -1).map(frame => frame.at), name]
          problems.push({ detail: 'is given more than once in its object: send each member once (I-JSON, RFC 7493)', pointer: pointer(path) })
        }
        top!.names!.add(name)
        top!.at = name
      }
    }
  }
}

/**
 * A JSON body as the service takes it: parsed, then refused with a 400 that points at each string
 * that is not Unicode text (a lone surrogate, `"\ud800"`, is valid JSON but no character: stored, it
 * would come back changed), each member name given twice, and each `__proto__` member.
 * Throws SyntaxError for text that is not JSON.
 */
export function parseJsonBody (text: string): unknown {
  const value: unknown = JSON.parse(text)
  const problems: ProblemError[] = []
  const members = checkValues(value, problems)
  // A name given twice leaves one member fewer than the text writes; only then is it worth finding where.
  if (namesWritten(text) !== members) checkNames(text, problems)
  if (problems.length > 0) throw new ValidationError('body', problems.slice(0, 100))
  return value
}
