// Breaking-change guard: diffs openapi.yaml against the last released contract and fails on a major change unless info.version's major was raised.
// Usage: node scripts/contract-guard.mjs            (base: last `v*` tag, else the repository's first commit)
//        node scripts/contract-guard.mjs BASE REVISION   (two files, e.g. to test the guard itself)
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const redocly = join(root, 'node_modules', '.bin', 'redocly')
const work = mkdtempSync(join(tmpdir(), 'contract-guard-'))
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()

/** The released contract to compare with, as a file path, or undefined when there is none. */
function releasedContract () {
  // A CI clone may be shallow: its oldest commit is not the first one, so ask for the history (best effort).
  if (git('rev-parse', '--is-shallow-repository') === 'true') {
    try { git('fetch', '--quiet', '--unshallow', '--tags') } catch {
      console.warn('contract-guard: shallow clone and no history to fetch; comparing with the oldest commit present.')
    }
  }
  let base
  try { base = git('describe', '--tags', '--abbrev=0', '--match', 'v*') } catch {
    base = git('rev-list', '--max-parents=0', 'HEAD').split('\n').at(-1)
  }
  let text
  try { text = git('show', `${base}:openapi.yaml`) } catch {
    console.log(`contract-guard: ${base} has no openapi.yaml; nothing to compare with.`)
    return undefined
  }
  const file = join(work, 'released.yaml')
  writeFileSync(file, text)
  console.log(`contract-guard: comparing openapi.yaml with ${base}`)
  return file
}

const [baseArg, revisionArg] = process.argv.slice(2)
const base = baseArg === undefined ? releasedContract() : resolve(baseArg)
const revision = resolve(revisionArg ?? join(root, 'openapi.yaml'))
if (base === undefined) process.exit(0)

const report = join(work, 'diff.json')
try {
  execFileSync(redocly, ['diff', base, revision, '--format', 'json', '--fail-on', 'none', '-o', report],
    // Run away from redocly.yaml: a config file replaces the diff's built-in breaking-change rules.
    { cwd: work, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' } })
} catch (error) {
  console.error(`contract-guard: redocly diff failed: ${error.stderr}`)
  process.exit(2)
}
const diff = JSON.parse(readFileSync(report, 'utf8'))
const major = version => Number(String(version).split('.')[0])
const breaking = diff.changes.filter(change => change.impact === 'major')
const bumped = major(diff.infoVersions.revision) > major(diff.infoVersions.base)

for (const change of breaking) {
  console.log(`  major: ${change.kind} ${change.path}${change.property ? ` (${change.property})` : ''}: ${change.verdicts.map(v => v.message).join('; ')}`)
}
console.log(`contract-guard: ${diff.summary.major} major, ${diff.summary.minor} minor, ${diff.summary.patch} patch change(s); info.version ${diff.infoVersions.base} -> ${diff.infoVersions.revision}`)
if (breaking.length > 0 && !bumped) {
  console.error('contract-guard: breaking change(s) without a new major info.version: keep the contract compatible, or raise the major version.')
  process.exit(1)
}
