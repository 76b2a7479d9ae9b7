// Links and anchors between README.md, docs/, BENCHMARKS.md, CHANGELOG.md and src/'s folder notes resolve (issue 27).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { linked, root } from './docs-harness.js'
import { linkProblems } from './docs-rules.js'

t.test('links and anchors between the docs resolve', async t => {
  const files = {
    exists: (path: string) => existsSync(join(root, path)),
    read: (path: string) => readFileSync(join(root, path), 'utf8')
  }
  for (const rel of linked.filter(files.exists)) {
    const problems = linkProblems(rel, files.read(rel), files)
    if (problems.length === 0) t.pass(`${rel}: every relative link resolves`)
    for (const { line, message } of problems) t.fail(`${rel}:${line}: ${message}`)
  }
})
