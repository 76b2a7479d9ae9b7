// `node --import=./scripts/ts-loader/register.mjs`: loads TypeScript files as ts-blank-space does, from a cache (hooks.mjs).
import { register } from 'node:module'

register('./hooks.mjs', import.meta.url)
