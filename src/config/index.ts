// The service's configuration: one typed value, read from the environment and validated once at start, declared by concern beside this file.
import { access } from './access.js'
import type { Env } from './concern.js'
import { events } from './events.js'
import { ops } from './ops.js'
import { server } from './server.js'
import { storage } from './storage.js'
import { tracing } from './tracing.js'

export { ConfigError, maskPassword } from './parse.js'
export type { RateLimit } from './access.js'
export type { LogLevel } from './ops.js'
export type { TraceSampler, TracingConfig } from './tracing.js'
export type { Env }

/** Every concern's settings, in the order of the reference (docs/configuration.md). */
export const concerns = [server, storage, access, ops, events, tracing] as const

type Part<C> = C extends { load: (env: Env) => infer P } ? P : never
type Flat<T> = { [K in keyof T]: T[K] }

/** The configuration: each concern's part, as its declarations make it. */
export type Config = Flat<Part<typeof server> & Part<typeof storage> & Part<typeof access> & Part<typeof ops> & Part<typeof events> & Part<typeof tracing>>

/**
 * Reads the configuration from `env` (usually `process.env`); explicit `overrides` win over the
 * environment, which wins over the defaults. Throws a ConfigError on the first unusable value.
 */
export function loadConfig (env: Env, overrides: Partial<Config> = {}): Config {
  const config: Config = {
    ...server.load(env),
    ...storage.load(env),
    ...access.load(env),
    ...ops.load(env),
    ...events.load(env),
    ...tracing.load(env),
    ...overrides
  }
  for (const concern of concerns) concern.check(config)
  return config
}

/** The configuration of an empty environment. */
export const defaults: Readonly<Config> = loadConfig({})
