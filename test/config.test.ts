// Configuration: defaults, environment, overrides, and one-line errors naming the bad variable.
import t from 'tap'
import { ConfigError, defaults, loadConfig } from '../src/config.js'

t.test('loadConfig uses the defaults for an empty environment', async t => {
  t.same(loadConfig({}), defaults)
  t.same(defaults, {
    port: 3000,
    host: '127.0.0.1',
    databasePath: './data/books-students.sqlite',
    logLevel: 'info',
    bodyLimit: 65536,
    databaseSynchronous: 'normal',
    idempotencyTtlSeconds: 86400
  })
})

t.test('loadConfig reads every variable, and overrides win over it', async t => {
  const env = {
    PORT: '8080',
    HOST: '0.0.0.0',
    DATABASE_PATH: '/tmp/x.sqlite',
    LOG_LEVEL: 'warn',
    BODY_LIMIT: '2048',
    DATABASE_SYNCHRONOUS: 'full',
    IDEMPOTENCY_TTL_SECONDS: '3600'
  }
  t.same(loadConfig(env), {
    port: 8080,
    host: '0.0.0.0',
    databasePath: '/tmp/x.sqlite',
    logLevel: 'warn',
    bodyLimit: 2048,
    databaseSynchronous: 'full',
    idempotencyTtlSeconds: 3600
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
    [{ IDEMPOTENCY_TTL_SECONDS: '5' }, /^IDEMPOTENCY_TTL_SECONDS must be an integer from 60/]
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
    t.throws(() => loadConfig(env), ConfigError)
  }
})
