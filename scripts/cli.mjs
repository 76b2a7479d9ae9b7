// The scripts' command lines: options parsed once, --help, bad usage as one line naming the option (exit 2), a failure as its stack (exit 1).
import { parseArgs } from 'node:util'

/**
 * Parses `options` (node:util parseArgs' form; --help is added) for the command `name`, printing
 * `usage` on --help; returns the values, badUsage(message) to refuse a value, and positive() to read one.
 */
export function commandLine (name, usage, options) {
  const badUsage = message => {
    console.error(`${name}: ${message}\nFor the usage: ${name} -- --help`)
    process.exit(2)
  }
  let values
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h', default: false } } }))
  } catch (error) {
    // Its first sentence names the option or argument; the rest is a hint about '--' that misleads here.
    badUsage(error.message.split('. ')[0])
  }
  if (values.help) {
    console.log(usage)
    process.exit(0)
  }
  /** A positive number given as option `option`. */
  const positive = (option, raw) => {
    const value = Number(raw)
    if (!Number.isFinite(value) || value <= 0) badUsage(`--${option} must be a positive number (got ${raw})`)
    return value
  }
  return { opts: values, badUsage, positive }
}

/** Runs the command's `main`; a failure ends the process with its stack, prefixed with `name`. */
export function run (name, main) {
  main().catch(error => {
    console.error(`${name}: ${error.stack ?? error}`)
    process.exit(1)
  })
}
