// Process entry of the export CLI (npm run export); the work is in export-command.ts.
import { runExport } from './export-command.js'

process.exitCode = await runExport(process.argv.slice(2), {
  io: { out: line => process.stdout.write(line + '\n'), err: line => process.stderr.write(line + '\n') },
  progress: { tty: process.stderr.isTTY, write: text => process.stderr.write(text) },
  env: process.env,
  stdout: process.stdout,
  fetch,
  retryMs: 1000
})
