// Process entry of the key CLI (npm run keys); the work is in keys-cli.ts.
import { runKeys } from './keys-cli.js'

process.exitCode = await runKeys(process.argv.slice(2), process.env, {
  out: line => process.stdout.write(line + '\n'),
  err: line => process.stderr.write(line + '\n')
})
