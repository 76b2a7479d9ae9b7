// The repository contract on PostgreSQL, each test on a database of its own.
import t from 'tap'
import { openPostgresRepositories } from '../src/storage/postgres/index.js'
import { testDatabase, withPostgres } from './postgres.js'
import { storageContract } from './storage-contract.js'

await withPostgres(t, t => {
  storageContract(t, async t => {
    const url = await testDatabase(t)
    return async () => openPostgresRepositories({ url, connections: 2, connectTimeout: 2000, statementTimeout: 5000 }, { apiKeyCacheTtl: 2000 })
  })
})
