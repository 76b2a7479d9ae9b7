// `npm run keys -- create|list|revoke`: manages API keys in the service's database, where only their hashes live.
import { parseArgs } from 'node:util'
import { allScopes, createKey, isScope, type Scope } from './api-keys.js'
import { ConfigError, loadConfig } from './config.js'
import { openConfiguredRepositories } from './repositories/sqlite.js'

const usage = `Usage:
  npm run keys -- create --scopes <scope,scope…> --name <name> [--quiet]
  npm run keys -- list
  npm run keys -- revoke <key_id>
Scopes: ${allScopes.join(', ')}. The database is DATABASE_PATH, as for the server.`

export interface Io {
  out (line: string): void
  err (line: string): void
}

class UsageError extends Error {}

function scopesOf (raw: string | undefined): Scope[] {
  const scopes = (raw ?? '').split(',').map(s => s.trim()).filter(s => s !== '')
  const unknown = scopes.filter(s => !isScope(s))
  if (scopes.length === 0 || unknown.length > 0) {
    throw new UsageError(`--scopes must list one or more of ${allScopes.join(', ')}${unknown.length > 0 ? ` (unknown: ${unknown.join(', ')})` : ''}`)
  }
  return [...new Set(scopes.filter(isScope))]
}

/** Runs one command; returns the process exit code (0 done, 1 failed, 2 bad usage). */
export async function runKeys (args: string[], env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { scopes: { type: 'string' }, name: { type: 'string' }, quiet: { type: 'boolean', default: false } }
    })
  } catch (error) {
    io.err(`${(error as Error).message}\n${usage}`)
    return 2
  }
  const [command, ...rest] = parsed.positionals
  const { values } = parsed
  let config
  try {
    config = loadConfig(env)
  } catch (error) {
    io.err((error as ConfigError).message)
    return 1
  }
  const repositories = openConfiguredRepositories(config)
  const code = await (async () => {
    if (command === 'create' && rest.length === 0) {
      const name = values.name?.trim() ?? ''
      if (name === '' || name.length > 100) throw new UsageError('--name must be 1 to 100 characters')
      const created = await createKey(repositories.apiKeys, name, scopesOf(values.scopes))
      if (values.quiet) {
        io.out(created.key)
      } else {
        io.out(`Created key ${created.key_id} "${created.name}" with scopes ${created.scopes.join(', ')}.`)
        io.out('The key is shown this once; only its hash is stored:')
        io.out(created.key)
      }
      return 0
    }
    if (command === 'list' && rest.length === 0) {
      const keys = await repositories.apiKeys.list()
      if (keys.length === 0) io.out('No keys stored.')
      for (const key of keys) {
        io.out([key.key_id, key.revoked_at === null ? 'active' : `revoked ${key.revoked_at}`, key.scopes.join(','), key.created_at, key.name].join('\t'))
      }
      return 0
    }
    if (command === 'revoke' && rest.length === 1) {
      if (!await repositories.apiKeys.revoke(rest[0]!)) {
        io.err(`No active key has the id ${rest[0]}`)
        return 1
      }
      io.out(`Revoked key ${rest[0]}; it is refused from the next request on.`)
      return 0
    }
    throw new UsageError(command === undefined ? 'a command is needed' : `unknown command or arguments: ${parsed.positionals.join(' ')}`)
  })().catch((error: Error) => {
    io.err(`${error.message}\n${usage}`)
    return 2
  })
  repositories.close()
  return code
}
