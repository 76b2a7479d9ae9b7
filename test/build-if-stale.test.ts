// scripts/build-if-stale.mjs, which npm start, keys and backup run first: tsc only when the sources changed, one build at a time, dist/ swapped in whole.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// Three tsc runs on a busy machine.
t.setTimeout(300_000)

const root = fileURLToPath(new URL('..', import.meta.url))

// A checkout of its own, so that these builds never touch the dist/ other tests load.
const dir = mkdtempSync(join(tmpdir(), 'bsa-build-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'openapi.yaml', 'src', 'generated', 'scripts/build-if-stale.mjs']) {
  cpSync(join(root, entry), join(dir, entry), { recursive: true })
}
symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
const dist = join(dir, 'dist')
const lock = join(dir, '.dist.lock')

interface Run { child: ChildProcess, exited: Promise<number | null>, output: () => string }

function run (): Run {
  const { PATH, HOME } = process.env
  const child = spawn(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: dir, env: { PATH, HOME, _TAPJS_PROCESSINFO_COVERAGE_: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', chunk => { output += chunk })
  child.stderr.on('data', chunk => { output += chunk })
  return { child, exited: once(child, 'exit').then(([code]) => code as number | null), output: () => output }
}

/** Waits until the run has said `text`. */
async function until (what: Run, text: string): Promise<void> {
  while (!what.output().includes(text)) {
    const [event] = await Promise.race([once(what.child.stderr!, 'data').then(() => ['data']), what.exited.then(() => ['exit'])])
    if (event === 'exit') throw new Error(`exited before saying ${text}: ${what.output()}`)
  }
}

const built = (what: Run) => what.output().includes('building dist/')
const sources = (folder: string): string[] => readdirSync(folder, { withFileTypes: true }).flatMap(entry =>
  entry.isDirectory() ? sources(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [])

t.test('two builds at once while another holds the lock: both wait, then one builds a whole dist/', async t => {
  mkdirSync(lock)
  writeFileSync(join(lock, 'pid'), String(process.pid))
  const runs = [run(), run()]
  for (const each of runs) await until(each, 'waiting for another build of dist/')
  t.notOk(existsSync(dist), 'nothing is built while the lock is held')
  rmSync(lock, { recursive: true })
  t.same(await Promise.all(runs.map(each => each.exited)), [0, 0])
  t.equal(runs.filter(built).length, 1, 'one of them ran tsc; the other found dist/ fresh')
  const missing = sources(join(dir, 'src')).map(file => relative(join(dir, 'src'), file).replace(/\.ts$/, '.js')).filter(file => !existsSync(join(dist, file)))
  t.same(missing, [], 'every source has its module in dist/')
  const loaded = spawnSync(process.execPath, ['-e', 'import("./dist/config/index.js").then(m => console.log(m.loadConfig({}).port))'], { cwd: dir, encoding: 'utf8' })
  t.equal(loaded.stdout, '3000\n', 'and dist/ loads')
  t.same(readdirSync(dir).filter(entry => entry.startsWith('.dist')), [], 'no lock or build folder is left behind')
})

t.test('unchanged sources are not built again, even when touched', async t => {
  const before = statSync(dist).ino
  const again = run()
  t.equal(await again.exited, 0)
  t.notOk(built(again), 'no tsc')
  const file = join(dir, 'src', 'domain', 'isbn.ts')
  utimesSync(file, new Date(), new Date(Date.now() + 60_000))
  const touched = run()
  t.equal(await touched.exited, 0)
  t.notOk(built(touched), 'a newer time alone is no change')
  t.equal(statSync(dist).ino, before, 'the same dist/')
})

t.test('a changed source is built, also when a build killed midway left its lock', async t => {
  const before = statSync(dist).ino
  appendFileSync(join(dir, 'src', 'domain', 'isbn.ts'), '\n// changed by build-if-stale.test.ts\n')
  // The pid of a process that has ended.
  const { pid } = spawnSync(process.execPath, ['-e', ''])
  mkdirSync(lock)
  writeFileSync(join(lock, 'pid'), String(pid))
  const rebuilt = run()
  t.equal(await rebuilt.exited, 0)
  t.ok(built(rebuilt), 'tsc ran')
  t.not(statSync(dist).ino, before, 'a new dist/ was swapped in')
  t.match(readFileSync(join(dist, 'domain', 'isbn.js'), 'utf8'), /changed by build-if-stale\.test\.ts/)
  t.notOk(existsSync(lock), 'the abandoned lock is gone')
})
