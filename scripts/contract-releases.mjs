// Released contracts (contract/releases/<version>.yaml), their SemVer versions, and Redocly's diff between two of them.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

/** The project folder: the first argument, else this repository (tests point the scripts at fixtures). */
export const projectRoot = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url))
export const releasesFolder = 'contract/releases'

// Released versions are plain MAJOR.MINOR.PATCH: a pre-release is not a release.
const semver = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/

/** [major, minor, patch], or undefined when `text` is not a plain SemVer version. */
export function parseVersion (text) {
  const match = semver.exec(String(text))
  return match === null ? undefined : match.slice(1).map(Number)
}

/** Negative, zero or positive as version `a` is lower than, equal to or higher than `b`. */
export function compareVersions (a, b) {
  const [x, y] = [parseVersion(a), parseVersion(b)]
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]
}

export const bumps = ['none', 'patch', 'minor', 'major']

/** Which part of the version changed from `from` to `to` (`to` is the higher one). */
export function bumpBetween (from, to) {
  const [x, y] = [parseVersion(from), parseVersion(to)]
  return x[0] !== y[0] ? 'major' : x[1] !== y[1] ? 'minor' : x[2] !== y[2] ? 'patch' : 'none'
}

/** `version` raised by `bump` (a patch at least). */
export function nextVersion (version, bump) {
  const [major, minor, patch] = parseVersion(version)
  if (bump === 'major') return `${major + 1}.0.0`
  if (bump === 'minor') return `${major}.${minor + 1}.0`
  return `${major}.${minor}.${patch + 1}`
}

/** The `info.version` of an OpenAPI document given as text. */
export function infoVersion (text) {
  return String(parse(text)?.info?.version)
}

/**
 * The release snapshots under `root`, lowest version first, as { version, file }; files whose
 * names are not `<version>.yaml` are returned in `strays`.
 */
export function releasesIn (root) {
  const folder = join(root, releasesFolder)
  const names = existsSync(folder) ? readdirSync(folder) : []
  const releases = []
  const strays = []
  for (const name of names) {
    const version = name.replace(/\.yaml$/, '')
    if (name.endsWith('.yaml') && parseVersion(version) !== undefined) releases.push({ version, file: join(folder, name) })
    else strays.push(join(releasesFolder, name))
  }
  releases.sort((a, b) => compareVersions(a.version, b.version))
  return { releases, strays }
}

const redocly = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url))

/**
 * `redocly diff base revision` in `format` (json: the parsed report). It runs on copies in an empty
 * folder: a redocly.yaml would replace the diff's built-in rules of what is breaking, and the report
 * names the files as plainly as `2.0.0.yaml → 2.1.0.yaml`.
 */
export function redoclyDiff (base, revision, format = 'json') {
  const work = mkdtempSync(join(tmpdir(), 'contract-diff-'))
  const names = [basename(base), basename(revision)]
  if (names[0] === names[1]) names[0] = `base-${names[0]}`
  copyFileSync(base, join(work, names[0]))
  copyFileSync(revision, join(work, names[1]))
  try {
    const output = execFileSync(redocly, ['diff', ...names, '--format', format, '--fail-on', 'none'], {
      cwd: work,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' }
    })
    return format === 'json' ? JSON.parse(output) : output
  } catch (error) {
    throw new Error(`redocly diff ${base} ${revision} failed: ${error.stderr ?? error.message}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** The bump a diff report requires: the impact of its weightiest change. */
export function requiredBump (report) {
  const { major, minor, patch } = report.summary
  return major > 0 ? 'major' : minor > 0 ? 'minor' : patch > 0 ? 'patch' : 'none'
}

/** The text of a file, or undefined when it does not exist. */
export function readIfPresent (file) {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined
}
