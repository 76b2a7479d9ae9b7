// Opens the SQLite database with the service's pragmas and brings its schema up to date.
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { migrate } from './migrations.js'

export function openDatabase (path: string): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  // WAL lets readers run beside the writer; with synchronous=NORMAL a committed transaction
  // survives a crash of this process (the OS holds the WAL pages), though not a power cut.
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  migrate(db)
  return db
}
