// The CI contract checks themselves: the release guard and `contract:release` on fixture projects, and the Redocly ruleset on broken copies.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'

const root = fileURLToPath(new URL('..', import.meta.url))
const contract = join(root, 'openapi.yaml')
const original = readFileSync(contract, 'utf8')

// The tools run as CI runs them, with tap's coverage of child processes turned off: they are checked by
// their behaviour here, and CI runs the guard itself on this repository.
const { PATH, HOME } = process.env
function run (command: string, args: string[]): Promise<{ code: number, output: string, stdout: string }> {
  return new Promise(resolve => {
    execFile(command, args, { cwd: root, env: { PATH, HOME, REDOCLY_TELEMETRY: 'off', _TAPJS_PROCESSINFO_COVERAGE_: '0' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), output: stdout + stderr, stdout })
    })
  })
}

/** openapi.yaml at `version`, with each [from, to] replacement applied once (each must match). */
function contractAt (t: Test, version: string, ...edits: [string, string][]): string {
  let text = original.replace(/^ {2}version: .*$/m, `  version: ${version}`)
  for (const [from, to] of edits) {
    t.ok(text.includes(from), `the copy can be changed at ${JSON.stringify(from.slice(0, 40))}`)
    text = text.replace(from, to)
  }
  return text
}

interface Project {
  /** openapi.yaml's text. */
  contract: string
  /** Snapshots by version. */
  releases: Record<string, string>
  /** Versions with a CHANGELOG section. */
  changelog: string[]
  /** package.json's version. */
  version: string
  /** client/package.json's version; no client package when absent. */
  clientVersion?: string
  /** contract/compatible-changes.yaml's text; none when absent. */
  compatible?: string
}

/** A project folder holding just what the guard reads, removed when `t` ends. */
function project (t: Test, files: Project): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-guard-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  write('openapi.yaml', files.contract)
  for (const [version, text] of Object.entries(files.releases)) write(`contract/releases/${version}.yaml`, text)
  write('CHANGELOG.md', '# Changelog\n\n' + files.changelog.map(v => `## ${v} — 2026-11-23\n\n- changes\n`).join('\n'))
  write('package.json', JSON.stringify({ name: 'fixture', version: files.version }))
  if (files.compatible !== undefined) write('contract/compatible-changes.yaml', files.compatible)
  if (files.clientVersion !== undefined) write('client/package.json', JSON.stringify({ name: 'fixture-client', version: files.clientVersion }))
  return dir
}

const guard = (dir: string) => run(process.execPath, [join(root, 'scripts/contract-guard.mjs'), dir])

// A breaking change (an operation removed), an additive one (an operation added) and a documentation one.
const removeDelete: [string, string] = ['    delete:\n      operationId: deleteBook\n', '    x-removed:\n      operationId: deleteBook\n']
const addOperation: [string, string] = ['  /books/{book_id}:\n', "  /authors:\n    get:\n      operationId: listAuthors\n      responses:\n        '204':\n          description: None yet.\n  /books/{book_id}:\n"]
const reword: [string, string] = ['      summary: List books\n', '      summary: List the books\n']

t.test('the guard passes a first release identical to its snapshot, with or without a client package', async t => {
  const v1 = contractAt(t, '1.0.0')
  const alone = await guard(project(t, { contract: v1, releases: { '1.0.0': v1 }, changelog: ['1.0.0'], version: '1.0.0' }))
  t.equal(alone.code, 0, alone.output)
  t.match(alone.output, /1\.0\.0, the first release/)
  const withClient = await guard(project(t, { contract: v1, releases: { '1.0.0': v1 }, changelog: ['1.0.0'], version: '1.0.0', clientVersion: '1.0.0' }))
  t.equal(withClient.code, 0, withClient.output)
})

t.test('the guard fails when openapi.yaml differs from the snapshot of its version, and names the version to use', async t => {
  const v1 = contractAt(t, '1.0.0')
  const { code, output } = await guard(project(t, { contract: contractAt(t, '1.0.0', addOperation), releases: { '1.0.0': v1 }, changelog: ['1.0.0'], version: '1.0.0' }))
  t.equal(code, 1, output)
  t.match(output, /openapi\.yaml differs from contract\/releases\/1\.0\.0\.yaml, and 1\.0\.0 is released/)
  t.match(output, /set info\.version to 1\.1\.0 in openapi\.yaml/)
})

t.test('the guard fails when openapi.yaml has no snapshot, and says how to make one', async t => {
  const v1 = contractAt(t, '1.0.0')
  const v2 = contractAt(t, '1.1.0', addOperation)
  const { code, output } = await guard(project(t, { contract: v2, releases: { '1.0.0': v1 }, changelog: ['1.0.0', '1.1.0'], version: '1.1.0' }))
  t.equal(code, 1, output)
  t.match(output, /no snapshot contract\/releases\/1\.1\.0\.yaml: run `npm run contract:release`/)
})

t.test('the guard fails on a breaking change with a minor bump, and passes it with a major bump', async t => {
  const v1 = contractAt(t, '1.0.0')
  const minor = contractAt(t, '1.1.0', removeDelete)
  const broken = await guard(project(t, { contract: minor, releases: { '1.0.0': v1, '1.1.0': minor }, changelog: ['1.0.0', '1.1.0'], version: '1.1.0' }))
  t.equal(broken.code, 1, broken.output)
  t.match(broken.output, /major: removed .*delete/)
  t.match(broken.output, /breaking change\(s\) since 1\.0\.0 .* need a major version/)
  t.match(broken.output, /set info\.version to 2\.0\.0/)

  const major = contractAt(t, '2.0.0', removeDelete)
  const bumped = await guard(project(t, { contract: major, releases: { '1.0.0': v1, '2.0.0': major }, changelog: ['1.0.0', '2.0.0'], version: '2.0.0' }))
  t.equal(bumped.code, 0, bumped.output)
  t.match(bumped.output, /against 1\.0\.0: 1 major/)
})

t.test('a major change reviewed as compatible, with its reason, counts as minor; an entry that matches nothing fails', async t => {
  const v1 = contractAt(t, '1.0.0')
  const minor = contractAt(t, '1.1.0', removeDelete)
  const files = { contract: minor, releases: { '1.0.0': v1, '1.1.0': minor }, changelog: ['1.0.0', '1.1.0'], version: '1.1.0' }
  const reason = 'a test fixture, the operation answered 404 for every id, so no client used it'
  const listed = await guard(project(t, { ...files, compatible: `1.1.0:\n  - path: /paths/~1books~1{book_id}/delete\n    reason: ${reason}\n` }))
  t.equal(listed.code, 0, listed.output)
  t.match(listed.output, `reviewed as compatible: #/paths/~1books~1{book_id}/delete (undefined): ${reason}`)
  const unreasoned = await guard(project(t, { ...files, compatible: '1.1.0:\n  - path: /paths/~1books~1{book_id}/delete\n    reason: fine\n' }))
  t.equal(unreasoned.code, 1)
  t.match(unreasoned.output, /needs a path and a reason/)
  const stale = await guard(project(t, { ...files, contract: v1, releases: { '1.0.0': v1 }, changelog: ['1.0.0'], version: '1.0.0', compatible: `1.0.0:\n  - path: /paths/~1nothing\n    reason: ${reason}\n` }))
  t.equal(stale.code, 0, 'the first release has nothing to compare, so nothing to review')
  const unmatched = await guard(project(t, { ...files, compatible: `1.1.0:\n  - path: /paths/~1books~1{book_id}/delete\n    reason: ${reason}\n  - path: /paths/~1nothing\n    reason: ${reason}\n` }))
  t.equal(unmatched.code, 1)
  t.match(unmatched.output, /lists \/paths\/~1nothing .* but no such major change exists/)
})

t.test('the guard fails on an additive change with a patch bump, and passes it with a minor one', async t => {
  const v1 = contractAt(t, '1.0.0')
  const patch = contractAt(t, '1.0.1', addOperation)
  const small = await guard(project(t, { contract: patch, releases: { '1.0.0': v1, '1.0.1': patch }, changelog: ['1.0.0', '1.0.1'], version: '1.0.1' }))
  t.equal(small.code, 1, small.output)
  t.match(small.output, /need a minor bump, and 1\.0\.1 is only a patch one: set info\.version to 1\.1\.0/)

  const minor = contractAt(t, '1.1.0', addOperation)
  const enough = await guard(project(t, { contract: minor, releases: { '1.0.0': v1, '1.1.0': minor }, changelog: ['1.0.0', '1.1.0'], version: '1.1.0' }))
  t.equal(enough.code, 0, enough.output)
})

t.test('the guard compares with the newest lower release by SemVer, and fails on a release newer than openapi.yaml', async t => {
  // 1.10.0 sorts after 1.9.0 (as text it would not); the patch on top of it changes only a summary.
  const v19 = contractAt(t, '1.9.0')
  const v110 = contractAt(t, '1.10.0', addOperation)
  const v1101 = contractAt(t, '1.10.1', addOperation, reword)
  const releases = { '1.9.0': v19, '1.10.0': v110, '1.10.1': v1101 }
  const ok = await guard(project(t, { contract: v1101, releases, changelog: ['1.9.0', '1.10.0', '1.10.1'], version: '1.10.1' }))
  t.equal(ok.code, 0, ok.output)
  t.match(ok.output, /against 1\.10\.0: 0 major, 0 minor, \d+ patch/)

  const behind = await guard(project(t, { contract: v110, releases, changelog: ['1.9.0', '1.10.0', '1.10.1'], version: '1.10.0' }))
  t.equal(behind.code, 1, behind.output)
  t.match(behind.output, /contract\/releases\/1\.10\.1\.yaml is newer than openapi\.yaml/)
})

t.test('the guard fails when CHANGELOG.md lacks a section for the current version or for any snapshot', async t => {
  const v1 = contractAt(t, '1.0.0')
  const v2 = contractAt(t, '1.1.0', addOperation)
  const current = await guard(project(t, { contract: v2, releases: { '1.0.0': v1, '1.1.0': v2 }, changelog: ['1.0.0'], version: '1.1.0' }))
  t.equal(current.code, 1, current.output)
  t.match(current.output, /CHANGELOG\.md has no section for 1\.1\.0: add "## 1\.1\.0 — <release date>"/)

  const older = await guard(project(t, { contract: v2, releases: { '1.0.0': v1, '1.1.0': v2 }, changelog: ['1.1.0'], version: '1.1.0' }))
  t.equal(older.code, 1, older.output)
  t.match(older.output, /CHANGELOG\.md has no section for 1\.0\.0/)
})

t.test('the guard fails when package.json or client/package.json has another version', async t => {
  const v1 = contractAt(t, '1.0.0')
  const files = { contract: v1, releases: { '1.0.0': v1 }, changelog: ['1.0.0'] }
  const server = await guard(project(t, { ...files, version: '0.9.0' }))
  t.equal(server.code, 1, server.output)
  t.match(server.output, /package\.json has version 0\.9\.0 but openapi\.yaml has info\.version 1\.0\.0: set "version": "1\.0\.0" in package\.json/)

  const client = await guard(project(t, { ...files, version: '1.0.0', clientVersion: '0.9.0' }))
  t.equal(client.code, 1, client.output)
  t.match(client.output, /client\/package\.json has version 0\.9\.0/)
})

t.test('the guard fails on a version that is not a plain SemVer release, and on a misnamed snapshot', async t => {
  const pre = contractAt(t, '1.0.0-rc.1')
  const prerelease = await guard(project(t, { contract: pre, releases: {}, changelog: [], version: '1.0.0-rc.1' }))
  t.equal(prerelease.code, 1, prerelease.output)
  t.match(prerelease.output, /info\.version of openapi\.yaml is "1\.0\.0-rc\.1": set it to a release version/)

  const v1 = contractAt(t, '1.0.0')
  const misnamed = await guard(project(t, { contract: v1, releases: { '1.0.0': v1, '0.9.0': v1, latest: v1 }, changelog: ['1.0.0', '0.9.0'], version: '1.0.0' }))
  t.equal(misnamed.code, 1, misnamed.output)
  t.match(misnamed.output, /contract\/releases\/latest\.yaml is not named <version>\.yaml/)
  t.match(misnamed.output, /contract\/releases\/0\.9\.0\.yaml has info\.version 1\.0\.0/)
})

t.test('contract:release writes the snapshot, prints the diff for CHANGELOG.md, and never overwrites a release', async t => {
  const v1 = contractAt(t, '1.0.0')
  const dir = project(t, { contract: contractAt(t, '1.1.0', addOperation), releases: { '1.0.0': v1 }, changelog: ['1.0.0'], version: '1.1.0' })
  const release = () => run(process.execPath, [join(root, 'scripts/contract-release.mjs'), dir])

  const first = await release()
  t.equal(first.code, 0, first.output)
  t.equal(readFileSync(join(dir, 'contract/releases/1.1.0.yaml'), 'utf8'), contractAt(t, '1.1.0', addOperation))
  t.match(first.stdout, /## API diff: 1\.0\.0\.yaml → 1\.1\.0\.yaml/)
  t.match(first.stdout, /requires a \*\*minor\*\* bump/)
  t.match(first.output, /add a "## 1\.1\.0 — \d{4}-\d{2}-\d{2}" section to CHANGELOG\.md/)

  const again = await release()
  t.equal(again.code, 0, again.output)
  t.match(again.output, /is already openapi\.yaml; nothing copied/)

  writeFileSync(join(dir, 'openapi.yaml'), contractAt(t, '1.1.0', addOperation, reword))
  const changed = await release()
  t.equal(changed.code, 1, changed.output)
  t.match(changed.output, /contract\/releases\/1\.1\.0\.yaml already exists and differs from openapi\.yaml/)
  t.equal(readFileSync(join(dir, 'contract/releases/1.1.0.yaml'), 'utf8'), contractAt(t, '1.1.0', addOperation), 'the release is kept')
})

t.test('the Redocly ruleset fails on each rule the contract relies on', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-contract-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const broken = join(dir, 'openapi.yaml')
  writeFileSync(broken, contractAt(t, '1.0.0',
    ['      operationId: getBook\n', ''],
    ['    NotAcceptable:\n      description: The `Accept` header rules out JSON.\n      headers:\n        RateLimit-Policy:\n          $ref: \'#/components/headers/RateLimitPolicy\'\n        RateLimit:\n          $ref: \'#/components/headers/RateLimit\'\n      content:\n        application/problem+json:',
      '    NotAcceptable:\n      description: The `Accept` header rules out JSON.\n      headers:\n        RateLimit-Policy:\n          $ref: \'#/components/headers/RateLimitPolicy\'\n        RateLimit:\n          $ref: \'#/components/headers/RateLimit\'\n      content:\n        application/json:'],
    ['          published_year: 1965\n    BookReplacement:', "          published_year: '1965'\n    BookReplacement:"],
    ['  schemas:\n', '  schemas:\n    Unused:\n      type: string\n']
  ))
  const { code, output } = await run(join(root, 'node_modules/.bin/redocly'),
    ['lint', broken, '--config', join(root, 'redocly.yaml'), '--format', 'summary'])
  t.equal(code, 1)
  for (const rule of ['operation-operationId', 'rule/error-response-is-problem-json', 'no-invalid-schema-examples', 'no-unused-components']) {
    t.match(output, new RegExp(`error\\s+${rule.replace('/', '\\/')}:`), `${rule} reported`)
  }
})
