// Where the tests' TypeScript, types blanked, is kept between runs (scripts/ts-loader/hooks.mjs), and its pruning.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// TS_LOADER_CACHE: another folder (the loader's own test keeps its entries in a temporary one).
export const cacheFolder = process.env.TS_LOADER_CACHE ?? fileURLToPath(new URL('../../node_modules/.cache/ts-blank-space', import.meta.url))

/** Removes what was written more than `days` ago: each edit of a file leaves its older versions behind. */
export function pruneCache (days = 7, now = Date.now(), folder = cacheFolder) {
  if (!existsSync(folder)) return
  for (const name of readdirSync(folder)) {
    const path = `${folder}/${name}`
    // Gone already when a run beside this one pruned it first.
    const written = statSync(path, { throwIfNoEntry: false })?.mtimeMs
    if (written !== undefined && now - written > days * 86_400_000) rmSync(path, { force: true })
  }
}
