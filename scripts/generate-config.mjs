// Writes the reference part of docs/configuration.md from the declarations in src/config/ (as built in dist/); with --check, fails if the committed file differs.
import { readFile, writeFile } from 'node:fs/promises'
import { commandLine } from './cli.mjs'

const root = new URL('..', import.meta.url)
const docUrl = new URL('docs/configuration.md', root)
const usage = `Usage: npm run generate:config              writes the reference part of docs/configuration.md
       npm run generate:config -- --check   fails if the committed file differs, writes nothing`
// A mistyped --check must not quietly write the file and pass: it is refused (exit 2).
const { opts: options } = commandLine('npm run generate:config', usage, { check: { type: 'boolean', default: false } })

// dist/, which `npm run generate:config` builds first when stale: plain Node cannot load src/'s TypeScript.
const { firstDifference, withReference } = await import(new URL('dist/config/reference.js', root))
const current = await readFile(docUrl, 'utf8')
const fresh = withReference(current)
if (options.check) {
  const difference = firstDifference(current, fresh)
  if (difference !== null) {
    console.error(`docs/configuration.md differs from the declarations in src/config/ at ${difference}: run \`npm run generate:config\` and commit the result.`)
    process.exit(1)
  }
  console.log('docs/configuration.md is up to date.')
} else {
  await writeFile(docUrl, fresh)
  console.log('wrote docs/configuration.md')
}
