// Generates generated/openapi.d.ts from openapi.yaml; with --check, fails if the committed file is stale.
import { readFile, writeFile } from 'node:fs/promises'
import { commandLine } from './cli.mjs'
import openapiTS, { astToString } from 'openapi-typescript'

const specUrl = new URL('../openapi.yaml', import.meta.url)
const outUrl = new URL('../generated/openapi.d.ts', import.meta.url)
const header = '// Generated from openapi.yaml by `npm run generate` (scripts/generate-types.mjs). Do not edit.\n\n'

const usage = `Usage: npm run generate         writes generated/openapi.d.ts from openapi.yaml
       npm run generate:check   (--check) fails if the committed file is stale, writes nothing`
// A mistyped --check must not quietly write the file and pass: it is refused (exit 2).
const { opts: options } = commandLine('npm run generate', usage, { check: { type: 'boolean', default: false } })

const ast = await openapiTS(specUrl, { alphabetize: false })
const fresh = header + astToString(ast)

if (options.check) {
  const current = await readFile(outUrl, 'utf8').catch(() => '')
  if (current !== fresh) {
    console.error('generated/openapi.d.ts is stale: run `npm run generate` and commit the result.')
    process.exit(1)
  }
  console.log('generated/openapi.d.ts is up to date.')
} else {
  await writeFile(outUrl, fresh)
  console.log('wrote generated/openapi.d.ts')
}
