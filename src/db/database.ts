// Opens the SQLite database with the service's pragmas and brings its schema up to date.
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { migrate } from './migrations.js'

export type Synchronous = 'normal' | 'full'

export interface DatabaseOptions {
  /** How hard a commit waits for the disk; see README "Safe writes". */
  synchronous?: Synchronous
}

export function openDatabase (path: string, { synchronous = 'normal' }: DatabaseOptions = {}): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  // WAL lets readers (and `npm run backup`) run beside the writer. A commit is in the WAL file before
  // the call returns, so with synchronous=NORMAL it survives a crash or kill -9 of this process (the OS
  // holds the pages), though not a power cut; FULL fsyncs the WAL on every commit and survives that too.
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  migrate(db)
  return db
}
