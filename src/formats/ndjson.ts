// NDJSON as exports write it: one JSON object per line, the fields in a fixed order.

/** Writes rows of values (in the order of `fields`) as lines of JSON objects, as JSON.stringify would each record. */
export function ndjsonWriter (fields: readonly string[]): (row: readonly unknown[]) => string {
  // The keys' text is the same on every line: made once.
  const keys = fields.map((field, i) => `${i === 0 ? '{' : ','}${JSON.stringify(field)}:`)
  return row => {
    let line = ''
    for (let i = 0; i < keys.length; i++) line += keys[i]! + JSON.stringify(row[i] ?? null)
    return line + '}\n'
  }
}
