// Runs the code blocks of one share of README.md and docs/ (test/docs-blocks-<n>.test.ts): the files are dealt
// round-robin to a few test files, so that tap runs them side by side instead of one file taking minutes alone.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { assertResults, root, runDoc, runnable } from './docs-harness.js'

export const shares = 3

/** The blocks of every Markdown file whose place in the sorted list is `share` modulo `shares` (1-based). */
export function runShare (share: number): void {
  // Several files, each with a service and a bash session, one after the other (docs/client.md installs
  // packages: 110 s once on a loaded CI): far more than tap's default for a test file.
  t.setTimeout(1_200_000)
  for (const rel of runnable.filter((_, index) => index % shares === share - 1)) {
    t.test(rel, async t => {
      t.setTimeout(600_000)
      assertResults(t, rel, await runDoc(t, rel, readFileSync(join(root, rel), 'utf8'), rel.startsWith('docs/')))
    })
  }
}
