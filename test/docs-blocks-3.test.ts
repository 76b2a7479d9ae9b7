// Every code block of share 3 of README.md and docs/ runs as printed (test/docs-blocks.ts deals the files).
import { runShare } from './docs-blocks.js'

runShare(3)
