// The CI contract checks themselves: the Redocly ruleset and the breaking-change guard catch deliberately broken copies.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'

const root = fileURLToPath(new URL('..', import.meta.url))
const contract = join(root, 'openapi.yaml')
const original = readFileSync(contract, 'utf8')

// The tools run as CI runs them, with tap's coverage of child processes turned off: they are checked by
// their behaviour here, and CI runs the guard itself on openapi.yaml.
const { PATH, HOME } = process.env
function run (command: string, args: string[]): Promise<{ code: number, output: string }> {
  return new Promise(resolve => {
    execFile(command, args, { cwd: root, env: { PATH, HOME, REDOCLY_TELEMETRY: 'off', _TAPJS_PROCESSINFO_COVERAGE_: '0' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), output: stdout + stderr })
    })
  })
}

/** openapi.yaml with each [from, to] replacement applied once (each must match). */
function copyWith (t: Test, ...edits: [string, string][]): string {
  let text = original
  for (const [from, to] of edits) {
    t.ok(text.includes(from), `the copy can be broken at ${JSON.stringify(from.slice(0, 40))}`)
    text = text.replace(from, to)
  }
  const dir = mkdtempSync(join(tmpdir(), 'bsa-contract-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'openapi.yaml'), text)
  return join(dir, 'openapi.yaml')
}

const guard = (base: string, revision: string) => run(process.execPath, [join(root, 'scripts/contract-guard.mjs'), base, revision])

const breakages: [string, string][] = [
  ['      operationId: deleteBook\n', '      operationId: deleteBook\n      deprecated: true\n'],
  ['  /books/{book_id}:\n', '  /books/{book_id}:\n    x-note: unchanged\n'],
  ['      required: [title, author]\n', '      required: [title, author, isbn]\n'],
  ["        published_year:\n          type: [integer, 'null']\n        created_at:", '        created_at:'],
  ["          type: [integer, 'null']\n          minimum: -5000", '          type: integer\n          minimum: -5000']
]

t.test('the guard fails on removed fields, narrowed types and new required input', async t => {
  const { code, output } = await guard(contract, copyWith(t, ...breakages))
  t.equal(code, 1, output)
  t.match(output, /Properties of `BookInput` became required: `isbn`/)
  t.match(output, /Property `published_year` of `Book` was removed/)
  t.match(output, /Type of `published_year` narrowed from 'integer \| null' to 'integer'/)
  t.match(output, /raise the major version/)
})

t.test('the guard fails on a removed operation, and accepts it with a new major version', async t => {
  const removed: [string, string] = ['    delete:\n      operationId: deleteBook\n', '    x-removed:\n      operationId: deleteBook\n']
  const broken = await guard(contract, copyWith(t, removed))
  t.equal(broken.code, 1, broken.output)
  t.match(broken.output, /major: removed .*delete/)

  const bumped = await guard(contract, copyWith(t, removed, ['  version: 2.0.0\n', '  version: 3.0.0\n']))
  t.equal(bumped.code, 0, bumped.output)
  t.match(bumped.output, /2\.0\.0 -> 3\.0\.0/)
})

t.test('the guard passes an unchanged contract', async t => {
  const { code, output } = await guard(contract, contract)
  t.equal(code, 0, output)
})

t.test('the Redocly ruleset fails on each rule the contract relies on', async t => {
  const broken = copyWith(t,
    ['      operationId: getBook\n', ''],
    ['    NotAcceptable:\n      description: The `Accept` header rules out JSON.\n      headers:\n        RateLimit-Policy:\n          $ref: \'#/components/headers/RateLimitPolicy\'\n        RateLimit:\n          $ref: \'#/components/headers/RateLimit\'\n      content:\n        application/problem+json:',
      '    NotAcceptable:\n      description: The `Accept` header rules out JSON.\n      headers:\n        RateLimit-Policy:\n          $ref: \'#/components/headers/RateLimitPolicy\'\n        RateLimit:\n          $ref: \'#/components/headers/RateLimit\'\n      content:\n        application/json:'],
    ['          published_year: 1965\n    Book:', "          published_year: '1965'\n    Book:"],
    ['  schemas:\n', '  schemas:\n    Unused:\n      type: string\n']
  )
  const { code, output } = await run(join(root, 'node_modules/.bin/redocly'),
    ['lint', broken, '--config', join(root, 'redocly.yaml'), '--format', 'summary'])
  t.equal(code, 1)
  for (const rule of ['operation-operationId', 'rule/error-response-is-problem-json', 'no-invalid-schema-examples', 'no-unused-components']) {
    t.match(output, new RegExp(`error\\s+${rule.replace('/', '\\/')}:`), `${rule} reported`)
  }
})
