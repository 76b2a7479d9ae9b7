// `npm run bench:events`: N live event streams open on the built service while POST /books writes at a fixed rate; delivery latency of every event on every stream (see BENCHMARKS.md).
// The parts are in scripts/bench/: events-options, event-stream, paced-writes, other-transactions and events-report.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { run } from './cli.mjs'
import { now } from './bench/clock.mjs'
import { openStream } from './bench/event-stream.mjs'
import { databaseUrl, duration, opts, rate, streamCount } from './bench/events-options.mjs'
import { eventsReport } from './bench/events-report.mjs'
import { watchOtherTransactions } from './bench/other-transactions.mjs'
import { write } from './bench/paced-writes.mjs'
import { benchDatabase, createBenchDatabase, dropBenchDatabase } from './bench/postgres.mjs'
import { cpuSeconds, pinLoadGenerator } from './bench/processes.mjs'
import { progressTo } from './bench/progress.mjs'
import { startService } from './bench/servers.mjs'

const { progress } = progressTo('bench-events')

run('bench-events', async () => {
  pinLoadGenerator()
  const dir = mkdtempSync(join(os.tmpdir(), 'books-bench-events-'))
  let service
  try {
    if (opts.engine === 'postgres') await createBenchDatabase(opts['postgres-url'])
    service = await startService({
      name: 'the service',
      engine: opts.engine,
      sqlitePath: join(dir, 'books.sqlite'),
      databaseUrl,
      env: { EVENT_STREAMS_PER_KEY: String(streamCount) }
    })
    progress(`opening ${streamCount} streams (${opts.engine})`)
    const streams = await Promise.all(Array.from({ length: streamCount }, (_, i) => openStream(service.port, i)))
    // A few writes before the window, so that the first measured ones do not pay for cold code paths.
    await write(service.port, rate, 1, progress).then(warm => progress(`warm-up: ${warm.created.size} writes`))
    await new Promise(resolve => setTimeout(resolve, 500))
    for (const stream of streams) stream.received.clear()

    progress(`writing ${rate}/s for ${duration} s`)
    // PostgreSQL: a reader sees only transactions older than the oldest one open in the whole cluster,
    // so another database's open write transactions hold the feed back; sampled to tell them apart.
    const others = opts.engine === 'postgres' ? watchOtherTransactions(databaseUrl) : null
    const cpuBefore = cpuSeconds(service.pid)
    const startedAt = now()
    const result = await write(service.port, rate, duration, progress)
    // Every stream must catch up: wait until each holds every created id, or 10 s have passed.
    const deadline = now() + 10_000
    const caughtUp = () => streams.every(s => [...result.created].every(id => s.received.has(id)))
    while (!caughtUp() && now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
    const elapsed = (now() - startedAt) / 1000
    const cpu = cpuSeconds(service.pid) - cpuBefore
    const endedEarly = streams.filter(s => s.ended).length
    for (const stream of streams) stream.request.destroy()
    const otherTransactions = await others?.stop()

    const { text, complete } = eventsReport({ result, streams, endedEarly, cpu, elapsed, otherTransactions })
    console.log(text)
    if (!complete) process.exitCode = 1
  } finally {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
    if (opts.engine === 'postgres') await dropBenchDatabase(opts['postgres-url']).catch(error => progress(`could not drop ${benchDatabase}: ${error.message}`))
  }
})
