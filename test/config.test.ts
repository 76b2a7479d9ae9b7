// Configuration: defaults, environment, overrides, and one-line errors naming the bad variable.
import t from 'tap'
import { ConfigError, defaults, loadConfig } from '../src/config.js'

t.test('loadConfig uses the defaults for an empty environment', async t => {
  t.same(loadConfig({}), defaults)
  t.match(defaults, {
    port: 3000,
    host: '127.0.0.1',
    databasePath: './data/books-students.sqlite',
    logLevel: 'info',
    bodyLimit: 65536,
    databaseSynchronous: 'normal',
    idempotencyTtlSeconds: 86400
  })
  t.match(defaults, {
    adminApiKey: null,
    publicBookReads: true,
    rateLimit: { requests: 600, seconds: 60 },
    rateLimitAnonymous: { requests: 120, seconds: 60 },
    corsOrigins: [],
    headersTimeout: 10000,
    requestTimeout: 30000,
    keepAliveTimeout: 5000,
    maxConnections: 1024
  })
})

t.test('loadConfig reads the access and limit settings', async t => {
  const config = loadConfig({
    ADMIN_API_KEY: 'k'.repeat(40),
    PUBLIC_BOOK_READS: 'false',
    RATE_LIMIT: '1000/3600',
    RATE_LIMIT_ANONYMOUS: '10/1',
    CORS_ORIGINS: 'https://app.example.org, http://localhost:5173',
    HEADERS_TIMEOUT: '2000',
    REQUEST_TIMEOUT: '5000',
    KEEP_ALIVE_TIMEOUT: '1000',
    MAX_CONNECTIONS: '50'
  })
  t.match(config, {
    adminApiKey: 'k'.repeat(40),
    publicBookReads: false,
    rateLimit: { requests: 1000, seconds: 3600 },
    rateLimitAnonymous: { requests: 10, seconds: 1 },
    corsOrigins: ['https://app.example.org', 'http://localhost:5173'],
    headersTimeout: 2000,
    requestTimeout: 5000,
    keepAliveTimeout: 1000,
    maxConnections: 50
  })
  t.equal(loadConfig({ PUBLIC_BOOK_READS: 'true' }).publicBookReads, true)
})

t.test('loadConfig reads every variable, and overrides win over it', async t => {
  const env = {
    PORT: '8080',
    HOST: '0.0.0.0',
    DATABASE_PATH: '/tmp/x.sqlite',
    LOG_LEVEL: 'warn',
    BODY_LIMIT: '2048',
    DATABASE_SYNCHRONOUS: 'full',
    IDEMPOTENCY_TTL_SECONDS: '3600',
    RECORD_CACHE_SIZE: '0'
  }
  t.match(loadConfig(env), {
    port: 8080,
    host: '0.0.0.0',
    databasePath: '/tmp/x.sqlite',
    logLevel: 'warn',
    bodyLimit: 2048,
    databaseSynchronous: 'full',
    idempotencyTtlSeconds: 3600,
    recordCacheSize: 0
  })
  t.equal(loadConfig(env, { port: 0 }).port, 0)
  t.equal(loadConfig({ PORT: '' }).port, 3000, 'an empty variable means unset')
})

t.test('loadConfig refuses unusable values with a message naming the variable', async t => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'abc' }, /^PORT must be an integer from 0 to 65535 \(got "abc"\)$/],
    [{ PORT: '70000' }, /^PORT must be/],
    [{ PORT: '-1' }, /^PORT must be/],
    [{ BODY_LIMIT: '10' }, /^BODY_LIMIT must be an integer from 1024/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)$/],
    [{ HOST: ' localhost' }, /^HOST must not start or end with spaces/],
    [{ DATABASE_SYNCHRONOUS: 'off' }, /^DATABASE_SYNCHRONOUS must be normal or full \(got "off"\)$/],
    [{ IDEMPOTENCY_TTL_SECONDS: '5' }, /^IDEMPOTENCY_TTL_SECONDS must be an integer from 60/],
    [{ RECORD_CACHE_SIZE: '-1' }, /^RECORD_CACHE_SIZE must be an integer from 0 to 1000000/],
    [{ ADMIN_API_KEY: 'short' }, /^ADMIN_API_KEY must be 32 to 512 printable characters without spaces \(value not shown\)$/],
    [{ ADMIN_API_KEY: 'a b'.repeat(20) }, /^ADMIN_API_KEY must be/],
    [{ PUBLIC_BOOK_READS: 'yes' }, /^PUBLIC_BOOK_READS must be true or false \(got "yes"\)$/],
    [{ RATE_LIMIT: '600' }, /^RATE_LIMIT must be <requests>\/<seconds>, e.g. 600\/60/],
    [{ RATE_LIMIT: '0/60' }, /^RATE_LIMIT must be/],
    [{ RATE_LIMIT_ANONYMOUS: '10/0' }, /^RATE_LIMIT_ANONYMOUS must be/],
    [{ RATE_LIMIT_ANONYMOUS: '10/86401' }, /^RATE_LIMIT_ANONYMOUS must be/],
    [{ CORS_ORIGINS: '*' }, /^CORS_ORIGINS must list origins such as https:\/\/app.example.org, comma-separated \(got "\*"\)$/],
    [{ CORS_ORIGINS: 'https://a.example/path' }, /^CORS_ORIGINS must list/],
    [{ HEADERS_TIMEOUT: '50' }, /^HEADERS_TIMEOUT must be an integer from 100/],
    [{ MAX_CONNECTIONS: '0' }, /^MAX_CONNECTIONS must be an integer from 1/],
    [{ HEADERS_TIMEOUT: '40000' }, /^HEADERS_TIMEOUT \(40000\) must not exceed REQUEST_TIMEOUT \(30000\)$/]
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
    t.throws(() => loadConfig(env), ConfigError)
  }
})

t.test('DATABASE_URL: postgres:// selects PostgreSQL (read cache off), a path keeps SQLite, anything else is refused, password masked', async t => {
  const postgres = loadConfig({ DATABASE_URL: 'postgres://u:secret@db.example:5432/books' })
  t.same([postgres.postgresUrl, postgres.recordCacheSize], ['postgres://u:secret@db.example:5432/books', 0])
  t.equal(loadConfig({ DATABASE_URL: 'postgresql://db.example/books' }).postgresUrl, 'postgresql://db.example/books')
  const file = loadConfig({ DATABASE_URL: 'file:./data/other.sqlite', DATABASE_PATH: './data/ignored.sqlite' })
  t.same([file.databasePath, file.postgresUrl], ['./data/other.sqlite', null], 'a path (file: or not) wins over DATABASE_PATH')
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://u:secret@[db/books' }), { name: 'ConfigError', message: 'DATABASE_URL is not a valid URL (got "postgres://u:***@[db/books")' })
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://u:secret@db/books' }), { name: 'ConfigError', message: 'DATABASE_URL must be a postgres:// URL or a SQLite file path (got "mysql://u:***@db/books")' })
})
