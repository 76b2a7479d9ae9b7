// `node scripts/bench-rate-limit.mjs [redis://…]`: the rate-limit stores alone, Node CPU per count in memory and in Redis (see BENCHMARKS.md).
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { fromDist } from './bench/paths.mjs'

const { MemoryRateLimitStore } = await fromDist('access/rate-limit-store.js')
const { RedisRateLimitStore } = await fromDist('access/rate-limit-redis.js')

const url = process.argv[2] ?? 'redis://127.0.0.1:6379'
const limit = { requests: 1e9, seconds: 60 }
// As many counts in flight as the HTTP benchmark has connections, over as many partitions.
const concurrency = 32
const total = 200_000

/** Counts `total` requests, `concurrency` at a time; returns counts per second and Node CPU µs per count. */
async function measure (store) {
  let next = 0
  const started = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  await Promise.all(Array.from({ length: concurrency }, async (_, lane) => {
    while (next++ < total) await store.hit(`key:${lane}`, limit, Date.now())
  }))
  const used = process.cpuUsage(cpu)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { perSecond: Math.round(total / seconds), cpuMicros: Math.round((used.user + used.system) / total * 10) / 10 }
}

const prefix = `bench:${randomUUID()}:`
const log = { warn: (_object, message) => console.error(message), info: message => console.error(message) }
const stores = {
  memory: new MemoryRateLimitStore(),
  redis: await RedisRateLimitStore.open({ url, keyPrefix: prefix, timeout: 1000, log })
}
for (const [name, store] of Object.entries(stores)) {
  await measure(store) // warm-up: JIT, and Redis's script cache
  const runs = [await measure(store), await measure(store), await measure(store)].sort((a, b) => a.cpuMicros - b.cpuMicros)
  console.log(`${name}: ${runs[1].perSecond.toLocaleString('en')} counts/s, ${runs[1].cpuMicros} µs Node CPU per count (median of 3 x ${total.toLocaleString('en')})`)
  await store.close()
}
const client = new Redis(url)
const keys = await client.keys(`${prefix}*`)
if (keys.length > 0) await client.del(...keys)
await client.quit()
