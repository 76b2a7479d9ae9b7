// The tests' TypeScript loader (scripts/ts-loader): a changed file is never run from its old version, imports by the compiled name find the source, old entries go.
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { pruneCache } from '../scripts/ts-loader/cache.mjs'

const register = fileURLToPath(new URL('../scripts/ts-loader/register.mjs', import.meta.url))

function folder (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-ts-loader-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** What `node --import=register main.ts` prints in `dir`, its cache in `cache`; tap's coverage of the child off. */
function run (dir: string, cache: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [`--import=${register}`, join(dir, 'main.ts')], {
      cwd: dir,
      env: { PATH: process.env['PATH'], TS_LOADER_CACHE: cache, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
    }, (error, stdout, stderr) => error === null ? resolve(stdout.trim()) : reject(new Error(`${error.message}\n${stderr}`)))
  })
}

t.test('a file is run as its current text, however often it changes, and imports by the compiled name (.js) find the .ts source', async t => {
  const dir = folder(t)
  const cache = join(folder(t), 'cache')
  writeFileSync(join(dir, 'main.ts'), "import { answer } from './answer.js'\nconst shown: string = String(answer)\nconsole.log(shown)\n")
  for (const value of [41, 42, 41, 43]) {
    writeFileSync(join(dir, 'answer.ts'), `export const answer: number = ${value}\ninterface Unused { a: number }\nexport type { Unused }\n`)
    t.equal(await run(dir, cache), String(value), `answer.ts holding ${value} prints ${value}`)
  }
  t.equal(readdirSync(cache).length, 4, 'one cached file per content: main.ts and three versions of answer.ts')
})

t.test('pruning removes the entries written more than a week ago and keeps the rest; a missing folder is nothing to prune', t => {
  const cache = folder(t)
  const now = Date.now()
  const at = (name: string, daysAgo: number): void => {
    writeFileSync(join(cache, name), '')
    const when = new Date(now - daysAgo * 86_400_000)
    utimesSync(join(cache, name), when, when)
  }
  at('new.js', 0)
  at('six-days.js', 6.9)
  at('eight-days.js', 8)
  pruneCache(7, now, cache)
  t.same(readdirSync(cache).sort(), ['new.js', 'six-days.js'])
  t.doesNotThrow(() => pruneCache(7, now, join(cache, 'none')), 'no folder, no error')
  t.end()
})
