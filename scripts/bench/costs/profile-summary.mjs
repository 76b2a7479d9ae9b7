// Shares of a service's CPU profile (npm run bench -- --profile DIR) by component: node scripts/bench/costs/profile-summary.mjs FILE.cpuprofile [µs per request].
import { readFileSync } from 'node:fs'

// A sample belongs to the deepest frame on its stack that one of these names (the first rule that
// matches a frame wins); samples under the service's start-up are left out.
const components = [
  ['start-up', /buildApp|readContract|compileSchema|dist\/server\.js|wrapSafe|modules\/cjs\/loader/],
  ['storage (SQL and the engine’s own work)', /dist\/storage\//],
  ['pg driver', /node_modules\/pg\/|node_modules\/pg-protocol\//],
  ['search folding', /dist\/domain\/search\//],
  ['idempotency', /dist\/handlers\/idempotency/],
  ['authentication', /dist\/access\/auth|api-keys/],
  ['rate limit', /rate-limit/],
  ['request log', /request-log|node_modules\/pino|sonic-boom/],
  ['metrics', /metrics|prom-client/],
  ['tracing', /tracing|opentelemetry/],
  ['JSON body parsing', /json-body/],
  ['validation', /dist\/http\/validation|node_modules\/ajv/],
  ['serialisation', /fast-json-stringify|representation/],
  ['handlers', /dist\/handlers\//],
  ['service hooks and HTTP helpers', /dist\/app\.js|dist\/http\//],
  ['Fastify', /node_modules\/fastify|node_modules\/avvio|find-my-way|node_modules\/@fastify\//],
  ['Node HTTP and sockets', /node:_http|node:net|node:internal\/stream|node:events|node:internal\/http|^(writev|writeString|writeUtf8String|parserOn)/]
]

const [file, perRequest] = [process.argv[2], Number(process.argv[3] ?? 0)]
if (file === undefined) {
  console.error('usage: node scripts/bench/costs/profile-summary.mjs FILE.cpuprofile [CPU µs per request]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(file, 'utf8'))
const nodes = new Map(profile.nodes.map(node => [node.id, node]))
const parents = new Map(profile.nodes.flatMap(node => (node.children ?? []).map(child => [child, node.id])))
const frame = ({ callFrame: { functionName, url } }) => `${functionName} ${url}`
const special = new Map([['(idle)', 'idle'], ['(garbage collector)', 'garbage collection'], ['(program)', 'V8 and native, unattributed']])
const componentOf = new Map()
function component (id) {
  if (componentOf.has(id)) return componentOf.get(id)
  const node = nodes.get(id)
  const own = special.get(node.callFrame.functionName) ?? components.find(([, pattern]) => pattern.test(frame(node)))?.[0] ?? null
  // Code without a source file (the validators and serialisers Ajv and fast-json-stringify generate) stays here.
  const parent = parents.has(id) ? component(parents.get(id)) : 'other: generated code, unattributed'
  const found = parent === 'start-up' ? 'start-up' : own ?? parent
  componentOf.set(id, found)
  return found
}
const time = new Map()
profile.samples.forEach((id, i) => {
  const name = component(id)
  time.set(name, (time.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0))
})
const busy = [...time].filter(([name]) => name !== 'idle' && name !== 'start-up').reduce((sum, [, t]) => sum + t, 0)
console.log(`| component | share of busy CPU |${perRequest ? ' µs per request |' : ''}\n|---|---:|${perRequest ? '---:|' : ''}`)
for (const [name, t] of [...time].sort((a, b) => b[1] - a[1])) {
  if (name === 'idle' || name === 'start-up') continue
  console.log(`| ${name} | ${(100 * t / busy).toFixed(1)} % |${perRequest ? ` ${(perRequest * t / busy).toFixed(1)} |` : ''}`)
}
