// Platformatic DB for the peers, installed on demand into scripts/bench/peers/platformatic (its own package.json and lock), never into the service.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from '../paths.mjs'
import { progress } from '../progress.mjs'

export const platformaticDir = join(root, 'scripts/bench/peers/platformatic')

const lockedVersion = file => JSON.parse(readFileSync(file, 'utf8')).packages['node_modules/@platformatic/db']?.version

/** Runs `npm ci` in the folder unless its node_modules already holds the locked version of @platformatic/db. */
export function ensurePlatformatic () {
  const wanted = lockedVersion(join(platformaticDir, 'package-lock.json'))
  // npm writes node_modules/.package-lock.json after a complete install only.
  const installed = join(platformaticDir, 'node_modules/.package-lock.json')
  if (existsSync(installed) && lockedVersion(installed) === wanted) return wanted
  progress(`installing Platformatic DB ${wanted} for the peers: npm ci --prefix scripts/bench/peers/platformatic ` +
    '(once; a few minutes, most of them building its better-sqlite3)')
  const install = spawnSync('npm', ['ci', '--prefix', platformaticDir, '--no-audit', '--no-fund', '--loglevel', 'error'], { cwd: root, stdio: 'inherit' })
  if (install.status !== 0) throw new Error('npm ci --prefix scripts/bench/peers/platformatic failed: the peers need Platformatic DB')
  return wanted
}
