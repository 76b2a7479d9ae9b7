// `npm test`'s last step: tap, with its 100 % coverage rule relaxed only when something some tests need is missing here.
// Those tests skip themselves with one line saying how to run them (test/services.ts); in CI they fail instead.
import { spawnSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { Redis } from 'ioredis'
import pg from 'pg'
import { pruneCache } from './ts-loader/cache.mjs'

const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const chromium = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium'
// The same rule as test/services.ts's inCi: CI runners set CI=true, and a set CI means CI unless it says otherwise.
const inCi = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI)

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

const runs = (command, args) => spawnSync(command, args, { stdio: 'ignore' }).error === undefined
function executable (path) {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

const postgres = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 })
const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null })
redis.on('error', () => {})
const missing = [
  ...await answers(() => postgres.connect(), () => postgres.end()) ? [] : [`PostgreSQL at ${postgresUrl} (TEST_POSTGRES_URL)`],
  ...await answers(() => redis.connect().then(() => redis.ping()), async () => redis.disconnect()) ? [] : [`Redis at ${redisUrl} (TEST_REDIS_URL)`],
  ...runs('redis-server', ['--version']) ? [] : ['redis-server (apt-get install redis-server)'],
  ...executable(chromium) ? [] : [`Chromium at ${chromium} (TEST_CHROMIUM; apt-get install chromium)`]
]

// The tests' TypeScript, types blanked, is kept by content (scripts/ts-loader); each edit leaves a version behind: a week on, they go.
pruneCache()

const args = process.argv.slice(2)
if (!inCi && missing.length > 0) {
  console.log(`npm test: ${missing.join(' and ')} not available: the tests that need it are skipped and coverage is not enforced; install or start it to run them all (docs/contributing.md, "Tests")`)
  args.push('--allow-incomplete-coverage')
}
const { status } = spawnSync('tap', args, { stdio: 'inherit' })
process.exit(status ?? 1)
