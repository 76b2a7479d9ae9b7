// Writes the reference part of docs/configuration.md from the declarations in src/config/ (as built in dist/); with --check, fails if the committed file differs.
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'

const root = new URL('..', import.meta.url)
const docUrl = new URL('docs/configuration.md', root)
const usage = `Usage: npm run generate:config              writes the reference part of docs/configuration.md
       npm run generate:config -- --check   fails if the committed file differs, writes nothing`
let options
try {
  ({ values: options } = parseArgs({ options: { check: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }))
} catch (error) {
  // A mistyped --check must not quietly rewrite the file and pass.
  console.error(`generate-config: ${error.message.split('. ')[0]}\n${usage}`)
  process.exit(2)
}
if (options.help) {
  console.log(usage)
  process.exit(0)
}

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
