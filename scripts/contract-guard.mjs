// Contract guard: every state of openapi.yaml is a release, versioned as its changes require (docs/versioning.md).
// Usage: node scripts/contract-guard.mjs [ROOT]   (ROOT: the project folder, this repository by default)
//
// Fails when: info.version is not SemVer or differs from package.json (and client/package.json, if present);
// openapi.yaml is not byte-identical to contract/releases/<info.version>.yaml, or an older version than the
// newest snapshot; Redocly's diff from the previous release needs a larger bump than the version got;
// CHANGELOG.md has no section for the current version or for any snapshot.
import { join } from 'node:path'
import { parse } from 'yaml'
import {
  bumpBetween, bumps, compareVersions, infoVersion, nextVersion, parseVersion, projectRoot, readIfPresent,
  redoclyDiff, releasesFolder, releasesIn, requiredBump
} from './contract-releases.mjs'

const root = projectRoot

/** The entries of contract/compatible-changes.yaml for `version`: { path, property, reason }. */
function reviewedCompatible (folder, version) {
  const text = readIfPresent(join(folder, 'contract', 'compatible-changes.yaml'))
  let entries = []
  try {
    entries = text === undefined ? [] : parse(text)?.[version] ?? []
  } catch (error) {
    fail(`contract/compatible-changes.yaml is not valid YAML: ${error.message.split('\n')[0]}`)
  }
  for (const entry of entries) {
    if (typeof entry.path !== 'string' || typeof entry.reason !== 'string' || entry.reason.length < 20) {
      fail(`contract/compatible-changes.yaml: each entry for ${version} needs a path and a reason that says why no client can notice.`)
    }
  }
  return entries
}
const problems = []
const fail = message => problems.push(message)
const finish = () => {
  for (const problem of problems) console.error(`contract-guard: ${problem}`)
  if (problems.length > 0) process.exit(1)
  console.log('contract-guard: ok')
  process.exit(0)
}

const contractText = readIfPresent(join(root, 'openapi.yaml'))
if (contractText === undefined) {
  fail(`no openapi.yaml in ${root}`)
  finish()
}
const version = infoVersion(contractText)
if (parseVersion(version) === undefined) {
  fail(`info.version of openapi.yaml is ${JSON.stringify(version)}: set it to a release version MAJOR.MINOR.PATCH (SemVer, no pre-release).`)
  finish()
}

// One version for the contract and every package built from it.
for (const manifest of ['package.json', 'client/package.json']) {
  const text = readIfPresent(join(root, manifest))
  if (text === undefined) {
    if (manifest === 'package.json') fail(`no package.json in ${root}`)
    continue
  }
  const packageVersion = JSON.parse(text).version
  if (packageVersion !== version) fail(`${manifest} has version ${packageVersion} but openapi.yaml has info.version ${version}: set "version": "${version}" in ${manifest}.`)
}

const { releases, strays } = releasesIn(root)
for (const stray of strays) fail(`${stray} is not named <version>.yaml (e.g. ${releasesFolder}/${version}.yaml): rename or remove it.`)
for (const release of releases) {
  const released = infoVersion(readIfPresent(release.file))
  if (released !== release.version) fail(`${releasesFolder}/${release.version}.yaml has info.version ${released}: a snapshot is named after its own version.`)
}

const current = releases.find(r => r.version === version)
const currentText = current && readIfPresent(current.file)
const newest = releases.at(-1)
if (newest !== undefined && compareVersions(newest.version, version) > 0) {
  fail(`${releasesFolder}/${newest.version}.yaml is newer than openapi.yaml (info.version ${version}): a release is never withdrawn. ` +
    `Start from ${releasesFolder}/${newest.version}.yaml, give openapi.yaml a version above ${newest.version}, and run \`npm run contract:release\`.`)
}

// What to compare openapi.yaml with: a changed released version with its own snapshot, otherwise the previous release.
const changedRelease = currentText !== undefined && currentText !== contractText
const base = changedRelease ? current : releases.filter(r => compareVersions(r.version, version) < 0).at(-1)
if (base === undefined) {
  console.log(`contract-guard: openapi.yaml is ${version}, the first release; nothing to compare with.`)
} else {
  let report
  try {
    report = redoclyDiff(base.file, join(root, 'openapi.yaml'))
  } catch (error) {
    console.error(`contract-guard: ${error.message}`)
    process.exit(2)
  }
  // Redocly judges the text: a tightened pattern is "major" even when the service already refused every
  // value it newly excludes. Such a change is listed, with the reason, in contract/compatible-changes.yaml
  // for the version that makes it, and counts as minor; anything unlisted stays as Redocly rates it.
  const reviewed = reviewedCompatible(root, version)
  for (const change of report.changes.filter(c => c.impact === 'major')) {
    const note = reviewed.find(r => change.path.endsWith(r.path) && (r.property ?? null) === (change.property ?? null))
    if (note === undefined) continue
    note.used = true
    change.impact = 'minor'
    report.summary.major--
    report.summary.minor++
    console.log(`  reviewed as compatible: ${change.path} (${change.property}): ${note.reason}`)
  }
  for (const note of reviewed.filter(r => !r.used)) fail(`contract/compatible-changes.yaml lists ${note.path} (${note.property}) for ${version}, but no such major change exists: remove the entry.`)
  for (const change of report.changes.filter(c => c.impact === 'major')) {
    const verdicts = (change.verdicts ?? []).map(v => v.message).join('; ')
    console.log(`  major: ${change.kind} ${change.path}${verdicts ? `: ${verdicts}` : ''}`)
  }
  const needed = requiredBump(report)
  const { major, minor, patch } = report.summary
  console.log(`contract-guard: openapi.yaml (${version}) against ${base.version}: ${major} major, ${minor} minor, ${patch} patch change(s); they need ${needed === 'none' ? 'no' : `a ${needed}`} bump.`)
  const fix = target => `set info.version to ${target} in openapi.yaml and "version" in package.json, run \`npm run contract:release\`, and add a "## ${target}" section to CHANGELOG.md.`
  if (changedRelease) {
    fail(`openapi.yaml differs from ${releasesFolder}/${version}.yaml, and ${version} is released: a released contract never changes. ` +
      `Its changes need a ${needed === 'none' ? 'patch' : needed} bump: ${fix(nextVersion(version, needed))}`)
  } else if (bumps.indexOf(bumpBetween(base.version, version)) < bumps.indexOf(needed)) {
    const target = nextVersion(base.version, needed)
    fail(needed === 'major'
      ? `breaking change(s) since ${base.version} (listed above) need a major version. Keep the contract compatible ` +
        `(add instead of change; deprecate first, see docs/versioning.md), or, once the deprecation period is over, ${fix(target)}`
      : `the changes since ${base.version} need a ${needed} bump, and ${version} is only a ${bumpBetween(base.version, version)} one: ${fix(target)}`)
  }
}

if (current === undefined) {
  fail(`openapi.yaml (info.version ${version}) has no snapshot ${releasesFolder}/${version}.yaml: run \`npm run contract:release\` and commit the snapshot.`)
}

// Every release, the current one included, says what it changed.
const changelog = readIfPresent(join(root, 'CHANGELOG.md')) ?? ''
const sections = new Set([...changelog.matchAll(/^## \[?v?(\d+\.\d+\.\d+)\]?(?![\w.-])/gm)].map(m => m[1]))
for (const wanted of new Set([version, ...releases.map(r => r.version)])) {
  if (!sections.has(wanted)) {
    fail(`CHANGELOG.md has no section for ${wanted}: add "## ${wanted} — <release date>" listing its contract changes ` +
      '(`npm run contract:release` prints them as a table).')
  }
}

finish()
