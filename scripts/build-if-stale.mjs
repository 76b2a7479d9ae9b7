// Builds dist/ (or, with --client, the client package's client/dist) only when its sources changed, one
// build at a time per checkout, and swaps it in whole. `npm start`, `npm run keys` and `npm run backup` run
// it first (a fresh dist/ costs some 50 ms, where tsc took 6–11 s); `npm run build` (npm install's prepare,
// npm test's first step) passes --force. The client's `npm pack` runs it with --client: two packs at once (a
// test and a guide's commands) then share one build instead of one deleting what the other packs.
//
// - Fresh: a fingerprint of the sources (contents of src/ and generated/, openapi.yaml, tsconfig*.json,
//   package.json, package-lock.json and the TypeScript version) is stored in dist/ with the build; the
//   build is skipped when it matches. Contents, not times: a checkout or a touch that changes nothing
//   costs nothing, and a deleted or restored file is seen.
// - One at a time: a lock directory (mkdir is atomic) holds the builder's pid; another caller waits,
//   then finds the build fresh. A lock whose process is gone (killed mid-build) is taken over.
// - Whole: tsc writes into a folder of its own, which then replaces dist/ by two renames, so that no
//   process loads a half-written dist/. Should two builds ever overlap (a lock taken over twice at
//   once), each still swaps in a complete one.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const force = process.argv.includes('--force')
const targets = {
  service: {
    folder: '',
    inputs: ['src', 'generated', 'openapi.yaml', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    tsconfig: 'tsconfig.build.json'
  },
  // The package's types import ./openapi.js, the contract's generated types, copied in beside them.
  client: {
    folder: 'client',
    inputs: ['client/src', 'client/tsconfig.json', 'client/package.json', 'generated/openapi.d.ts', 'tsconfig.json', 'package-lock.json'],
    tsconfig: 'client/tsconfig.json',
    extra: output => copyFileSync(join(root, 'generated/openapi.d.ts'), join(output, 'openapi.d.ts'))
  }
}
const target = targets[process.argv.includes('--client') ? 'client' : 'service']
const dist = join(root, target.folder, 'dist')
const stamp = join(dist, '.build-fingerprint')
const lock = join(root, target.folder, '.dist.lock')

function files (path) {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).sort().flatMap(entry => files(join(path, entry)))
}

function fingerprint () {
  const hash = createHash('sha256').update(`typescript ${JSON.parse(readFileSync(join(tsc, '../../package.json'), 'utf8')).version}\0`)
  for (const file of target.inputs.flatMap(input => files(join(root, input)))) {
    hash.update(`${relative(root, file)}\0`).update(readFileSync(file)).update('\0')
  }
  return hash.digest('hex')
}

const fresh = print => existsSync(stamp) && readFileSync(stamp, 'utf8') === print

function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return error.code === 'EPERM'
  }
}

/** Takes the lock, waiting while another live process holds it. */
async function acquire () {
  for (let waited = false; ; waited = true) {
    try {
      mkdirSync(lock)
      writeFileSync(join(lock, 'pid'), String(process.pid))
      return
    } catch (error) {
      if (error.code !== 'EEXIST') throw error
    }
    let owner = Number.NaN
    try {
      owner = Number(readFileSync(join(lock, 'pid'), 'utf8'))
    } catch {}
    // A lock without a pid is one being taken right now, unless it is old: its taker died in between.
    const abandoned = Number.isNaN(owner) ? Date.now() - lockAge() > 10_000 : !alive(owner)
    if (abandoned) {
      try {
        // Renamed before removal: of two processes taking it over, one wins, the other waits again.
        const aside = `${lock}.stale-${process.pid}`
        renameSync(lock, aside)
        rmSync(aside, { recursive: true, force: true })
      } catch {}
      continue
    }
    if (!waited) console.error(`books-students-api: waiting for another build of ${relative(root, dist)}/ in this checkout`)
    await sleep(200)
  }
}

function lockAge () {
  try {
    return statSync(lock).mtimeMs
  } catch {
    return Date.now()
  }
}

function build (print) {
  // What builds killed midway left behind.
  const parent = join(root, target.folder)
  for (const entry of readdirSync(parent)) {
    const pid = /^\.dist-(?:build|old)-(\d+)$/.exec(entry)?.[1]
    if (pid !== undefined && !alive(Number(pid))) rmSync(join(parent, entry), { recursive: true, force: true })
  }
  const output = join(parent, `.dist-build-${process.pid}`)
  const old = join(parent, `.dist-old-${process.pid}`)
  console.error(`books-students-api: building ${relative(root, dist)}/ (tsc -p ${target.tsconfig})`)
  const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, target.tsconfig), '--outDir', output], { cwd: root, stdio: 'inherit' })
  if (status !== 0) {
    rmSync(output, { recursive: true, force: true })
    return status ?? 1
  }
  target.extra?.(output)
  writeFileSync(join(output, '.build-fingerprint'), print)
  try {
    renameSync(dist, old)
  } catch (error) {
    if (error.code !== 'ENOENT') throw error
  }
  renameSync(output, dist)
  rmSync(old, { recursive: true, force: true })
  return 0
}

let status = 0
if (force || !fresh(fingerprint())) {
  await acquire()
  try {
    // Again under the lock: whoever held it may have just built these very sources.
    const print = fingerprint()
    if (force || !fresh(print)) status = build(print)
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
process.exit(status)
