// Outside services some tests need (Redis, PostgreSQL, a browser, the npm registry): present, skipped with how to run them, or required in CI.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import type { Test } from 'tap'

type Env = Readonly<Record<string, string | undefined>>

export interface ServiceNeed {
  /** Shown to the reader: "Redis at redis://127.0.0.1:6379". */
  name: string
  /** Resolves when the service answers; its rejection says why not. */
  check: () => Promise<void>
  /** What a developer does to run the tests, e.g. "start redis-server on port 6379 or set TEST_REDIS_URL". */
  howToRun: string
  /** Where CI is read from; process.env unless given (tests of this helper pass their own). */
  env?: Env
}

/** CI runners set CI=true (GitHub, GitLab, .ci/run); there a missing service is a failure, never a skip. */
export function inCi (env: Env = process.env): boolean {
  return env.CI !== undefined && !['', '0', 'false'].includes(env.CI)
}

/**
 * Options for the one t.test that groups everything needing the service: `{}` when it answers;
 * `{ skip }` with one line on how to run them when it does not, on a developer's machine; under CI,
 * a failed assertion on `t` and `{}`, so the tests run and fail as well rather than vanish.
 */
export async function needService (t: Pick<Test, 'fail'>, { name, check, howToRun, env }: ServiceNeed): Promise<{ skip?: string }> {
  const reason = await check().then(() => null, (error: Error) => error.message)
  if (reason === null) return {}
  if (inCi(env)) {
    t.fail(`${name} is required under CI=true but does not answer (${reason}); ${howToRun}`)
    return {}
  }
  return { skip: `${name} does not answer (${reason}): to run these tests, ${howToRun}` }
}

// --- Chromium --------------------------------------------------------------------------------

/** The browser the Swagger UI test drives: TEST_CHROMIUM, or Debian's chromium (never a downloaded one). */
export function chromiumPath (env: Env = process.env): string {
  return env.TEST_CHROMIUM ?? '/usr/bin/chromium'
}

/** A browser is there when its file may be run; whether it starts is the test's own concern. */
export function needChromium (t: Pick<Test, 'fail'>, env: Env = process.env): Promise<{ skip?: string }> {
  const path = chromiumPath(env)
  return needService(t, {
    name: `Chromium at ${path}`,
    check: async () => { accessSync(path, constants.X_OK) },
    howToRun: 'install it (apt-get install chromium) or point TEST_CHROMIUM at one',
    env
  })
}

// --- The npm registry ------------------------------------------------------------------------

/**
 * npm can fetch packages for a new project: from its registry, or from its cache when offline (as the
 * tests' installs use --prefer-offline). One look-up of TypeScript's versions with `env` (a user's shell:
 * PATH, HOME, the registry and proxy settings), no retries, so a closed network says so at once.
 */
export function needNpmRegistry (t: Pick<Test, 'fail'>, env: Env, ciEnv: Env = process.env): Promise<{ skip?: string }> {
  return needService(t, {
    name: `The npm registry${env.npm_config_registry === undefined ? '' : ` at ${env.npm_config_registry}`}`,
    check: () => new Promise((resolve, reject) => {
      execFile('npm', ['view', 'typescript', 'version', '--prefer-offline', '--fetch-retries=0', '--fetch-timeout=10000'], { env }, (error, _stdout, stderr) => {
        if (error === null) resolve()
        else reject(new Error(/^npm error code (\S+)/m.exec(stderr)?.[1] ?? `npm view exited with ${String(error.code)}`))
      })
    }),
    howToRun: 'connect this machine to it, or point npm_config_registry at a mirror',
    env: ciEnv
  })
}

// --- Redis -----------------------------------------------------------------------------------

/** The Redis the tests share: TEST_REDIS_URL, or the one this kind of machine runs on 6379. */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** One connection attempt and a PING, failing fast: a check, not a client. */
export async function pingRedis (url: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  // connect() only says "Connection is closed."; the 'error' event has the cause (ECONNREFUSED…).
  let cause: Error | undefined
  client.on('error', (error: Error) => { cause ??= error })
  try {
    await client.connect()
    await client.ping()
  } catch (error) {
    throw cause ?? error
  } finally {
    client.disconnect()
  }
}

export function needRedis (t: Pick<Test, 'fail'>, url = testRedisUrl): Promise<{ skip?: string }> {
  return needService(t, {
    name: `Redis at ${url}`,
    check: () => pingRedis(url),
    howToRun: 'start one (redis-server --port 6379 --save "" --appendonly no) or point TEST_REDIS_URL at one'
  })
}

/** A key prefix of this test's own, whose keys are deleted when `t` ends; the shared Redis is never flushed. */
export function redisKeyPrefix (t: Test, url = testRedisUrl): { prefix: string, client: Redis } {
  const prefix = `test:${randomUUID()}:`
  // Gives up rather than waits for a Redis that is not there (under CI the tests then fail, not hang).
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  t.teardown(async () => {
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(...keys)
    await client.quit()
  })
  return { prefix, client }
}

/** A port nothing listens on (just released by the OS). */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

export function needRedisServer (t: Pick<Test, 'fail'>): Promise<{ skip?: string }> {
  return needService(t, {
    name: 'redis-server',
    check: async () => {
      const { error } = spawnSync('redis-server', ['--version'], { stdio: 'ignore' })
      if (error !== undefined) throw error
    },
    howToRun: 'install it (apt-get install redis-server)'
  })
}

/**
 * A Redis of the test's own on `port`, which the test may stop, pause and start again; killed by its
 * pid when `t` ends. A child rather than --daemonize, so that it is ours to signal.
 */
export async function startRedisServer (t: Test, port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.teardown(() => { child.kill('SIGKILL') })
  const url = `redis://127.0.0.1:${port}`
  for (;;) {
    try {
      await pingRedis(url)
      return child
    } catch (error) {
      if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode}: ${(error as Error).message}`)
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
}

/** Waits until `condition` holds, looking every 10 ms; the test's own timeout bounds the wait. */
export async function until (condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 10))
}
