// bench:events' result: the writes, the events each stream got, delivery latency, service CPU and the target, as lines.
import { duration, opts, rate, streamCount } from './events-options.mjs'

const percentile = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]
const f1 = n => Number.isFinite(n) ? n.toFixed(1) : 'n/a'

/**
 * The report of a window: `result` is write()'s, `streams` the open streams, `cpu` the service's CPU
 * seconds over `elapsed` seconds, `otherTransactions` PostgreSQL's sampled other writers (undefined on
 * SQLite). `complete` says whether every stream got every created book's event.
 */
export function eventsReport ({ result, streams, endedEarly, cpu, elapsed, otherTransactions }) {
  const counts = streams.map(s => [...result.created].filter(id => s.received.has(id)).length)
  const extra = streams.reduce((sum, s) => sum + [...s.received.keys()].filter(id => !result.created.has(id)).length, 0)
  const duplicates = streams.reduce((sum, s) => sum + s.duplicates, 0)
  // Only the measured writes' events: a warm-up event that came late is not one of them.
  const sorted = Float64Array.from(streams.flatMap(s => [...result.created].filter(id => s.received.has(id)).map(id => s.received.get(id)))).sort()
  const complete = counts.every(c => c === result.created.size)
  const lines = [
    `engine ${opts.engine}, ${streamCount} streams (types=book.created, admin key), POST /books at ${rate}/s for ${duration} s (open-loop)`,
    `writes: ${result.sent} sent, ${result.created.size} created (201), ${result.failed} failed; ${f1(result.created.size / result.answered)} writes/s achieved ` +
      `(sending took ${f1(result.sending)} s, the last answer came at ${f1(result.answered)} s)`,
    `events per stream: min ${Math.min(...counts)}, max ${Math.max(...counts)} of ${result.created.size} written; every stream got every event: ${complete ? 'yes' : 'NO'}; ` +
      `duplicates ${duplicates}, events of other writes ${extra}, streams ended early ${endedEarly}`,
    `delivery latency (receive − event time) over ${sorted.length} deliveries: p50 ${f1(percentile(sorted, 50))} ms, p99 ${f1(percentile(sorted, 99))} ms, max ${f1(sorted.at(-1))} ms`,
    `service CPU: ${cpu.toFixed(2)} s over ${f1(elapsed)} s (${Math.round(100 * cpu / elapsed)} % of a core), ${Math.round(cpu / result.created.size * 1e6)} µs per write with its ${streamCount} deliveries`,
    ...(otherTransactions === undefined
      ? []
      : [`other databases' open write transactions (sampled every 100 ms): in ${otherTransactions.busy} of ${otherTransactions.samples} samples, the oldest open for ${Math.round(otherTransactions.oldestMs)} ms`]),
    `target p99 < 100 ms: ${percentile(sorted, 99) < 100 && complete ? 'met' : 'not met'}`
  ]
  return { text: lines.join('\n'), complete }
}
