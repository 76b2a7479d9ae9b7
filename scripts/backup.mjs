// `npm run backup -- <file>`: a consistent copy of the live database through SQLite's online backup API.
import { existsSync } from 'node:fs'
import Database from 'better-sqlite3'

// Same variable and default as the service (src/config.ts), so the backup copies what the service writes.
const source = process.env.DATABASE_PATH || './data/books-students.sqlite'
const target = process.argv[2]

function fail (message, code = 1) {
  console.error(`backup: ${message}`)
  process.exit(code)
}

if (target === undefined) fail('usage: npm run backup -- <file>   (copies DATABASE_PATH, default ./data/books-students.sqlite)', 2)
// Never overwrite: an earlier backup may be the only good copy left.
if (existsSync(target)) fail(`${target} already exists; choose a new file`)

let db
try {
  // A connection of its own: with WAL the service keeps reading and writing while pages are copied.
  db = new Database(source, { fileMustExist: true })
} catch (error) {
  fail(`cannot open ${source}: ${error.message}`)
}
db.pragma('busy_timeout = 5000')

try {
  const { totalPages } = await db.backup(target, {
    progress ({ totalPages, remainingPages }) {
      const done = totalPages - remainingPages
      console.log(`backup: ${Math.floor((done / totalPages) * 100)}% (${done}/${totalPages} pages)`)
      // Large steps: SQLite restarts a backup whose source changed between steps, so few steps finish under load.
      return 1000
    }
  })
  console.log(`backup: 100% (${totalPages}/${totalPages} pages), ${source} copied to ${target}`)
} catch (error) {
  fail(`failed: ${error.message}`)
} finally {
  db.close()
}
