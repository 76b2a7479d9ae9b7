// Process entry of the backup CLI (npm run backup); the work is in backup-command.ts.
import { withEnvFile } from '../config/env-file.js'
import { runBackup } from './backup-command.js'

// The service's settings, .env included, so that the command opens the database the service uses.
let env
try {
  env = withEnvFile(process.env, process.cwd()).env
} catch (error) {
  process.stderr.write(`npm run backup: ${(error as Error).message}\n`)
  process.exit(1)
}

process.exitCode = await runBackup(process.argv.slice(2), env, {
  out: line => process.stdout.write(line + '\n'),
  err: line => process.stderr.write(line + '\n')
})
