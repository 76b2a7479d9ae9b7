// `npm run lint:layers` (`node scripts/check-layers.mjs [folder]`): every module of src/ imports only its own layer and those below (docs/contributing.md, "Layers"); exits 1 naming each import that does not.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/**
 * The layers, lowest first: a folder of src/ (`.` for the files at its top, app.ts and server.ts)
 * may import its own layer and those below, never above. Storage speaks SQL and raises domain
 * outcomes (src/domain/outcomes.ts), which only the HTTP edge turns into problems.
 */
export const layers = [
  ['formats'],
  ['config', 'contract', 'domain'],
  ['storage'],
  ['events', 'observability', 'webhooks'],
  ['access', 'cli', 'handlers', 'http', 'imports', 'ops', '.']
]

const layerOf = folder => layers.findIndex(layer => layer.includes(folder))

/** The folder of src/ a path inside it belongs to (`.` for a file at the top). */
const folderOf = path => path.includes('/') ? path.slice(0, path.indexOf('/')) : '.'

/**
 * What breaks the layers in `sources` (paths relative to src/, with '/', to their text): one line per
 * import of a higher layer, or of a folder no layer names.
 */
export function layerProblems (sources) {
  const problems = []
  for (const [path, text] of sources) {
    const from = folderOf(path)
    if (layerOf(from) === -1) {
      problems.push(`src/${path}: src/${from}/ is in no layer of scripts/check-layers.mjs`)
      continue
    }
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!specifier.startsWith('.')) continue
      const target = posix.normalize(posix.join(posix.dirname(path), specifier))
      // Outside src/ (generated/, package.json): not a layer of its own.
      if (target.startsWith('../')) continue
      const to = folderOf(target)
      if (to === from) continue
      if (layerOf(to) === -1) problems.push(`src/${path} imports ${specifier}: src/${to}/ is in no layer`)
      else if (layerOf(to) > layerOf(from)) problems.push(`src/${path} imports ${specifier}: src/${from}/ (layer ${layerOf(from)}) may not import src/${to}/ (layer ${layerOf(to)})`)
    }
  }
  return problems
}

/** Every TypeScript source below `dir`, relative to it, with its text. */
export function sourcesIn (dir) {
  return readdirSync(dir, { recursive: true })
    .map(path => String(path))
    .filter(path => path.endsWith('.ts'))
    .map(path => [path.split(sep).join('/'), readFileSync(join(dir, path), 'utf8')])
}

// The folder checked is src/, or the one named (tests name one of their own).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const src = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
  const problems = layerProblems(sourcesIn(src))
  for (const problem of problems) console.error(problem)
  console.error(problems.length === 0 ? `lint:layers: ${relative(process.cwd(), src)} holds its layers` : `lint:layers: ${problems.length} imports break the layers (docs/contributing.md, "Layers")`)
  process.exitCode = problems.length === 0 ? 0 : 1
}
