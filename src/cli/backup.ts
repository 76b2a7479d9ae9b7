// Process entry of the backup CLI (npm run backup); the work is in backup-command.ts.
import { commandEnvironment } from './args.js'
import { runBackup } from './backup-command.js'

process.exitCode = await runBackup(process.argv.slice(2), commandEnvironment('backup'), {
  out: line => process.stdout.write(line + '\n'),
  err: line => process.stderr.write(line + '\n')
})
