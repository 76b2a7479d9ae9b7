// `npm test`'s last step: tap, with its 100 % coverage rule relaxed only when a service some tests need is missing here.
// Those tests skip themselves with one line saying how to run them (test/postgres.ts); in CI they fail instead.
import { spawnSync } from 'node:child_process'
import pg from 'pg'

const serverUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function reachable () {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

const args = process.argv.slice(2)
if (process.env.CI !== 'true' && !await reachable()) {
  console.log(`npm test: PostgreSQL is not reachable at ${serverUrl}, so its tests are skipped and the PostgreSQL engine's coverage is not enforced; start PostgreSQL or set TEST_POSTGRES_URL to run them (README, "Run on PostgreSQL")`)
  args.push('--allow-incomplete-coverage')
}
const { status } = spawnSync('tap', args, { stdio: 'inherit', shell: false })
process.exit(status ?? 1)
