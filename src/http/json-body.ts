// Request bodies as I-JSON (RFC 7493) asks: src/formats/i-json.ts finds what is wrong and where; here that is a 400.
import { parseIJson, type WorkMeter } from '../formats/i-json.js'
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
