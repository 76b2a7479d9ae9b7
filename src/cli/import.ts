// Process entry of the import CLI (npm run import); the work is in import-command.ts.
import { runImport } from './import-command.js'

// The first Ctrl-C stops following the import and says where it is; a second one, while that is said, ends the process at once.
const interrupt = new AbortController()
process.once('SIGINT', () => interrupt.abort())

process.exitCode = await runImport(process.argv.slice(2), {
  io: { out: line => process.stdout.write(line + '\n'), err: line => process.stderr.write(line + '\n') },
  progress: { tty: process.stderr.isTTY, write: text => process.stderr.write(text) },
  env: process.env,
  stdout: process.stdout,
  fetch,
  retryMs: 1000,
  interrupted: interrupt.signal
})
