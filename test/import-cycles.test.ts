// `npm run lint:cycles` (part of `npm test`): no module of ours imports itself back, not even through types only.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = fileURLToPath(new URL('..', import.meta.url))

// The check runs as `npm test` runs it, with tap's coverage of child processes turned off (it runs no code of ours).
const { PATH, HOME } = process.env
function lintCycles (...extraFiles: string[]): Promise<{ code: number, output: string }> {
  return new Promise(resolve => {
    execFile('npm', ['run', '--silent', 'lint:cycles', '--', ...extraFiles], { cwd: root, env: { PATH, HOME, _TAPJS_PROCESSINFO_COVERAGE_: '0' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), output: stdout + stderr })
    })
  })
}

t.test('the project has no import circle', async t => {
  const { code, output } = await lintCycles()
  t.equal(code, 0, output)
})

t.test('a circle of type-only imports, written as NodeNext writes them (.js for .ts), fails the check', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-cycles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'nested'))
  writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js'\nexport interface A { b: B }\n")
  writeFileSync(join(dir, 'b.ts'), "import type { C } from './nested/c.js'\nexport interface B { c: C }\n")
  writeFileSync(join(dir, 'nested', 'c.ts'), "import type { A } from '../a.js'\nexport interface C { a: A }\n")
  const { code, output } = await lintCycles(join(dir, 'a.ts'))
  t.equal(code, 1, output)
  t.match(output, /a\.ts -> \S*b\.ts -> \S*nested\/c\.ts/, 'the report names the modules of the circle in order')
})
