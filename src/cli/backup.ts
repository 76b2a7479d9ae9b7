// Process entry of the backup CLI (npm run backup); the work is in backup-command.ts.
import { runBackup } from './backup-command.js'

process.exitCode = await runBackup(process.argv.slice(2), process.env, {
  out: line => process.stdout.write(line + '\n'),
  err: line => process.stderr.write(line + '\n')
})
