// Every code block of share 2 of README.md and docs/ runs as printed (test/docs-blocks.ts deals the files).
import { runShare } from './docs-blocks.js'

runShare(2)
