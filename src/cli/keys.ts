// Process entry of the key CLI (npm run keys); the work is in key-commands.ts.
import { withEnvFile } from '../config/env-file.js'
import { runKeys } from './key-commands.js'

// The service's settings, .env included, so that the command opens the database the service uses.
let env
try {
  env = withEnvFile(process.env, process.cwd()).env
} catch (error) {
  process.stderr.write(`npm run keys: ${(error as Error).message}\n`)
  process.exit(1)
}

process.exitCode = await runKeys(process.argv.slice(2), env, {
  out: line => process.stdout.write(line + '\n'),
  err: line => process.stderr.write(line + '\n')
})
