// Process entry of the key CLI (npm run keys); the work is in key-commands.ts.
import { commandEnvironment } from './args.js'
import { runKeys } from './key-commands.js'

process.exitCode = await runKeys(process.argv.slice(2), commandEnvironment('keys'), {
  out: line => process.stdout.write(line + '\n'),
  err: line => process.stderr.write(line + '\n')
})
