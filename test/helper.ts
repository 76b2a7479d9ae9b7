// Test helpers: a fresh app on an empty database whose every response is checked against the contract.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import type { InjectOptions } from 'fastify'
import type { Response as InjectResponse } from 'light-my-request'
import type { Test } from 'tap'
import { type AppDependencies, buildApp } from '../src/app.js'
import { type Config, loadConfig } from '../src/config/index.js'
import { openConfiguredRepositories } from '../src/storage/open.js'
import type { StartReader } from '../src/storage/sqlite/read-pool.js'
import type { Repositories } from '../src/storage/types.js'
import { contractProblems } from './contract.js'
import { testDatabase } from './postgres.js'

/** The all-scopes key every test app accepts (as ADMIN_API_KEY); request() sends it unless told otherwise. */
export const adminKey = 'test-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'

export interface RequestOptions extends InjectOptions {
  /** The API key to send as Bearer: the admin key by default, `null` for an anonymous request. */
  key?: string | null
}

export interface TestApi {
  app: Awaited<ReturnType<typeof buildApp>>
  /** app.inject with a key, plus a failing assertion whenever the response breaks the contract. */
  request (options: RequestOptions): Promise<InjectResponse>
}

/**
 * The engine the HTTP tests run on: SQLite in memory, or with TEST_ENGINE=postgres a fresh PostgreSQL
 * database per app (CI runs the suite both ways). A test that names its own SQLite file or storage keeps it.
 */
export const testEngine = process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

export async function build (t: Test, overrides: Partial<Config> = {}, dependencies: Partial<AppDependencies> = {}): Promise<TestApi> {
  const storage: Partial<Config> = testEngine === 'postgres' && !('databasePath' in overrides) && dependencies.repositories === undefined
    ? { postgresUrl: await testDatabase(t), recordCacheSize: 0 }
    : { databasePath: ':memory:' }
  const app = await buildApp(loadConfig({}, { ...storage, logLevel: 'silent', adminApiKey: adminKey, ...overrides }), dependencies)
  t.teardown(() => app.close())
  return {
    app,
    async request ({ key = adminKey, ...options }) {
      const headers = key === null ? options.headers : { authorization: `Bearer ${key}`, ...options.headers }
      const res = await app.inject({ ...options, headers })
      const method = options.method ?? 'GET'
      const url = String(options.url ?? '/')
      t.same(contractProblems(method, url, res, options.headers ?? {}), [], `${method} ${url} → ${res.statusCode} conforms to openapi.yaml`)
      return res
    }
  }
}

/** Where a test's data lives on the test engine: a fresh PostgreSQL database, or SQLite in memory. */
export async function testStorage (t: Test): Promise<Partial<Config>> {
  return testEngine === 'postgres' ? { postgresUrl: await testDatabase(t), recordCacheSize: 0 } : { databasePath: ':memory:' }
}

/** Storage on the test engine (as build() would open it), for a test that also reaches it directly; closed when `t` ends. */
export async function openTestRepositories (t: Test, storage?: Partial<Config>): Promise<Repositories> {
  const repositories = await openConfiguredRepositories(loadConfig({}, storage ?? await testStorage(t)))
  // Closing twice is harmless: an app built on these closes them too.
  t.teardown(() => repositories.close())
  return repositories
}

/** A path for a SQLite file in a folder of its own, removed when `t` ends. */
export function tempDatabase (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, 'data.sqlite')
}

/**
 * Reads until `done` holds of what `read` returns: every 100 ms, for at most 30 s. For the change feed on PostgreSQL,
 * where a commit becomes readable once every older transaction on the server has ended (the tests of other files
 * running beside this one can hold it back a while); the pace keeps a key well inside its rate limit.
 */
export async function eventually<T> (read: () => Promise<T>, done: (value: T) => boolean, what: string, { withinMs = 120_000 } = {}): Promise<T> {
  for (const deadline = Date.now() + withinMs; ;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs / 1000} s`)
    await sleep(100)
  }
}

/**
 * `promise`, or a failure naming `what` once `ms` have passed: a test that fails does so in seconds, not
 * at tap's timeout (whose timer does not keep the process alive: a promise nothing will settle ends the
 * file instead, its later tests left unrun).
 */
export async function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms) })])
  } finally {
    clearTimeout(timer)
  }
}

export const dune = { title: 'Dune', author: 'Frank Herbert', isbn: '978-0-441-01359-3', published_year: 1965 }
export const ada = { name: 'Ada Lovelace', email: 'ada@example.org', enrollment_year: 2025, status: 'active' }

/**
 * A reader thread in place of the service's (src/storage/sqlite/read-pool.ts): it says it is ready
 * (after `readyAfterMs`), then runs `onRequest` (JavaScript, with `parentPort` and the request's `id`) for each request.
 */
export const stubReader = (onRequest: string, readyAfterMs = 0): StartReader => () => new Worker(`const { parentPort } = require('node:worker_threads')
  setTimeout(() => parentPort.postMessage({ ready: true }), ${readyAfterMs})
  parentPort.on('message', ({ id }) => { ${onRequest} })`, { eval: true })

/** A reader that takes every request and never answers: each page runs out of its budget. */
export const silentReader = stubReader('')
