// `npm run backup -- <file>`: a consistent copy of the live database through SQLite's online backup API.
import { existsSync } from 'node:fs'
import { type Io, parseCommandLine, UsageError } from './args.js'
import { type ConfigError, defaults, loadConfig, maskPassword } from '../config/index.js'
import { backupDatabase, NoDatabaseError } from '../storage/sqlite/database.js'

const usage = `Usage: npm run backup -- <file>

Copies the service's SQLite database, DATABASE_PATH (default ${defaults.databasePath}), to
the new <file> while the service keeps serving, printing progress; never overwrites a file.
On PostgreSQL (DATABASE_URL=postgres://...) use pg_dump instead.
  --help, -h  this text
Exit status: 0 copied, 1 failed, 2 bad usage.`

// The error comes first and alone on its line, where it is seen; the usage is a --help away.
const hint = 'For the usage: npm run backup -- --help'

/** The target file the arguments name. */
function targetOf (args: string[]): string | 'help' {
  const line = parseCommandLine(args, {})
  if (line === 'help') return line
  const [target, ...rest] = line.positionals
  if (target === undefined) throw new UsageError('the <file> to write the copy to is needed')
  if (rest.length > 0) throw new UsageError(`one <file> only, not also ${rest.map(arg => JSON.stringify(arg)).join(' ')}`)
  return target
}

/** Runs one backup; returns the process exit status (0 copied, 1 failed, 2 bad usage). */
export async function runBackup (args: string[], env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  let target
  try {
    target = targetOf(args)
  } catch (error) {
    io.err(`backup: ${(error as UsageError).message}\n${hint}`)
    return 2
  }
  if (target === 'help') {
    io.out(usage)
    return 0
  }
  // Never overwrite: an earlier backup may be the only good copy left.
  if (existsSync(target)) {
    io.err(`backup: ${target} already exists; choose a new file`)
    return 1
  }
  let config
  try {
    // The service's own setting, so the backup copies what the service writes.
    config = loadConfig(env)
  } catch (error) {
    io.err(`backup: ${(error as ConfigError).message}`)
    return 1
  }
  if (config.postgresUrl !== null) {
    // Said plainly rather than pretended: PostgreSQL's own tools copy a live database consistently.
    io.err(`backup: DATABASE_URL is a PostgreSQL database (${maskPassword(config.postgresUrl)}); this command copies SQLite files only. Use pg_dump, e.g. pg_dump --format=custom --file=${target} "$DATABASE_URL", or your provider's snapshots`)
    return 1
  }
  const source = config.databasePath
  try {
    const pages = await backupDatabase(source, target, (done, total) => {
      io.out(`backup: ${Math.floor((done / total) * 100)}% (${done}/${total} pages)`)
    })
    io.out(`backup: 100% (${pages}/${pages} pages), ${source} copied to ${target}`)
    return 0
  } catch (error) {
    io.err(error instanceof NoDatabaseError
      ? `backup: ${error.message} (DATABASE_PATH): start the service once to create it, or correct the path`
      : `backup: failed: ${(error as Error).message}`)
    return 1
  }
}
