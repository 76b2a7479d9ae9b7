// What npm run import shows of an import: its rows in words, the rate it writes them at as seen by the CLI, and the time left.
import type { Import } from '../contract/api-types.js'
import { count } from './transfer.js'

/** "1 row", "1,200 rows". */
export const rows = (n: number): string => `${count(n)} ${n === 1 ? 'row' : 'rows'}`

/**
 * The rate an import writes its rows at, from the frames of its progress stream and the times they
 * arrived. The import's own `rows_per_second` counts from the start of the upload and counts rows
 * read, so it starts far too high (reading is faster than writing) and stays high: this one counts
 * rows written over the last `windowMs`, so the time left holds as the import goes on, and after a
 * pause (a restart of the service) it recovers within a window.
 */
export class WriteRate {
  readonly #windowMs: number
  #samples: { at: number, written: number }[] = []

  constructor (windowMs = 20_000) {
    this.#windowMs = windowMs
  }

  /** A frame of the running import, arrived at `at` (ms). */
  add (at: number, written: number): void {
    this.#samples.push({ at, written })
    // The oldest sample kept is the last one at least a window old, so the rate always spans a window once there is one.
    while (this.#samples.length > 2 && at - this.#samples[1]!.at >= this.#windowMs) this.#samples.shift()
  }

  /** Rows written a second, or null until the frames span a second. */
  perSecond (): number | null {
    const first = this.#samples[0]
    const last = this.#samples.at(-1)
    if (first === undefined || last === undefined || last.at - first.at < 1000) return null
    return (last.written - first.written) / ((last.at - first.at) / 1000)
  }

  /** Seconds left for the import's rows still to write, or null while the rate is unknown (or nil). */
  secondsLeft (job: Import): number | null {
    const rate = this.perSecond()
    return rate === null || rate <= 0 ? null : toWrite(job) / rate
  }
}

/** Rows that passed their checks and are not written yet. */
const toWrite = (job: Import): number => Math.max(0, job.rows.read - job.rows.refused - job.rows.written)

function duration (seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`
  return `${(seconds / 3600).toFixed(1)} h`
}

const refusedPart = (job: Import): string => job.rows.refused === 0 ? '' : `, ${count(job.rows.refused)} refused`

/** The progress line of an import not yet ended. */
export function progressLine (job: Import, rate: WriteRate): string {
  if (job.state === 'receiving') return `receiving: ${rows(job.rows.read)} read and checked${refusedPart(job)}`
  const total = job.rows.read - job.rows.refused
  const share = total === 0 ? 100 : Math.floor(job.rows.written / total * 100)
  const perSecond = rate.perSecond()
  const left = rate.secondsLeft(job)
  const pace = perSecond === null ? ' · measuring the rate' : ` · ${count(perSecond)} rows/s${left === null ? '' : ` · about ${duration(left)} left`}`
  return `${job.state}: ${count(job.rows.written)} of ${rows(total)} written (${share} %)${refusedPart(job)}${pace}`
}

/** The line of an import that ended: what was written, what was refused. */
export function summaryLine (job: Import): string {
  const written = job.rows.written === 0 ? 'nothing written' : `${rows(job.rows.written)} written`
  const refused = job.rows.refused === 0 ? '' : `, ${count(job.rows.refused)} of ${rows(job.rows.read)} refused`
  const kept = job.state === 'cancelled' && job.rows.written > 0 ? ' (the rows written before the cancel stay)' : ''
  return `${job.state}: ${written}${refused}${kept}`
}
