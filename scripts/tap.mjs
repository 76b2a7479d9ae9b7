// `npm test`'s last step: tap, with its 100 % coverage rule relaxed only when a service some tests need is missing here.
// Those tests skip themselves with one line saying how to run them (test/services.ts); in CI they fail instead.
import { spawnSync } from 'node:child_process'
import { Redis } from 'ioredis'
import pg from 'pg'

const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function answers (connect, close) {
  try {
    await connect()
    return true
  } catch {
    return false
  } finally {
    await close().catch(() => {})
  }
}

const postgres = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 })
const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null })
redis.on('error', () => {})
const missing = [
  ...await answers(() => postgres.connect(), () => postgres.end()) ? [] : [`PostgreSQL at ${postgresUrl} (TEST_POSTGRES_URL)`],
  ...await answers(() => redis.connect().then(() => redis.ping()), async () => redis.disconnect()) ? [] : [`Redis at ${redisUrl} (TEST_REDIS_URL)`]
]

const args = process.argv.slice(2)
if (process.env.CI !== 'true' && missing.length > 0) {
  console.log(`npm test: ${missing.join(' and ')} not reachable: the tests that need it are skipped and coverage is not enforced; start it to run them all (README, "Run on PostgreSQL")`)
  args.push('--allow-incomplete-coverage')
}
const { status } = spawnSync('tap', args, { stdio: 'inherit' })
process.exit(status ?? 1)
