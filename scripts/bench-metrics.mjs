// `node scripts/bench-metrics.mjs` (after npm run build): what the metrics' per-request hooks cost, alone, in ns of CPU (see BENCHMARKS.md).
import { fromDist } from './bench/paths.mjs'

const { buildApp } = await fromDist('app.js')
const { loadConfig } = await fromDist('config.js')

// A real request and reply of each kind, kept from the app's own onResponse, then replayed through
// the metrics' hooks: the HTTP benchmark's noise (other processes, the load generator) is left out.
const adminKey = 'k'.repeat(40)
const app = await buildApp(loadConfig({}, { databasePath: ':memory:', logLevel: 'silent', adminApiKey: adminKey }))
const kept = []
app.addHook('onResponse', (request, reply, done) => { kept.push([request, reply]); done() })
await app.ready()
const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
const created = await app.inject({ method: 'POST', url: '/books', headers, payload: { title: 'Dune', author: 'Frank Herbert' } })
await app.inject({ url: `/books/${created.json().book_id}`, headers })
await app.inject({ url: '/nowhere' })

const metrics = app.operations.metrics
const rounds = 5
const perRound = 1_000_000
for (const [request, reply] of kept) {
  const samples = []
  for (let round = 0; round < rounds; round++) {
    const cpu = process.cpuUsage()
    for (let i = 0; i < perRound; i++) {
      metrics.requestStarted()
      metrics.requestFinished(request, reply, () => {})
    }
    const { user, system } = process.cpuUsage(cpu)
    samples.push((user + system) * 1000 / perRound)
  }
  samples.sort((a, b) => a - b)
  console.log(`${request.method} ${request.url.replace(/[0-9a-f-]{36}/, '{id}')} → ${reply.statusCode}: median ${samples[2].toFixed(0)} ns of CPU per request (${samples.map(s => s.toFixed(0)).join(', ')})`)
}
await app.close()
