// The schema-driven property test on a fixed seed, so that CI always covers the same ground; Prism checks every exchange too.
import t from 'tap'
import { exploreBothSettings } from './schema-property.js'

exploreBothSettings(t, 'fixed', 20261123, true)
