// Command-line parsing for the CLIs (npm run keys, npm run backup): node:util parseArgs, with errors that name the culprit.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Env } from '../config/concern.js'
import { withEnvFile } from '../config/env-file.js'

/** Where a CLI writes its lines: the process's stdout and stderr, or a test's buffers. */
export interface Io {
  out (line: string): void
  err (line: string): void
}

/** Bad usage (exit status 2); the message names the argument or option at fault. */
export class UsageError extends Error {
  override name = 'UsageError'
}

type Options = NonNullable<ParseArgsConfig['options']>

/** parseArgs' typed result for these options: `values` as the options declare them, and `positionals`. */
export type CommandLine<O extends Options> = ReturnType<typeof parseArgs<{ args: string[], options: O, allowPositionals: true, strict: true }>>

/**
 * Parses `args` against `options`; `'help'` when --help or -h is anywhere among the options, so that
 * asking for help never fails. parseArgs' own strict errors tell how to pass a positional that starts
 * with '-', not which option is wrong, and `--name --quiet` would take "--quiet" as the name: both are
 * checked here first, on parseArgs' tokens.
 */
export function parseCommandLine<O extends Options> (args: string[], options: O): 'help' | CommandLine<O> {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } satisfies Options
  const { tokens } = parseArgs({ args, options: all, allowPositionals: true, strict: false, tokens: true })
  const given = tokens.filter(token => token.kind === 'option')
  if (given.some(option => option.name === 'help')) return 'help'
  for (const option of given) {
    const type = options[option.name]?.type
    if (type === undefined) throw new UsageError(`unknown option ${option.rawName}`)
    if (type === 'string' && (option.value === undefined || (!option.inlineValue && option.value.startsWith('-')))) {
      throw new UsageError(`option ${option.rawName} needs a value`)
    }
    if (type === 'boolean' && option.value !== undefined) throw new UsageError(`option ${option.rawName} takes no value`)
  }
  return parseArgs({ args, options, allowPositionals: true, strict: true })
}

/**
 * The settings a command of the service reads (npm run keys, npm run backup): the process's
 * environment and, beneath it, the service's .env, so that it opens the database the service uses.
 * A .env that cannot be read ends the command with one line, as a bad setting does.
 */
export function commandEnvironment (command: string): Env {
  try {
    return withEnvFile(process.env, process.cwd()).env
  } catch (error) {
    process.stderr.write(`npm run ${command}: ${(error as Error).message}\n`)
    process.exit(1)
  }
}
