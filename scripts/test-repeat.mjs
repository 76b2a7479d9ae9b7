// `npm run test:repeat -- <test file> [N]`: runs one test file N times (10 by default) in a row, with the machine's other cores kept busy, and says how many runs passed: a flaky test shows itself here rather than in CI.
import { spawn, spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(import.meta.url), '..', '..')
const [file, times = '10'] = process.argv.slice(2)
const runs = Number(times)
if (file === undefined || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: npm run test:repeat -- <test file> [N]   (N runs, 10 by default)')
  process.exit(2)
}

// One busy loop per core but one, as a loaded machine (or CI beside another job) would have them.
const burners = Array.from({ length: Math.max(1, availableParallelism() - 1) }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
const stop = () => { for (const burner of burners) burner.kill('SIGKILL') }
process.on('exit', stop)
process.on('SIGINT', () => process.exit(130))

let passed = 0
for (let run = 1; run <= runs; run++) {
  const started = performance.now()
  const tap = spawnSync(join(root, 'node_modules/.bin/tap'), ['--disable-coverage', file], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  if (tap.status === 0) {
    passed++
    console.log(`run ${run} of ${runs}: passed in ${seconds} s`)
  } else {
    console.log(`run ${run} of ${runs}: FAILED in ${seconds} s (exit ${tap.status ?? tap.signal})`)
    process.stdout.write(tap.stdout.split('\n').filter(line => /^\s*not ok /.test(line)).join('\n') + '\n')
  }
}
// The busy loops are child processes: while they run, this one would never exit.
stop()
console.log(`${file}: ${passed} of ${runs} runs passed, the other ${burners.length} core(s) busy`)
process.exitCode = passed === runs ? 0 : 1
