// The layers of src/ hold (scripts/check-layers.mjs, run by npm test): storage never imports the HTTP edge, configuration never imports storage.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { layerProblems as check, sourcesIn } from '../scripts/check-layers.mjs'

const src = sourcesIn(join(import.meta.dirname, '..', 'src'))

t.test('src/ holds its layers', async t => {
  t.ok(src.length > 100, `${src.length} modules read`)
  t.same(check(src), [])
})

t.test('an import from a lower layer into a higher one is named, with both layers; one within a layer or downwards is not', async t => {
  const planted = (path: string, text: string): string[] => check([...src.filter(([p]) => p !== path), [path, text]])
  t.same(planted('storage/planted.ts', "import { ApiError } from '../http/errors.js'\n"),
    ['src/storage/planted.ts imports ../http/errors.js: src/storage/ (layer 2) may not import src/http/ (layer 4)'], 'storage raising an HTTP error')
  t.same(planted('storage/sqlite/planted.ts', "import type { Caller } from '../../access/auth.js'\nexport { MissingScopeError } from '../../http/errors.js'\n"), [
    'src/storage/sqlite/planted.ts imports ../../access/auth.js: src/storage/ (layer 2) may not import src/access/ (layer 4)',
    'src/storage/sqlite/planted.ts imports ../../http/errors.js: src/storage/ (layer 2) may not import src/http/ (layer 4)'
  ], 'type imports and re-exports count too, from any depth')
  t.same(planted('config/planted.ts', "const open = async () => import('../storage/sqlite/database.js')\n"),
    ['src/config/planted.ts imports ../storage/sqlite/database.js: src/config/ (layer 1) may not import src/storage/ (layer 2)'], 'a dynamic import')
  t.same(planted('newfolder/x.ts', ''), ['src/newfolder/x.ts: src/newfolder/ is in no layer of scripts/check-layers.mjs'], 'a new folder must be given a layer')
  t.same(planted('http/planted.ts', "import { x } from '../newfolder/x.js'\n"), ['src/http/planted.ts imports ../newfolder/x.js: src/newfolder/ is in no layer'], 'and so must a folder imported')
  t.same(planted('http/planted.ts', "import { ValueTakenError } from '../domain/outcomes.js'\nimport ts from 'typescript'\nimport type { paths } from '../../generated/openapi.js'\n"), [], 'downwards, packages and files outside src/ are fine')
})

t.test('npm run lint:layers passes on src/ and exits 1 naming each import that breaks a layer', async t => {
  const run = (...args: string[]) => new Promise<{ code: number, stderr: string }>(resolve => {
    // From the checkout, as npm runs it (the message names src/ relative to the working directory), whatever tap's own.
    execFile(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'check-layers.mjs'), ...args], { cwd: join(import.meta.dirname, '..') }, (error, _stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), stderr })
    })
  })
  t.same(await run(), { code: 0, stderr: 'lint:layers: src holds its layers\n' })
  const folder = mkdtempSync(join(tmpdir(), 'bsa-layers-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  mkdirSync(join(folder, 'storage'))
  writeFileSync(join(folder, 'storage', 'planted.ts'), "import { ApiError } from '../http/errors.js'\n")
  t.same(await run(folder), {
    code: 1,
    stderr: 'src/storage/planted.ts imports ../http/errors.js: src/storage/ (layer 2) may not import src/http/ (layer 4)\n' +
      'lint:layers: 1 imports break the layers (docs/contributing.md, "Layers")\n'
  })
})
