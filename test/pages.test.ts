// Pages for people: the bare origin leads to the docs, and every problem type the service can send resolves to its explanation.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { spec } from './contract.js'
import { build } from './helper.js'

const src = fileURLToPath(new URL('../src/', import.meta.url))
/** Every `/problems/…` type written in the service's source: what it can send. */
const sentTypes = [...new Set(readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(file => file.endsWith('.ts'))
  .flatMap(file => [...readFileSync(join(src, file), 'utf8').matchAll(/'(\/problems\/[a-z-]+)'/g)].map(match => match[1]!)))].sort()

t.test('GET / sends a person to Swagger UI and a program to the links it needs', async t => {
  // Not operations of the contract, so plain inject rather than the contract-checking request().
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/' })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/docs')
  t.same(res.json(), { docs: '/docs', openapi: '/docs/json', books: '/books', students: '/api/students' })
})

t.test('every problem type the service sends is listed in openapi.yaml and resolves to a page that explains it', async t => {
  const listed = spec['x-problem-types'] as { type: string, title: string, status: number }[]
  t.ok(sentTypes.length >= 7, `${sentTypes.length} types found in src/`)
  t.same(listed.map(p => p.type).sort(), sentTypes, 'the contract lists exactly the types the source sends')
  const { app } = await build(t)
  for (const { type, title, status } of listed) {
    const page = await app.inject({ method: 'GET', url: type })
    t.equal(page.statusCode, 200, type)
    t.match(page.headers['content-type'], /^text\/html; charset=utf-8/)
    t.match(page.payload, `<h1>${title}</h1>`)
    t.match(page.payload, `HTTP status ${status}`)
    t.notMatch(page.payload, /`/, 'code spans are rendered')
  }
  const unknown = await app.inject({ method: 'GET', url: '/problems/no-such-type' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().detail, 'No problem type is named no-such-type')
})

t.test('the problem types in the contract\'s examples are all listed', async t => {
  const inExamples = [...new Set([...JSON.stringify(spec['components']).matchAll(/"type":"(\/problems\/[a-z-]+)"/g)].map(m => m[1]!))]
  for (const type of inExamples) t.ok(sentTypes.includes(type), type)
})

t.test('a problem that an operator\'s setting decides names that setting on its page', async t => {
  const { app } = await build(t)
  const settings = {
    '/problems/refused-webhook-url': 'WEBHOOK_ALLOWED_ADDRESSES',
    '/problems/too-many-streams': 'EVENT_STREAMS_PER_KEY',
    '/problems/too-many-webhook-endpoints': 'WEBHOOK_ENDPOINTS_MAX',
    '/problems/cursor-expired': 'EVENTS_RETENTION_DAYS'
  }
  for (const [type, setting] of Object.entries(settings)) {
    const page = await app.inject({ method: 'GET', url: type })
    t.match(page.payload, `<code>${setting}</code>`, `${type} names ${setting}`)
  }
})
