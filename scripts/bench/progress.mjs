// The benchmarks' progress on stderr, one line a step and a bar for long loops, so stdout holds only the result.

/** Progress lines prefixed with the command's `name`; bar() draws (or, off a terminal, prints every tenth of) a count. */
export function progressTo (name) {
  const progress = message => process.stderr.write(`${name}: ${message}\n`)
  function bar (label, done, total) {
    if (!process.stderr.isTTY && done !== total && done % Math.max(1, Math.floor(total / 10)) !== 0) return
    const width = 30
    const filled = Math.round(width * done / total)
    const line = `${name}: ${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')}`
    process.stderr.write(process.stderr.isTTY ? `\r${line}${done === total ? '\n' : ''}` : `${line}\n`)
  }
  return { progress, bar }
}

/** `npm run bench`'s own. */
export const { progress, bar } = progressTo('bench')
