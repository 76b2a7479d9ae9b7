// Configuration: defaults, environment, overrides, and one-line errors naming the bad variable.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { withEnvFile } from '../src/config/env-file.js'
import { ConfigError, defaults, loadConfig } from '../src/config/index.js'

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
  t.equal(loadConfig({ OPS_MAX_CONNECTIONS: '8' }).opsMaxConnections, 8)
  t.throws(() => loadConfig({ OPS_MAX_CONNECTIONS: '0' }), /OPS_MAX_CONNECTIONS/)
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
    [{ HOST: 'localhost:3000' }, /^HOST takes no port \(got "localhost:3000"\): set HOST=localhost and PORT=3000$/],
    [{ HOST: '[::1]:8080' }, /^HOST takes no port \(got "\[::1\]:8080"\): set HOST=::1 and PORT=8080$/],
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

t.test('PUBLIC_URL names where clients reach the service: an absolute http(s) URL, kept without a trailing slash', async t => {
  t.equal(defaults.publicUrl, null, 'unset: the served document names the address the server listens on')
  t.equal(loadConfig({ PUBLIC_URL: 'https://api.example.org/' }).publicUrl, 'https://api.example.org')
  t.equal(loadConfig({ PUBLIC_URL: 'http://10.0.0.5:8080/books-api/' }).publicUrl, 'http://10.0.0.5:8080/books-api')
  for (const bad of ['/api', 'api.example.org', 'ftp://api.example.org', 'https://api.example.org/?a=1', 'https://api.example.org/#x', 'https://user:pw@api.example.org']) {
    t.throws(() => loadConfig({ PUBLIC_URL: bad }), { name: 'ConfigError', message: /^PUBLIC_URL must be an http:\/\/ or https:\/\/ URL without credentials, query or fragment/ }, bad)
  }
})

t.test('DATABASE_URL chooses the engine; a bad one is named with its password masked', async t => {
  t.match(loadConfig({ DATABASE_PATH: '/srv/a.sqlite' }), { databasePath: '/srv/a.sqlite', postgresUrl: null, recordCacheSize: 10000 })
  t.match(loadConfig({ DATABASE_URL: 'file:/srv/b.sqlite', DATABASE_PATH: '/srv/a.sqlite' }), { databasePath: '/srv/b.sqlite', postgresUrl: null })
  t.match(loadConfig({ DATABASE_URL: './c.sqlite' }), { databasePath: './c.sqlite', postgresUrl: null })
  const pg = loadConfig({ DATABASE_URL: 'postgresql://app:s3cret@db:5432/books' })
  t.match(pg, { postgresUrl: 'postgresql://app:s3cret@db:5432/books', recordCacheSize: 0, pgPoolMax: 4, apiKeyCacheTtl: 2000 }, 'caches are off on PostgreSQL')
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/books', RECORD_CACHE_SIZE: '50' }).recordCacheSize, 50, 'unless asked for')
  t.match(loadConfig({ DATABASE_URL: 'postgres://db/b', PG_POOL_MAX: '8', PG_CONNECT_TIMEOUT_MS: '500', PG_STATEMENT_TIMEOUT_MS: '900', API_KEY_CACHE_TTL_MS: '0' }),
    { pgPoolMax: 8, pgConnectTimeout: 500, pgStatementTimeout: 900, apiKeyCacheTtl: 0 })
  for (const url of ['mysql://root:s3cret@db/books', 'postgres://app:s3cret@[db/books']) {
    const message = (() => {
      try {
        loadConfig({ DATABASE_URL: url })
      } catch (error) {
        return error instanceof ConfigError ? error.message : `not a ConfigError: ${String(error)}`
      }
      return 'accepted'
    })()
    t.match(message, /^DATABASE_URL .*:\*\*\*@/, url)
    t.notMatch(message, 's3cret', 'the password is never shown')
  }
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://db/b', PG_POOL_MAX: '0' }), /PG_POOL_MAX must be an integer from 1 to 1000/)
})

t.test('loadConfig reads the shared rate-limit settings; a bad REDIS_URL is refused with its password masked', async t => {
  t.match(defaults, { redisUrl: null, redisKeyPrefix: 'rl:', redisTimeout: 250 })
  t.match(loadConfig({ REDIS_URL: 'rediss://:s3cret@cache.example:6380/2', REDIS_KEY_PREFIX: 'staging:rl:', REDIS_TIMEOUT_MS: '50' }), {
    redisUrl: 'rediss://:s3cret@cache.example:6380/2',
    redisKeyPrefix: 'staging:rl:',
    redisTimeout: 50
  })
  const cases: [Record<string, string>, RegExp][] = [
    [{ REDIS_URL: 'http://user:s3cret@cache.example' }, /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL \(got "http:\/\/user:\*\*\*@cache.example"\)$/],
    [{ REDIS_URL: 'redis://:s3cret@[::1' }, /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL \(got "redis:\/\/:\*\*\*@\[::1"\)$/],
    [{ REDIS_KEY_PREFIX: 'a b' }, /^REDIS_KEY_PREFIX must be 1 to 64 printable characters without spaces \(got "a b"\)$/],
    [{ REDIS_KEY_PREFIX: 'x'.repeat(65) }, /^REDIS_KEY_PREFIX must be/],
    [{ REDIS_TIMEOUT_MS: '5' }, /^REDIS_TIMEOUT_MS must be an integer from 10 to 60000/]
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
})

t.test('loadConfig reads the operations settings: OPS_PORT (a port, public or off), OPS_HOST, METRICS_TOKEN, METRICS, READY_TIMEOUT_MS, SHUTDOWN_DRAIN_MS', async t => {
  t.match(loadConfig({}), { opsPort: 9464, opsHost: '127.0.0.1', metricsToken: null, metrics: true, readyTimeout: 1000, shutdownDrain: 5000 })
  const token = 'a-metrics-token-of-some-length'
  t.match(loadConfig({ OPS_PORT: '0', OPS_HOST: '0.0.0.0', METRICS: 'false', READY_TIMEOUT_MS: '250', SHUTDOWN_DRAIN_MS: '0' }), { opsPort: 0, opsHost: '0.0.0.0', metrics: false, readyTimeout: 250, shutdownDrain: 0 })
  t.match(loadConfig({ OPS_PORT: 'off' }), { opsPort: 'off' })
  t.match(loadConfig({ OPS_PORT: 'public', METRICS_TOKEN: token }), { opsPort: 'public', metricsToken: token })
  t.match(loadConfig({ METRICS_TOKEN: token }), { opsPort: 9464, metricsToken: token }, 'a token may guard the ops port too')
  const cases: [Record<string, string>, string][] = [
    [{ OPS_PORT: 'public' }, 'OPS_PORT=public serves /metrics on the API\'s port, which needs METRICS_TOKEN'],
    [{ OPS_PORT: '70000' }, 'OPS_PORT must be a port from 0 to 65535, public or off (got "70000")'],
    [{ OPS_PORT: 'yes' }, 'OPS_PORT must be a port from 0 to 65535, public or off (got "yes")'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN must be 16 to 512 printable characters without spaces (value not shown)'],
    [{ METRICS: 'on' }, 'METRICS must be true or false (got "on")'],
    [{ READY_TIMEOUT_MS: '5' }, 'READY_TIMEOUT_MS must be an integer from 10 to 60000 (got "5")'],
    [{ SHUTDOWN_DRAIN_MS: '-1' }, 'SHUTDOWN_DRAIN_MS must be an integer from 0 to 600000 (got "-1")']
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
  t.throws(() => loadConfig({}, { opsPort: 'public' }), { name: 'ConfigError' }, 'an override to the public port needs a token too')
})

t.test('tracing is off unless the standard OTEL_* variables configure it', async t => {
  t.equal(defaults.tracing, null)
  const off: Record<string, string>[] = [
    {},
    { OTEL_SERVICE_NAME: 'shelf', OTEL_TRACES_SAMPLER: 'always_on' },
    { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
    { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' },
    { OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'TRUE' }
  ]
  for (const env of off) t.equal(loadConfig(env).tracing, null, JSON.stringify(env))

  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing, {
    serviceName: 'books-students-api',
    resourceAttributes: {},
    otlpEndpoint: 'http://localhost:4318/v1/traces',
    console: false,
    sampler: 'parentbased_always_on',
    samplerRatio: 1
  }, 'otlp alone sends to a collector on this host')
  t.match(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318/' }).tracing,
    { otlpEndpoint: 'https://collector.example:4318/v1/traces', console: false }, 'an endpoint alone turns OTLP on, the traces path below it')
  t.match(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/traces', OTEL_SDK_DISABLED: 'false' }).tracing,
    { otlpEndpoint: 'http://b:9999/traces' }, 'the traces endpoint is used as it is, and wins')
  t.match(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }).tracing,
    { otlpEndpoint: null, console: true }, 'an exporter named explicitly is the only one')
  t.match(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp, console', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing,
    { otlpEndpoint: 'http://localhost:4318/v1/traces', console: true })
  t.match(loadConfig({
    OTEL_TRACES_EXPORTER: 'console',
    OTEL_SERVICE_NAME: 'shelf',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging, team=books%20%26%20students,service.name=ignored',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25'
  }).tracing, {
    serviceName: 'shelf',
    resourceAttributes: { 'deployment.environment.name': 'staging', team: 'books & students' },
    sampler: 'parentbased_traceidratio',
    samplerRatio: 0.25
  })
  t.match(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_RESOURCE_ATTRIBUTES: 'service.name=shelf' }).tracing,
    { serviceName: 'shelf' }, 'service.name among the resource attributes names the service when OTEL_SERVICE_NAME does not')
  t.match(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'traceidratio' }).tracing,
    { sampler: 'traceidratio', samplerRatio: 1 }, 'a ratio sampler without its argument records everything, as the SDK does')
  t.match(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'ignored' }).tracing,
    { sampler: 'always_off' }, 'the argument is read only for the ratio samplers')
  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }, { tracing: null }).tracing, null, 'an override wins')
})

t.test('bad OTEL_* values stop the start with one line naming the variable', async t => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /^OTEL_TRACES_EXPORTER must be otlp, console or none, or a comma-separated list of them \(got "zipkin"\)$/],
    [{ OTEL_TRACES_EXPORTER: 'otlp,jaeger' }, /^OTEL_TRACES_EXPORTER must be .*\(got "jaeger"\)$/],
    [{ OTEL_SDK_DISABLED: 'yes' }, /^OTEL_SDK_DISABLED must be true or false \(got "yes"\)$/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL \(got "collector:4318"\)$/],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' }, /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:\/\/ or https:\/\/ URL/],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:s3cret@[collector' }, /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be .*\(got "https:\/\/user:\*\*\*@\[collector"\)$/],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json: this service exports OTLP over HTTP \(got "grpc"\)$/],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be/],
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /^OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio \(got "jaeger_remote"\)$/],
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 for traceidratio \(got "1.5"\)$/],
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, /^OTEL_TRACES_SAMPLER_ARG must be/],
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_RESOURCE_ATTRIBUTES: 'team' }, /^OTEL_RESOURCE_ATTRIBUTES must be key=value pairs, comma-separated, values percent-encoded \(got "team"\)$/],
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_RESOURCE_ATTRIBUTES: '=books' }, /^OTEL_RESOURCE_ATTRIBUTES must be/],
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_RESOURCE_ATTRIBUTES: 'team=100%' }, /^OTEL_RESOURCE_ATTRIBUTES must be .*\(got "team=100%"\)$/]
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).tracing?.console, true, 'the protocol matters only when exporting over OTLP')
})

t.test('loadConfig reads the webhook settings and refuses unusable ones', async t => {
  t.match(defaults, { webhookAllowedAddresses: [], webhookTimeout: 15000, webhookDisableAfterHours: 120, webhookEndpointsMax: 100, webhookPollInterval: 1000 })
  t.match(loadConfig({
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1, 10.0.0.0/8,::1',
    WEBHOOK_TIMEOUT_MS: '5000',
    WEBHOOK_DISABLE_AFTER_HOURS: '24',
    WEBHOOK_ENDPOINTS_MAX: '10',
    WEBHOOK_POLL_MS: '0'
  }), { webhookAllowedAddresses: ['127.0.0.1', '10.0.0.0/8', '::1'], webhookTimeout: 5000, webhookDisableAfterHours: 24, webhookEndpointsMax: 10, webhookPollInterval: 0 })
  const cases: [Record<string, string>, RegExp][] = [
    [{ WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1,localhost' }, /^WEBHOOK_ALLOWED_ADDRESSES must list IP addresses or CIDR ranges, comma-separated \(got "localhost"\)$/],
    [{ WEBHOOK_ALLOWED_ADDRESSES: '10.0.0.0/33' }, /^WEBHOOK_ALLOWED_ADDRESSES must list/],
    [{ WEBHOOK_TIMEOUT_MS: '10' }, /^WEBHOOK_TIMEOUT_MS must be an integer from 100 to 120000/],
    [{ WEBHOOK_DISABLE_AFTER_HOURS: '0' }, /^WEBHOOK_DISABLE_AFTER_HOURS must be an integer from 1 to 8760/],
    [{ WEBHOOK_ENDPOINTS_MAX: '1001' }, /^WEBHOOK_ENDPOINTS_MAX must be an integer from 1 to 1000/],
    [{ WEBHOOK_POLL_MS: 'x' }, /^WEBHOOK_POLL_MS must be an integer from 0 to 600000/]
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
})

t.test('a secret with surrounding spaces is refused without showing it, and a URL\'s password stays masked', async t => {
  const cases: [Record<string, string>, string][] = [
    [{ ADMIN_API_KEY: `${'k'.repeat(40)}\n` }, 'ADMIN_API_KEY must not start or end with spaces (value not shown)'],
    [{ METRICS_TOKEN: ` ${'t'.repeat(20)}` }, 'METRICS_TOKEN must not start or end with spaces (value not shown)'],
    [{ DATABASE_URL: 'postgres://app:s3cret@db/books ' }, 'DATABASE_URL must not start or end with spaces (got "postgres://app:***@db/books ")'],
    [{ REDIS_URL: ' redis://:s3cret@cache' }, 'REDIS_URL must not start or end with spaces (got " redis://:***@cache")'],
    [{ REDIS_KEY_PREFIX: ' rl:' }, 'REDIS_KEY_PREFIX must not start or end with spaces (got " rl:")']
  ]
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
})

t.test('a .env file: its settings beneath the environment; a file named by ENV_FILE must be there; off reads none', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-env-file-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  t.same(withEnvFile({ PORT: '1' }, dir), { env: { PORT: '1' }, file: null, fromFile: [] }, 'no .env: the environment as it is')
  writeFileSync(join(dir, '.env'), '# settings\nPORT=8080\nDATABASE_URL="postgres://a:b@db/x"\nexport HOST=0.0.0.0\nEMPTY=\n')
  const read = withEnvFile({ PORT: '1', LANG: 'C' }, dir)
  t.same(read.fromFile, ['DATABASE_URL', 'EMPTY', 'HOST'], 'what the environment sets is not taken from the file (PORT); a shell\'s export prefix is allowed')
  t.same(read.env, { DATABASE_URL: 'postgres://a:b@db/x', HOST: '0.0.0.0', EMPTY: '', PORT: '1', LANG: 'C' })
  t.equal(read.file, join(dir, '.env'))
  t.equal(loadConfig(read.env).postgresUrl, 'postgres://a:b@db/x', 'the configuration reads it')
  writeFileSync(join(dir, 'prod.env'), 'PORT=9000\n')
  t.same(withEnvFile({ ENV_FILE: 'prod.env' }, dir).env, { PORT: '9000', ENV_FILE: 'prod.env' }, 'ENV_FILE names another file, relative to the working directory')
  t.same(withEnvFile({ ENV_FILE: 'off' }, dir), { env: { ENV_FILE: 'off' }, file: null, fromFile: [] })
  t.throws(() => withEnvFile({ ENV_FILE: 'missing.env' }, dir), new ConfigError(`ENV_FILE: cannot read ${join(dir, 'missing.env')} (ENOENT)`))
  t.throws(() => withEnvFile({}, join(dir, '.env')), { message: /^ENV_FILE: cannot read .*\.env\/\.env \(ENOTDIR\)$/ }, 'a .env that cannot be read is said, not passed over')
})
