// `npm test` on the machine it finds: without the browser or the npm registry their tests skip with how to run them (under CI
// they fail), and the developer's own settings of the service never reach the processes the tests start.
import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { childEnv } from './process.js'
import { chromiumPath, freePort, needNpmRegistry } from './services.js'

// Loading the Swagger UI test (the app, Playwright) through the TypeScript loader, twice, on a busy machine.
t.setTimeout(300_000)

const root = fileURLToPath(new URL('..', import.meta.url))
const nowhere = '/nonexistent/bsa-test/chromium'

/**
 * `npm test`'s last step, scripts/tap.mjs, on the Swagger UI test alone. tap itself is stood in for by a
 * script that prints the arguments it got and runs that one file, so that this run neither shares tap's
 * .tap folder with the run it is part of nor needs the whole suite's coverage.
 */
function npmTestsLastStep (t: Test, env: Record<string, string>): Promise<{ code: number, stdout: string, output: string }> {
  const bin = mkdtempSync(join(tmpdir(), 'bsa-tap-'))
  t.teardown(() => rmSync(bin, { recursive: true, force: true }))
  // With the TypeScript loader tap is given (package.json's tap.node-arg).
  writeFileSync(join(bin, 'tap'), '#!/bin/sh\nprintf \'tap %s\\n\' "$*"\nexec "$NODE" --import ts-blank-space/register "$1"\n')
  chmodSync(join(bin, 'tap'), 0o755)
  // Checked by its behaviour here: tap's coverage of child processes is off for it, as for the contract guard's.
  const passed: Record<string, string> = { PATH: `${bin}:${process.env.PATH ?? ''}`, NODE: process.execPath, TEST_CHROMIUM: nowhere, _TAPJS_PROCESSINFO_COVERAGE_: '0', ...env }
  for (const name of ['HOME', 'TEST_POSTGRES_URL', 'TEST_REDIS_URL']) {
    const value = process.env[name]
    if (value !== undefined) passed[name] = value
  }
  return new Promise(resolve => {
    execFile(process.execPath, ['scripts/tap.mjs', 'test/swagger-ui.test.ts'], { cwd: root, env: passed }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), stdout, output: stdout + stderr })
    })
  })
}

t.test('without the browser, on a developer\'s machine: the test is skipped with the package to install, and coverage is not enforced', async t => {
  const run = await npmTestsLastStep(t, {})
  t.equal(run.code, 0, 'it passes', { output: run.output })
  t.match(run.stdout, `npm test: Chromium at ${nowhere} (TEST_CHROMIUM; apt-get install chromium) not available: the tests that need it are skipped and coverage is not enforced`)
  t.match(run.stdout, /^tap test\/swagger-ui\.test\.ts .*--allow-incomplete-coverage$/m, 'tap is told so')
  t.match(run.stdout, new RegExp(`^ok 1 - Swagger UI: .* # SKIP Chromium at ${nowhere} does not answer \\(ENOENT[^\\n]*\\): to run these tests, install it \\(apt-get install chromium\\)`, 'm'),
    'the skip line names the package')
  t.notMatch(run.stdout, /^not ok/m)
})

t.test('without the browser, under CI=true: the test fails, naming the browser', async t => {
  const run = await npmTestsLastStep(t, { CI: 'true' })
  t.not(run.code, 0, 'it fails')
  t.notMatch(run.stdout, 'coverage is not enforced')
  t.notMatch(run.stdout, '--allow-incomplete-coverage', 'coverage stays enforced')
  t.match(run.stdout, new RegExp(`^not ok \\d+ - Chromium at ${nowhere} is required under CI=true but does not answer \\(ENOENT[^\\n]*\\); install it \\(apt-get install chromium\\)`, 'm'))
  t.notMatch(run.stdout, '# SKIP', 'nothing is skipped')
})

t.test('the browser comes from TEST_CHROMIUM, else Debian\'s', async t => {
  t.equal(chromiumPath({}), '/usr/bin/chromium')
  t.equal(chromiumPath({ TEST_CHROMIUM: '/opt/chrome/chrome' }), '/opt/chrome/chrome')
})

t.test('without the npm registry (nor a cache of it), the packed-client test skips with what to do; under CI it fails', async t => {
  const cache = mkdtempSync(join(tmpdir(), 'bsa-npm-cache-'))
  t.teardown(() => rmSync(cache, { recursive: true, force: true }))
  const registry = `http://127.0.0.1:${await freePort()}/`
  const env = { PATH: process.env.PATH ?? '', HOME: cache, npm_config_cache: cache, npm_config_registry: registry }
  const failures: string[] = []
  const fake = { fail: (message: string) => { failures.push(message); return false } }
  t.same(await needNpmRegistry(fake, env, {}), {
    skip: `The npm registry at ${registry} does not answer (ECONNREFUSED): to run these tests, connect this machine to it, or point npm_config_registry at a mirror`
  })
  t.same(failures, [])
  t.same(await needNpmRegistry(fake, env, { CI: 'true' }), {}, 'under CI the test runs, and fails')
  t.match(failures, [`The npm registry at ${registry} is required under CI=true but does not answer (ECONNREFUSED)`])
})

t.test('a process of the service a test starts gets the test\'s settings, never the developer\'s own', async t => {
  const needed = { PATH: ['bin', 'usr-bin'].map(name => join(tmpdir(), name)).join(delimiter), HOME: join(tmpdir(), 'home'), LANG: 'tr_TR.UTF-8', TZ: 'Pacific/Chatham', NODE_OPTIONS: '--import=x', _TAPJS_PROCESSINFO_COVERAGE_: '1' }
  const own = { DATABASE_URL: 'postgres://app@db.internal/books', REDIS_URL: 'redis://cache.internal', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.internal', METRICS_TOKEN: 'secret', PORT: '3000' }
  const settings = { PORT: '0', DATABASE_PATH: join(tmpdir(), 'x.sqlite') }
  t.same(childEnv(settings, { ...needed, ...own }), { ...needed, ENV_FILE: 'off', ...settings }, 'nor a .env of theirs')
})
