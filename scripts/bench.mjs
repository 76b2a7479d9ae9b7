// `npm run bench`: the built service and a bare node:http ceiling through the same scenarios, each figure beside the ceiling's (see BENCHMARKS.md).
// Both are driven in one run on one machine (with --peers, beside the services a user would pick
// instead; with --hostile, the service alone and beside each attack of issue 38); this entry composes the parts in scripts/bench/ (options, seeding, servers, scenarios,
// measuring, tables and report) and scripts/bench/peers/.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { writeSection } from './bench/benchmarks-md.mjs'
import { run } from './cli.mjs'
import { engines, opts, postgresServer, settings } from './bench/options.mjs'
import { root } from './bench/paths.mjs'
import { ensurePlatformatic } from './bench/peers/install.mjs'
import { peersRun } from './bench/peers/run.mjs'
import { benchDatabase, dropBenchDatabase } from './bench/postgres.mjs'
import { pinLoadGenerator } from './bench/processes.mjs'
import { progress } from './bench/progress.mjs'
import { oneSizeRun, scaleRun } from './bench/runs.mjs'
import { listCursors, scenarios } from './bench/scenarios.mjs'
import { seedEngines } from './bench/seed.mjs'
import { startCeiling } from './bench/servers.mjs'
import { bulkRun } from './bench/bulk.mjs'
import { hostileRun } from './bench/hostile-run.mjs'

run('bench', async () => {
  pinLoadGenerator()
  // Before the build and the seeding, so that a failed install costs no more than itself.
  if (opts.peers) ensurePlatformatic()
  if (!opts['no-build']) {
    progress('building the service (npm run build)')
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
    if (build.status !== 0) throw new Error('npm run build failed')
  }
  if (opts.bulk) {
    const { text } = await bulkRun()
    console.log('\n' + text)
    return
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'books-bench-'))
  let ceiling
  try {
    const sizes = opts.scale ? settings.sizes : [settings.books]
    const first = await seedEngines(dir, sizes[0])
    // The hostile run measures the service against itself, alone and under attack: no ceiling.
    if (!opts.hostile) ceiling = await startCeiling(first.sample)
    const { text, section } = opts.hostile
      ? await hostileRun(dir, first)
      : opts.peers ? await peersRun(dir, ceiling, first) : await serviceRun(dir, ceiling, first, sizes)
    console.log('\n' + text)
    if (opts.write) writeSection(section, text)
  } finally {
    await ceiling?.stop()
    rmSync(dir, { recursive: true, force: true })
    if (engines.includes('postgres')) await dropBenchDatabase(postgresServer).catch(error => progress(`could not drop ${benchDatabase}: ${error.message}`))
  }
})

/** The service's own scenarios on one size or, with --scale, on each of `sizes`. */
async function serviceRun (dir, ceiling, first, sizes) {
  const list = scenarios(first, await listCursors(first))
  if (list.length === 0) throw new Error(`--only names no scenario (got ${opts.only})`)
  return opts.scale ? scaleRun(dir, ceiling, first, list, sizes) : oneSizeRun(dir, ceiling, first, list)
}
