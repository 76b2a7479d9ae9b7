// --write: a report put into BENCHMARKS.md between its markers (<!-- bench:NAME:start/end -->), or appended with new ones.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './paths.mjs'
import { progress } from './progress.mjs'

export function writeSection (marker, text) {
  const file = join(root, 'BENCHMARKS.md')
  const start = `<!-- bench:${marker}:start -->`
  const end = `<!-- bench:${marker}:end -->`
  let doc = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n'
  const block = `${start}\n${text}\n${end}`
  const at = doc.indexOf(start)
  doc = at === -1 ? `${doc.trimEnd()}\n\n${block}\n` : doc.slice(0, at) + block + doc.slice(doc.indexOf(end) + end.length)
  writeFileSync(file, doc)
  progress(`wrote the ${marker} section of BENCHMARKS.md`)
}
