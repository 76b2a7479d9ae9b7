// The schema-driven property test on a fresh seed each run, to explore new shapes.
// Replay a failure: PROPERTY_SEED=<the seed in its name> npx tap test/schema-property.fresh.test.ts
import t from 'tap'
import { exploreBothSettings } from './schema-property.js'

exploreBothSettings(t, 'fresh', Number(process.env['PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31)), false)
