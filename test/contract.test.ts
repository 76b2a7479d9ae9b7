// The served contract: docs endpoints serve openapi.yaml (naming the server first), and routes and operations match one to one.
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { parse } from 'yaml'
import { listeningUrl, specPath, withServer } from '../src/contract/openapi-document.js'
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

// openapi.yaml as served: its own servers (but one of the same URL) follow the one the service is reached at.
const servedAt = (url: string, named = false): unknown => {
  const own = parse(readFileSync(specPath, 'utf8'))
  const description = named ? 'This server, as PUBLIC_URL names it' : 'This server, where it listens (behind a proxy, PUBLIC_URL names the URL clients reach)'
  return { ...own, servers: [{ url, description }, ...own.servers.filter((server: { url: string }) => server.url !== url)] }
}

t.test('GET /docs/json and /docs/yaml serve openapi.yaml, first naming the server they are reached at', async t => {
  const { app } = await build(t)
  const asJson = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(asJson.statusCode, 200)
  t.same(asJson.json(), servedAt('http://127.0.0.1:3000'), 'before listening: HOST and PORT')
  const asYaml = await app.inject({ method: 'GET', url: '/docs/yaml' })
  t.equal(asYaml.statusCode, 200)
  t.same(parse(asYaml.payload), servedAt('http://127.0.0.1:3000'))
  t.same(spec['servers'][0], { url: '{scheme}://{host}:{port}', description: spec['servers'][0].description, variables: { scheme: { default: 'http', enum: ['http', 'https'] }, host: { default: 'localhost' }, port: { default: '3000' } } },
    'openapi.yaml itself names an absolute, templated server first (a generated client\'s default base URL)')
})

t.test('the served document names PUBLIC_URL first, else the address the server listens on', async t => {
  const { app: proxied } = await build(t, { publicUrl: 'https://api.example.org/v2' })
  t.same((await proxied.inject({ method: 'GET', url: '/docs/json' })).json(), servedAt('https://api.example.org/v2', true))

  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const served = await fetch(`http://127.0.0.1:${port}/docs/json`).then(res => res.json())
  t.same(served, servedAt(`http://127.0.0.1:${port}`), 'the port it really listens on (PORT=0 picks one)')
  const again = await fetch(`http://127.0.0.1:${port}/docs/json`).then(res => res.json())
  t.same(again, served, 'the same on every request: the document is not changed in place')
})

t.test('listeningUrl names a wildcard address localhost and brackets IPv6', async t => {
  t.equal(listeningUrl({ address: '0.0.0.0', port: 3000 }), 'http://localhost:3000')
  t.equal(listeningUrl({ address: '::', port: 3000 }), 'http://localhost:3000')
  t.equal(listeningUrl({ address: '::1', port: 8080 }), 'http://[::1]:8080')
  t.equal(listeningUrl({ address: '192.0.2.7', port: 80 }), 'http://192.0.2.7:80')
})

t.test('withServer names the server first, beside a document\'s own servers or none', async t => {
  const bare = { openapi: '3.1.0', info: { version: '1.0.0' }, paths: {} }
  t.same(withServer(bare, { url: 'http://localhost:3000', named: false }).servers, [{ url: 'http://localhost:3000', description: 'This server, where it listens (behind a proxy, PUBLIC_URL names the URL clients reach)' }])
  t.same(bare, { openapi: '3.1.0', info: { version: '1.0.0' }, paths: {} }, 'the document itself is left as it was')
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
  t.equal(declared.length, 25 + 14, 'twenty-five operations (the nine of the specification, two of the feed, six for webhooks, four for imports, four exports), fourteen of them GETs with HEAD')
})

t.test('every operation reaches its own handler (none answers "not implemented")', async t => {
  const { request } = await build(t)
  const id = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'
  const calls = [
    ['GET', '/books'], ['POST', '/books'], ['GET', `/books/${id}`], ['PUT', `/books/${id}`], ['DELETE', `/books/${id}`],
    ['GET', '/api/students'], ['POST', '/api/students'], ['GET', `/api/students/${id}`], ['PUT', `/api/students/${id}`],
    ['GET', '/events'], ['GET', '/webhook-endpoints'], ['POST', '/webhook-endpoints'], ['GET', `/webhook-endpoints/${id}`],
    ['DELETE', `/webhook-endpoints/${id}`], ['POST', `/webhook-endpoints/${id}/secret`], ['POST', `/webhook-endpoints/${id}/enable`],
    ['GET', '/books/export.csv'], ['GET', '/books/export.ndjson'], ['GET', '/api/students/export.csv'], ['GET', '/api/students/export.ndjson']
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
    // An event stream is unbounded by nature: what bounds it is each frame's event (x-event-schema); a
    // file (an export, an import's upload) is bounded by its rows' schema and by IMPORT_MAX_BYTES.
    const stream = where.includes('/text/event-stream/') || where.includes('/text/csv/')
    // `format: binary` is a file too (an import's upload, an NDJSON export): bytes streamed whole, never
    // a string a validator reads, so a maxLength there would bound nothing; IMPORT_MAX_BYTES bounds the upload.
    const file = schema['format'] === 'binary'
    if (types.includes('string') && typeof schema['maxLength'] !== 'number' && !Array.isArray(schema['enum']) && !stream && !file) unbounded.push(where)
    for (const [key, value] of Object.entries(schema)) {
      if (key !== 'examples' && key !== 'example') visit(value, `${where}/${key}`)
    }
  }
  visit(spec, '#')
  t.same(unbounded, [])
})
