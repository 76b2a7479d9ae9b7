// The served contract: docs endpoints serve openapi.yaml verbatim, and routes and operations match one to one.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { specPath } from '../src/openapi-document.js'
import { spec } from './contract.js'
import { build } from './helper.js'

/** Every served method and path, read from Fastify's route tree. */
function servedRoutes (tree: string): string[] {
  const routes: string[] = []
  const stack: string[] = []
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (\S+) \(([^)]+)\)$/.exec(line)
    if (match === null) continue
    const depth = match[1]!.length / 4
    stack.length = depth
    stack.push(match[2]!)
    for (const method of match[3]!.split(', ')) routes.push(`${method} ${stack.join('')}`)
  }
  return routes
}

t.test('GET /docs/json and /docs/yaml serve openapi.yaml unchanged', async t => {
  const { app } = await build(t)
  const asJson = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(asJson.statusCode, 200)
  t.same(asJson.json(), parse(readFileSync(specPath, 'utf8')))
  const asYaml = await app.inject({ method: 'GET', url: '/docs/yaml' })
  t.equal(asYaml.statusCode, 200)
  t.same(parse(asYaml.payload), spec)
})

t.test('GET /docs serves Swagger UI', async t => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/docs/', headers: { accept: 'text/html' } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/html/)
  t.match(res.payload, /swagger-ui/)
})

t.test('every served route is an operation of openapi.yaml (docs and pages for people aside), and every operation is served', async t => {
  const { app } = await build(t)
  await app.ready()
  const served = servedRoutes(app.printRoutes({ commonPrefix: false })).filter(r => !/ \/(docs|problems\/:name$|$)/.test(r))
  const declared = Object.entries<Record<string, unknown>>(spec['paths']).flatMap(([path, item]) =>
    Object.keys(item).filter(m => m !== 'parameters').flatMap(method => {
      const route = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`
      return method === 'get' ? [route, route.replace('GET', 'HEAD')] : [route]
    }))
  t.same(served.sort(), declared.sort())
  t.equal(declared.length, 17 + 8, 'seventeen operations (the nine of the specification, two of the feed, six for webhooks), eight of them GETs with HEAD')
})

t.test('every operation reaches its own handler (none answers "not implemented")', async t => {
  const { request } = await build(t)
  const id = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'
  const calls = [
    ['GET', '/books'], ['POST', '/books'], ['GET', `/books/${id}`], ['PUT', `/books/${id}`], ['DELETE', `/books/${id}`],
    ['GET', '/api/students'], ['POST', '/api/students'], ['GET', `/api/students/${id}`], ['PUT', `/api/students/${id}`],
    ['GET', '/events'], ['GET', '/webhook-endpoints'], ['POST', '/webhook-endpoints'], ['GET', `/webhook-endpoints/${id}`],
    ['DELETE', `/webhook-endpoints/${id}`], ['POST', `/webhook-endpoints/${id}/secret`], ['POST', `/webhook-endpoints/${id}/enable`]
  ] as const
  for (const [method, url] of calls) {
    const res = await request({ method, url, ...(method === 'POST' || method === 'PUT' ? { payload: {} } : {}) })
    t.ok(res.statusCode < 500, `${method} ${url} → ${res.statusCode}`)
    t.notMatch(res.payload, /not implemented/i)
  }
})

t.test('every schema and operation of openapi.yaml carries examples', async t => {
  for (const [name, schema] of Object.entries<Record<string, unknown>>(spec['components']['schemas'])) {
    t.ok(Array.isArray(schema['examples']) && (schema['examples'] as unknown[]).length > 0, `schema ${name} has examples`)
  }
  for (const [name, body] of Object.entries<any>(spec['components']['requestBodies'])) {
    t.ok(spec['components']['schemas'][body.content['application/json'].schema.$ref.split('/').pop()].examples, `request body ${name} has an example`)
  }
})

t.test('every string in openapi.yaml has a maxLength or an enum, so no input is unbounded', async t => {
  const unbounded: string[] = []
  const visit = (node: unknown, where: string): void => {
    if (node === null || typeof node !== 'object') return
    const schema = node as Record<string, unknown>
    const types = [schema['type']].flat()
    // An event stream is unbounded by nature: what bounds it is each frame's event (x-event-schema).
    const stream = where.includes('/text/event-stream/')
    if (types.includes('string') && typeof schema['maxLength'] !== 'number' && !Array.isArray(schema['enum']) && !stream) unbounded.push(where)
    for (const [key, value] of Object.entries(schema)) {
      if (key !== 'examples' && key !== 'example') visit(value, `${where}/${key}`)
    }
  }
  visit(spec, '#')
  t.same(unbounded, [])
})
