// Where the benchmarks find the project: its root, and the built service's modules in dist/ (npm run build).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('../..', import.meta.url))

/** Imports a module of the built service, `file` relative to dist/ (e.g. 'app.js'). */
export const fromDist = file => import(join(root, 'dist', file))
