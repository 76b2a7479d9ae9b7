// The typed readers of environment values: each checks one value, says what it accepts, and names the variable when it refuses.

/** A configuration value that cannot be used; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads one set value of a variable, or refuses it; `accepts` says what it takes, for the reference. */
export interface Reader<T> {
  readonly accepts: string
  readonly read: (raw: string, name: string) => T
}

const shown = (raw: string) => JSON.stringify(raw)

/** The URL with its password replaced, for messages and logs. */
export function maskPassword (url: string): string {
  // Leading spaces too: a value refused for them is shown, masked, in the message.
  return url.replace(/^(\s*[a-z][\w+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@')
}

/**
 * Surrounding spaces are refused rather than trimmed: a stray space from a paste or a quote is more
 * likely a mistake than a wish. `got` shows the value in the message; a secret's, or a password in a
 * URL, must not reach the log with it.
 */
export function trimmed (raw: string, name: string, got = `got ${shown(raw)}`): string {
  if (raw.trim() !== raw) throw new ConfigError(`${name} must not start or end with spaces (${got})`)
  return raw
}

/** Any text without surrounding spaces; `accepts` describes it for the reference. */
export const text = (accepts: string): Reader<string> => ({ accepts, read: trimmed })

/** The reader's value, or null when unset (its variable's default is then the empty string). */
export function optional<T> (reader: Reader<T>): Reader<T | null> {
  return { accepts: reader.accepts, read: (raw, name) => raw === '' ? null : reader.read(raw, name) }
}

/** A whole number from `min` to `max`; surrounding spaces pass, as they always have for numbers. */
export function integer (min: number, max: number): Reader<number> {
  return {
    accepts: `${min} to ${max}`,
    read (raw, name) {
      const value = Number(raw)
      if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
        throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${shown(raw)})`)
      }
      return value
    }
  }
}

export const boolean: Reader<boolean> = {
  accepts: '`true` or `false`',
  read (raw, name) {
    if (trimmed(raw, name) !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false (got ${shown(raw)})`)
    return raw === 'true'
  }
}

const listed = (values: readonly string[]) => values.map(value => `\`${value}\``).join(', ').replace(/, ([^,]*)$/, ' or $1')

/** One of a few words; `must` is how the message words the choice. */
export function oneOf<T extends string> (values: readonly T[], must = `one of ${values.join(', ')}`): Reader<T> {
  return {
    accepts: listed(values),
    read (raw, name) {
      const value = values.find(v => v === trimmed(raw, name))
      if (value === undefined) throw new ConfigError(`${name} must be ${must} (got ${shown(raw)})`)
      return value
    }
  }
}

/** Printable characters without spaces, `min` to `max` of them; a secret's value never appears in the message. */
export function token (min: number, max: number, { secret }: { secret: boolean }): Reader<string> {
  const pattern = new RegExp(`^[\\x21-\\x7e]{${min},${max}}$`)
  return {
    accepts: `${min} to ${max} printable characters, no spaces`,
    read (raw, name) {
      const got = secret ? 'value not shown' : `got ${shown(raw)}`
      if (!pattern.test(trimmed(raw, name, got))) throw new ConfigError(`${name} must be ${min} to ${max} printable characters without spaces (${got})`)
      return raw
    }
  }
}

/** Comma-separated entries, each checked by `entry`, which names the entry it refuses. */
export function list (accepts: string, must: string, entry: (item: string) => boolean): Reader<string[]> {
  return {
    accepts,
    read: (raw, name) => trimmed(raw, name) === ''
      ? []
      : raw.split(',').map(item => {
        const value = item.trim()
        if (!entry(value)) throw new ConfigError(`${name} must list ${must}, comma-separated (got ${shown(value)})`)
        return value
      })
  }
}

/** A URL that `valid` takes; a refused one is shown with its password masked. */
export function url (valid: (raw: string) => boolean, accepts: string, must: string): Reader<string> {
  return {
    accepts,
    read (raw, name) {
      const got = `got ${shown(maskPassword(raw))}`
      if (!valid(trimmed(raw, name, got))) throw new ConfigError(`${name} must be ${must} (${got})`)
      return raw
    }
  }
}
