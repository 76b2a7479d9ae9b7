// Builds the client package (client/) into client/dist: its source compiled by the root's TypeScript,
// plus the types generated from openapi.yaml, which client/dist/index.d.ts imports as ./openapi.js.
import { execFileSync } from 'node:child_process'
import { copyFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = new URL('../', import.meta.url)
const dist = new URL('client/dist/', root)
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

rmSync(dist, { recursive: true, force: true })
execFileSync(process.execPath, [tsc, '-p', fileURLToPath(new URL('client/tsconfig.json', root))], { stdio: 'inherit' })
copyFileSync(new URL('generated/openapi.d.ts', root), new URL('openapi.d.ts', dist))
console.log('built client/dist')
