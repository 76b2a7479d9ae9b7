// Module hooks for the tests' TypeScript: ts-blank-space's (types become spaces, so lines and columns stay where they were),
// with each file's result kept on disk by its content, so that a test process loads TypeScript's compiler only for a file changed since.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { cacheFolder } from './cache.mjs'

// The compiler is 9 MB of JavaScript: loading it cost each test process about a second of CPU, more than the rest of its start.
let blankSpace = null
const blanked = async source => {
  blankSpace ??= (await import('ts-blank-space')).default
  return blankSpace(source)
}

const version = JSON.parse(readFileSync(new URL('../../node_modules/ts-blank-space/package.json', import.meta.url), 'utf8')).version
mkdirSync(cacheFolder, { recursive: true })

/** An import of `./x.js` finds `./x.ts` (the code imports its TypeScript files by the name they are compiled to). */
export async function resolve (specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    if (typeof error?.url === 'string' && error.url.endsWith('.js')) return nextResolve(`${error.url.slice(0, -3)}.ts`, context)
    throw error
  }
}

export async function load (url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context)
  // Read through the hooks after these (tap's among them, which note each file a test loads for its coverage report).
  const format = 'module'
  const source = String((await nextLoad(url, { ...context, format })).source)
  const cached = `${cacheFolder}/${createHash('sha256').update(`${version}\0${source}`).digest('hex')}.js`
  let code
  try {
    code = readFileSync(cached, 'utf8')
  } catch {
    code = await blanked(source)
    // Written aside, then renamed: the processes running beside this one read a whole file or none.
    const aside = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`
    writeFileSync(aside, code)
    renameSync(aside, cached)
  }
  return { format, shortCircuit: true, source: `${code}\n//# sourceURL=${url}` }
}
