// The repository contract on SQLite, on a file so that a second open is a restart.
import t from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { tempDatabase } from './helper.js'
import { storageContract } from './storage-contract.js'

storageContract(t, async t => {
  const path = tempDatabase(t)
  return async () => openSqliteRepositories(path)
})
