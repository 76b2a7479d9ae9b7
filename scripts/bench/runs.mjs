// The two kinds of run: one size with the ceiling and the services in turns, or --scale's sizes one after another; each returns its report and section.
import { rmSync } from 'node:fs'
import { withServices } from './engine-services.mjs'
import { int } from './format.mjs'
import { measure, measureTurns } from './measure.mjs'
import { cacheNote, engineNote, engines, opts, sectionSuffix, settings } from './options.mjs'
import { report } from './report.mjs'
import { listCursors, scenarios } from './scenarios.mjs'
import { seedEngines, sqlitePath } from './seed.mjs'
import { engineFloor } from './floor.mjs'
import { engineTable, mainTable, scaleTable } from './tables.mjs'

const engineNames = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

/** The scenarios `list` on the `seeded` databases, each engine's runs alternating with the ceiling's. */
export async function oneSizeRun (dir, ceiling, seeded, list) {
  const { result: rows, peak } = await withServices(dir, seeded.count, async services => {
    const rows = []
    for (const scenario of list) rows.push({ scenario, ...await measureTurns(ceiling, services, scenario, list.length) })
    return rows
  })
  const tables = engines.map(engine => [engines.length > 1 ? engineNames[engine] : null, mainTable(rows, engine)])
  if (engines.length > 1) tables.push(['The engines side by side', engineTable(rows)])
  const text = await report(`${opts.quick ? 'Quick run' : 'Full run'}${engineNote}${cacheNote}: ${int(seeded.count)} books, ${settings.students.toLocaleString('en')} students`, tables, peak)
  return { text, section: (opts.quick ? 'quick' : 'full') + sectionSuffix }
}

/**
 * The scenarios `list` at each of `sizes`, `first` being the databases already seeded for the first.
 * At scale, cost is compared with the first size's, and the ceiling (which does not grow) is measured once.
 */
export async function scaleRun (dir, ceiling, first, list, sizes) {
  const [engine] = engines
  const steps = list.filter(s => !s.query).length + Math.min(1, list.filter(s => s.query).length) + list.length * sizes.length
  const ceilingRows = []
  // The list queries all send the ceiling its first page, measured once for them.
  let firstPage
  for (const scenario of list) {
    if (scenario.query) ceilingRows.push(firstPage ??= await measure(ceiling, scenario, 'ceiling', steps))
    else ceilingRows.push(await measure(ceiling, scenario, 'ceiling', steps))
  }
  const bySize = []
  let peak = 0
  for (const [i, size] of sizes.entries()) {
    const seeded = i === 0 ? first : await seedEngines(dir, size)
    const { result: rows, peak: sizePeak } = await withServices(dir, size, async services => {
      const rows = []
      const cursors = await listCursors(seeded)
      for (const scenario of scenarios(seeded, cursors)) {
        const service = await measure(services[engine], scenario, engine, steps)
        const floor = scenario.floor === undefined ? undefined : await engineFloor(engine, scenario, { path: sqlitePath(dir, size), client: services[engine].postgres })
        rows.push({ scenario, service, floor })
      }
      return rows
    })
    peak = Math.max(peak, sizePeak)
    bySize.push({ size, rows })
    rmSync(sqlitePath(dir, size), { force: true })
  }
  const text = await report(`Scale run${engineNote}${cacheNote}: ${sizes.map(int).join(' / ')} books`, [[null, scaleTable(bySize, ceilingRows)]], peak)
  return { text, section: 'scale' + sectionSuffix }
}
