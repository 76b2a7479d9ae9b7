// `npm run keys -- create|list|revoke`: manages API keys in the service's database, where only their hashes live.
import { allScopes, createKey, isScope, type Scope } from '../access/api-keys.js'
import { type Io, parseCommandLine, UsageError } from './args.js'
import { type ConfigError, defaults, loadConfig } from '../config/index.js'
import { NoDatabaseError } from '../storage/sqlite/database.js'
import { openConfiguredRepositories } from '../storage/open.js'
import type { Repositories } from '../storage/types.js'

const usage = `Usage: npm run keys -- <command> [options]

  create --scopes <scope,…> --name <name> [--quiet]
                   create a key and print it, once (--quiet: the key alone, for scripts)
  list             the stored keys under a header row, tab-separated; never a secret
  revoke <key_id>  refuse the key from the next request on
  --help, -h       this text

Scopes: ${allScopes.join(', ')}.
The database is the service's: DATABASE_URL (PostgreSQL) or DATABASE_PATH (default
${defaults.databasePath}); it must exist: the service creates it on its first start.
Exit status: 0 done, 1 failed, 2 bad usage.`

type Command =
  | { command: 'create', name: string, scopes: Scope[], quiet: boolean }
  | { command: 'list' }
  | { command: 'revoke', keyId: string }

const options = { scopes: { type: 'string' }, name: { type: 'string' }, quiet: { type: 'boolean' } } as const

function scopesOf (raw: string | undefined): Scope[] {
  const scopes = (raw ?? '').split(',').map(s => s.trim()).filter(s => s !== '')
  if (scopes.length === 0) throw new UsageError(`create needs --scopes, one or more of ${allScopes.join(', ')}`)
  const unknown = scopes.filter(s => !isScope(s))
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')} in --scopes (the scopes are ${allScopes.join(', ')})`)
  return [...new Set(scopes.filter(isScope))]
}

// The error comes first and alone on its line, where it is seen; the usage is a --help away.
const hint = 'For the usage: npm run keys -- --help'

/** The command the arguments ask for, checked whole before the database is opened. */
function commandOf (args: string[]): Command | 'help' {
  const line = parseCommandLine(args, options)
  if (line === 'help') return line
  const { values, positionals: [command, ...rest] } = line
  const quoted = rest.map(arg => JSON.stringify(arg)).join(' ')
  if (command === undefined) throw new UsageError('a command is needed: create, list or revoke')
  if (command !== 'create' && command !== 'list' && command !== 'revoke') {
    throw new UsageError(`unknown command ${JSON.stringify(command)} (the commands are create, list and revoke)`)
  }
  const stray = command === 'create' ? [] : Object.keys(values)
  if (stray.length > 0) throw new UsageError(`${command} takes no option --${stray[0]}`)
  if (command === 'create') {
    if (rest.length > 0) throw new UsageError(`create takes only options, not ${quoted}`)
    const scopes = scopesOf(values.scopes)
    if (values.name === undefined) throw new UsageError('create needs --name <name>, what the key is for (1 to 100 characters)')
    const name = values.name.trim()
    if (name === '' || name.length > 100) throw new UsageError('--name must be 1 to 100 characters')
    return { command, name, scopes, quiet: values.quiet === true }
  }
  if (command === 'list') {
    if (rest.length > 0) throw new UsageError(`list takes no arguments, not ${quoted}`)
    return { command }
  }
  if (rest.length !== 1) {
    throw new UsageError(rest.length === 0 ? 'revoke needs the <key_id> of the key (npm run keys -- list shows them)' : `revoke takes one <key_id>, not ${quoted}`)
  }
  return { command, keyId: rest[0]! }
}

async function execute (request: Command, repositories: Repositories, io: Io): Promise<number> {
  if (request.command === 'create') {
    const created = await createKey(repositories.apiKeys, request.name, request.scopes)
    if (request.quiet) {
      io.out(created.key)
    } else {
      io.out(`Created key ${created.key_id} "${created.name}" with scopes ${created.scopes.join(', ')}.`)
      io.out('The key is shown this once; only its hash is stored:')
      io.out(created.key)
    }
    return 0
  }
  if (request.command === 'list') {
    const keys = await repositories.apiKeys.list()
    if (keys.length === 0) {
      io.out('No keys stored.')
      return 0
    }
    io.out(['key_id', 'status', 'scopes', 'created_at', 'name'].join('\t'))
    for (const key of keys) {
      io.out([key.key_id, key.revoked_at === null ? 'active' : `revoked ${key.revoked_at}`, key.scopes.join(','), key.created_at, key.name].join('\t'))
    }
    return 0
  }
  if (!await repositories.apiKeys.revoke(request.keyId)) {
    io.err(`keys: no active key has the id ${request.keyId}`)
    return 1
  }
  io.out(`Revoked key ${request.keyId}; it is refused from the next request on.`)
  return 0
}

/** Runs one command; returns the process exit status (0 done, 1 failed, 2 bad usage). */
export async function runKeys (args: string[], env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  let request
  try {
    request = commandOf(args)
  } catch (error) {
    io.err(`keys: ${(error as UsageError).message}\n${hint}`)
    return 2
  }
  if (request === 'help') {
    io.out(usage)
    return 0
  }
  let config
  try {
    config = loadConfig(env)
  } catch (error) {
    io.err(`keys: ${(error as ConfigError).message}`)
    return 1
  }
  let repositories
  try {
    repositories = await openConfiguredRepositories(config, { create: false })
  } catch (error) {
    const [source, what] = config.postgresUrl === null ? ['DATABASE_PATH', 'the path'] : ['DATABASE_URL', 'the URL']
    io.err(error instanceof NoDatabaseError
      ? `keys: ${error.message} (${source}): start the service once to create it, or correct ${what}`
      : config.postgresUrl === null
        ? `keys: cannot open ${config.databasePath}: ${(error as Error).message}`
        // The PostgreSQL engine's message names DATABASE_URL already, its password masked.
        : `keys: ${(error as Error).message}`)
    return 1
  }
  try {
    return await execute(request, repositories, io)
  } finally {
    await repositories.close()
  }
}
