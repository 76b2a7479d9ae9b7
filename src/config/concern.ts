// How a concern's settings are declared: one entry per environment variable, from which both loadConfig and docs/configuration.md are made.
import type { Reader } from './parse.js'

export type Env = Readonly<Record<string, string | undefined>>

export interface Variable<T> {
  readonly name: string
  /** The value when the variable is unset or empty, written as in the environment; '' leaves it unset. */
  readonly default: string
  /** The reference's default column, where the raw default alone would mislead. */
  readonly shown?: string
  readonly reader: Reader<T>
  /** What the setting does, in Markdown, for the reference. */
  readonly meaning: string
}

export type Variables = Readonly<Record<string, Variable<unknown>>>
export type Values<V extends Variables> = { -readonly [K in keyof V]: V[K] extends Variable<infer T> ? T : never }

interface Declared<V extends Variables, Part> {
  /** The heading of its table in the reference, and the line under it. */
  title: string
  about: string
  variables: V
  /**
   * Its part of Config from the values (by default the values themselves). Each value is read when
   * first used, so that a variable which does not matter (tracing's, when tracing is off) is never
   * refused; `env` is for a reader that needs context.
   */
  settle?: (values: Values<V>, env: Env) => Part
  /** Refuses what no single variable makes wrong; run on the whole configuration, after the overrides. */
  check?: (part: Part) => void
}

export interface Concern<V extends Variables, Part> extends Readonly<Required<Omit<Declared<V, Part>, 'settle'>>> {
  /** The concern's part of Config from `env`. */
  readonly load: (env: Env) => Part
}

/** The variable's value from `env`, or from its default; `reader` replaces the declared one where a message needs context. */
export function read<T> (variable: Variable<T>, env: Env, reader: Reader<T> = variable.reader): T {
  const raw = env[variable.name]
  return reader.read(raw === undefined || raw === '' ? variable.default : raw, variable.name)
}

export function concern<V extends Variables> (declared: Declared<V, Values<V>>): Concern<V, Values<V>>
export function concern<V extends Variables, Part> (declared: Declared<V, Part> & Required<Pick<Declared<V, Part>, 'settle'>>): Concern<V, Part>
export function concern<V extends Variables, Part> ({ settle = values => ({ ...values }) as Part, check = () => {}, ...declared }: Declared<V, Part>): Concern<V, Part> {
  function load (env: Env): Part {
    const values = {} as Values<V>
    for (const [key, variable] of Object.entries(declared.variables)) {
      Object.defineProperty(values, key, { enumerable: true, get: () => read(variable, env) })
    }
    return settle(values, env)
  }
  return { ...declared, check, load }
}
