// A dotenv file of settings (ENV_FILE, `.env` by default) beneath the process's environment, which wins: read once at start by each entry point.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseEnv } from 'node:util'
import type { Env } from './concern.js'
import { ConfigError } from './parse.js'

/** The environment the configuration is read from, and what the file gave it. */
export interface WithEnvFile {
  env: Env
  /** The file read, or null when none was (none there, or ENV_FILE=off). */
  file: string | null
  /** The variables the file set (those the environment did not). */
  fromFile: string[]
}

/**
 * `env` with the variables of the file ENV_FILE names (relative to `cwd`; `.env` unless set, and
 * then only when it exists) that `env` does not set. `ENV_FILE=off` reads none. A file named but
 * unreadable stops the start, as a value that cannot be used does.
 */
export function withEnvFile (env: Env, cwd: string): WithEnvFile {
  const named = env['ENV_FILE'] ?? ''
  if (named === 'off') return { env, file: null, fromFile: [] }
  const file = resolve(cwd, named === '' ? '.env' : named)
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if (named === '' && (error as NodeJS.ErrnoException).code === 'ENOENT') return { env, file: null, fromFile: [] }
    throw new ConfigError(`ENV_FILE: cannot read ${file} (${String((error as NodeJS.ErrnoException).code)})`)
  }
  const parsed = parseEnv(text) as Record<string, string>
  const fromFile = Object.keys(parsed).filter(name => env[name] === undefined)
  return { env: { ...Object.fromEntries(fromFile.map(name => [name, parsed[name]])), ...env }, file, fromFile }
}
