// The service's configuration: one typed value, read from the environment and validated once at start.
import type { Synchronous } from './db/database.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export interface Config {
  /** TCP port to listen on (`PORT`). */
  port: number
  /** Interface to bind (`HOST`); loopback by default so nothing is exposed by accident. */
  host: string
  /** SQLite file (`DATABASE_PATH`), or `:memory:` for a throw-away database. */
  databasePath: string
  /** pino log level (`LOG_LEVEL`). */
  logLevel: LogLevel
  /** Largest accepted request body in bytes (`BODY_LIMIT`). */
  bodyLimit: number
  /** SQLite synchronous mode (`DATABASE_SYNCHRONOUS`): `normal` survives a process crash, `full` also a power loss. */
  databaseSynchronous: Synchronous
  /** How long an Idempotency-Key and its response are kept (`IDEMPOTENCY_TTL_SECONDS`). */
  idempotencyTtlSeconds: number
}

export const defaults: Readonly<Config> = {
  port: 3000,
  host: '127.0.0.1',
  databasePath: './data/books-students.sqlite',
  logLevel: 'info',
  bodyLimit: 64 * 1024,
  databaseSynchronous: 'normal',
  idempotencyTtlSeconds: 24 * 60 * 60
}

/** A configuration value that cannot be used; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Readonly<Record<string, string | undefined>>

function integer (env: Env, name: string, min: number, max: number, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`)
  }
  return value
}

function text (env: Env, name: string, fallback: string): string {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw.trim() !== raw) throw new ConfigError(`${name} must not start or end with spaces (got ${JSON.stringify(raw)})`)
  return raw
}

function logLevel (env: Env): LogLevel {
  const raw = text(env, 'LOG_LEVEL', defaults.logLevel)
  const level = logLevels.find(l => l === raw)
  if (level === undefined) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')} (got ${JSON.stringify(raw)})`)
  return level
}

function synchronous (env: Env): Synchronous {
  const raw = text(env, 'DATABASE_SYNCHRONOUS', defaults.databaseSynchronous)
  if (raw !== 'normal' && raw !== 'full') throw new ConfigError(`DATABASE_SYNCHRONOUS must be normal or full (got ${JSON.stringify(raw)})`)
  return raw
}

/**
 * Reads the configuration from `env` (usually `process.env`); explicit `overrides` win over the
 * environment, which wins over the defaults. Throws a ConfigError on the first unusable value.
 */
export function loadConfig (env: Env, overrides: Partial<Config> = {}): Config {
  return {
    port: integer(env, 'PORT', 0, 65535, defaults.port),
    host: text(env, 'HOST', defaults.host),
    databasePath: text(env, 'DATABASE_PATH', defaults.databasePath),
    logLevel: logLevel(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 1024, 16 * 1024 * 1024, defaults.bodyLimit),
    databaseSynchronous: synchronous(env),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 60, 30 * 24 * 60 * 60, defaults.idempotencyTtlSeconds),
    ...overrides
  }
}
