// Request bodies as I-JSON (RFC 7493) asks: src/formats/i-json.ts finds what is wrong and where; here that is a 400.
import { parseIJson } from '../formats/i-json.js'
import type { WorkMeter } from '../formats/work-meter.js'
import { ValidationError } from './errors.js'

/**
 * A JSON body as the service takes it: parsed, then refused with a 400 that points at each string
 * that is not Unicode text, each member name given twice, each `__proto__` member and each value
 * nested too deep (at most 100 of them); `meter` is told the work. Throws SyntaxError for text that is not JSON.
 */
export function parseJsonBody (text: string, meter: WorkMeter): unknown {
  const { value, problems } = parseIJson(text, { meter })
  if (problems.length > 0) throw new ValidationError('body', problems)
  return value
}

// Encodings whose bytes are not ASCII's for ASCII text: a body so labelled cannot be the UTF-8 it would be read as.
const notUtf8Compatible = /^(?:utf-?(?:16|32)(?:[bl]e)?|ucs-?[24])$/

/**
 * The charset a JSON body's media type names when it is one the body cannot be read in as UTF-8
 * (UTF-16, UTF-32); undefined otherwise. RFC 8259 defines no charset for JSON, which is UTF-8, and
 * an ASCII-compatible label on valid UTF-8 is harmless (bytes that are not UTF-8 are refused anyway),
 * but UTF-16 read as UTF-8 would be refused as "not valid JSON", which says nothing of why.
 */
export function unreadableCharset (contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const equals = parameter.indexOf('=')
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue
    const charset = parameter.slice(equals + 1).trim().replace(/^"(.*)"$/s, '$1').toLowerCase()
    return notUtf8Compatible.test(charset) ? charset : undefined
  }
  return undefined
}
