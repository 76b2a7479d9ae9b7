// Releases openapi.yaml: copies it to contract/releases/<info.version>.yaml and prints, in Markdown for
// CHANGELOG.md, Redocly's diff from the previous release. A snapshot, once written, is never replaced.
// Usage: npm run contract:release   or   node scripts/contract-release.mjs [ROOT]
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { compareVersions, infoVersion, parseVersion, projectRoot, readIfPresent, redoclyDiff, releasesFolder, releasesIn } from './contract-releases.mjs'

const root = projectRoot
const refuse = message => {
  console.error(`contract:release: ${message}`)
  process.exit(1)
}

const contractText = readIfPresent(join(root, 'openapi.yaml'))
if (contractText === undefined) refuse(`no openapi.yaml in ${root}`)
const version = infoVersion(contractText)
if (parseVersion(version) === undefined) refuse(`info.version of openapi.yaml is ${JSON.stringify(version)}: set it to a release version MAJOR.MINOR.PATCH first.`)

const snapshot = join(root, releasesFolder, `${version}.yaml`)
const existing = readIfPresent(snapshot)
if (existing !== undefined && existing !== contractText) {
  refuse(`${releasesFolder}/${version}.yaml already exists and differs from openapi.yaml: ${version} is released and never changes. ` +
    'Raise info.version in openapi.yaml (and "version" in package.json) as the changes need, then run this again; ' +
    '`npm run contract:guard` names the version they need.')
}
if (existing === undefined) {
  mkdirSync(join(root, releasesFolder), { recursive: true })
  writeFileSync(snapshot, contractText)
  console.error(`contract:release: wrote ${relative(root, snapshot)}`)
} else {
  console.error(`contract:release: ${relative(root, snapshot)} is already openapi.yaml; nothing copied.`)
}

const previous = releasesIn(root).releases.filter(r => compareVersions(r.version, version) < 0).at(-1)
if (previous === undefined) {
  console.error(`contract:release: ${version} is the first release; there is nothing to compare it with.`)
} else {
  // The table goes to stdout alone, so that `npm run -s contract:release > notes.md` keeps just it.
  process.stdout.write(redoclyDiff(previous.file, snapshot, 'markdown'))
}
console.error(`contract:release: add a "## ${version} — ${new Date().toISOString().slice(0, 10)}" section to CHANGELOG.md listing these changes, ` +
  `commit it with ${releasesFolder}/${version}.yaml, and run \`npm run contract:guard\`.`)
