// Tracing: a span per request with its storage calls as children, the caller's traceparent continued, spans exported, and the trace id in the request's log line.
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { diag, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import t, { type Test } from 'tap'
import { createKey } from '../src/access/api-keys.js'
import { loadConfig, type TracingConfig } from '../src/config/index.js'
import { openConfiguredRepositories } from '../src/storage/open.js'
import type { Repositories } from '../src/storage/types.js'
import { startTracing } from '../src/observability/tracing.js'
import { adminKey, build, dune, testEngine } from './helper.js'
import { testDatabase } from './postgres.js'
import { start, stop } from './process.js'

const dbSystem = testEngine === 'postgres' ? 'postgresql' : 'sqlite'
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

// The W3C Trace Context specification's own example: a caller's span in a sampled trace.
const callerTrace = '0af7651916cd43dd8448eb211c80319c'
const callerSpan = 'b7ad6b7169203331'
const traceparent = `00-${callerTrace}-${callerSpan}-01`
const missingBook = '/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

/** A provider that keeps every finished span in memory, as it ends. */
function recorder () {
  const exporter = new InMemorySpanExporter()
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) }
}

const serverSpans = (spans: ReadableSpan[]) => spans.filter(span => span.kind === SpanKind.SERVER)
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter(span => span.parentSpanContext?.spanId === parent.spanContext().spanId)

/** The engine's repositories on a fresh database, for a test that needs them itself (to make an API key). */
async function freshStorage (t: Test): Promise<Repositories> {
  return openConfiguredRepositories(loadConfig({}, testEngine === 'postgres' ? { postgresUrl: await testDatabase(t), recordCacheSize: 0 } : { databasePath: ':memory:' }))
}

/** A log stream that keeps the request lines ("request completed"), parsed. */
function requestLines () {
  let text = ''
  return {
    stream: { write (lines: string) { text += lines } },
    async lines (): Promise<Record<string, unknown>[]> {
      // The lines of a turn are written at its end.
      await nextTurn()
      return text.split('\n').filter(line => line !== '').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line['msg'] === 'request completed')
    }
  }
}

t.test('GET /books/{book_id} and POST /books: one server span per request, its storage calls its children', async t => {
  const { exporter, provider } = recorder()
  const repositories = await freshStorage(t)
  const { key } = await createKey(repositories.apiKeys, 'writer', ['books:read', 'books:write'])
  const { request } = await build(t, {}, { repositories, tracerProvider: provider })
  const created = await request({ method: 'POST', url: '/books', payload: dune, key, headers: { 'idempotency-key': 'first-dune' } })
  t.equal(created.statusCode, 201)
  const id = (created.json() as { book_id: string }).book_id
  t.equal((await request({ method: 'GET', url: `/books/${id}`, key })).statusCode, 200)

  const spans = exporter.getFinishedSpans()
  const servers = serverSpans(spans)
  t.same(servers.map(span => span.name), ['POST /books', 'GET /books/:book_id'], 'one server span per request, named by method and route template')
  const [post, get] = servers as [ReadableSpan, ReadableSpan]
  t.match(post.attributes, { 'http.request.method': 'POST', 'http.route': '/books', 'http.response.status_code': 201 })
  t.match(get.attributes, { 'http.request.method': 'GET', 'http.route': '/books/:book_id', 'http.response.status_code': 200 })
  t.not(post.spanContext().traceId, get.spanContext().traceId, 'each request without a traceparent starts a trace of its own')
  for (const server of servers) t.equal(server.parentSpanContext, undefined, `${server.name} has no parent`)

  t.same(childrenOf(spans, post).map(span => span.name), ['apiKeys.find', 'idempotency.find', 'books.create'], 'POST: the key, the idempotency key, the write')
  t.same(childrenOf(spans, get).map(span => span.name), ['apiKeys.find', 'books.get'], 'GET: the key, the read')
  const storage = [...childrenOf(spans, post), ...childrenOf(spans, get)]
  t.equal(spans.length, servers.length + storage.length, 'and nothing else: no span per hook or handler')
  for (const span of storage) {
    const parent = span.parentSpanContext?.spanId === post.spanContext().spanId ? post : get
    t.equal(span.spanContext().traceId, parent.spanContext().traceId, `${span.name} is in its request's trace`)
    t.equal(span.kind, SpanKind.INTERNAL)
    t.same(span.attributes, { 'db.system.name': dbSystem })
    t.equal(span.status.code, SpanStatusCode.UNSET)
  }
  t.notOk(spans.some(span => span.name.includes(id) || span.name.includes(key)), 'no span name holds an id or a key')
})

t.test('a credential in the URL, percent-encoded or not, is masked in the span\'s url.path as in the log', async t => {
  const { exporter, provider } = recorder()
  const { app } = await build(t, {}, { tracerProvider: provider })
  const key = 'bsk_0123456789abcdef_' + 'k'.repeat(43)
  await app.inject({ url: `/books?api_key=${encodeURIComponent(adminKey)}&limit=5` })
  await app.inject({ url: `/nowhere/${key.replace('_', '%5F')}?limit=5` })
  const paths = serverSpans(exporter.getFinishedSpans()).map(span => span.attributes['url.path'])
  t.same(paths, ['/books?api_key=[redacted]&limit=5', '/nowhere/[redacted]?limit=5'])
})

t.test('a path no route matches: its span is named by the method alone, never by the path', async t => {
  const { exporter, provider } = recorder()
  const { request } = await build(t, {}, { tracerProvider: provider })
  t.equal((await request({ method: 'GET', url: '/nowhere/0190a5d2' })).statusCode, 404)
  t.match(serverSpans(exporter.getFinishedSpans()), [{ name: 'GET', attributes: { 'http.response.status_code': 404 } }])
})

t.test('a request body that arrives after the headers still has its storage calls in the request\'s trace', async t => {
  const { exporter, provider } = recorder()
  const { app } = await build(t, {}, { tracerProvider: provider })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const body = JSON.stringify(dune)
  const status = await new Promise<number | undefined>((resolve, reject) => {
    const request = httpRequest({
      host: '127.0.0.1',
      port: (app.server.address() as AddressInfo).port,
      method: 'POST',
      path: '/books',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${adminKey}` }
    }, response => resolve(response.statusCode))
    request.on('error', reject)
    request.flushHeaders()
    // The body only once the server has begun the request (and its span), in two writes apart.
    app.server.once('request', () => {
      request.write(body.slice(0, 10))
      setTimeout(() => request.end(body.slice(10)), 20)
    })
  })
  t.equal(status, 201)
  const [post] = serverSpans(exporter.getFinishedSpans())
  t.same(childrenOf(exporter.getFinishedSpans(), post!).map(span => span.name), ['books.create'])
})

/** traceparent headers, and whether the specification makes them a caller's trace to continue. */
const traceparents: [header: string, valid: boolean][] = [
  [traceparent, true],
  // A later version may add fields after a '-'; a reader takes the ones it knows.
  [`cc-${callerTrace}-${callerSpan}-01-what-the-future-will-be-like`, true],
  [`ff-${callerTrace}-${callerSpan}-01`, false],
  [`00-${'0'.repeat(32)}-${callerSpan}-01`, false],
  [`00-${callerTrace}-${'0'.repeat(16)}-01`, false],
  [`00-${callerTrace.toUpperCase()}-${callerSpan}-01`, false],
  [`00-${callerTrace}-${callerSpan}-01-extra`, false],
  [`cc-${callerTrace}-${callerSpan}-01x`, false],
  [`00-${callerTrace}-${callerSpan}`, false],
  [`00-${callerTrace.slice(1)}-${callerSpan}-01`, false],
  ['tracing', false]
]

t.test('a valid traceparent is continued: the same trace, the request span the caller\'s span\'s child; any other starts a new trace', async t => {
  const { exporter, provider } = recorder()
  const { request } = await build(t, {}, { tracerProvider: provider })
  for (const [header, valid] of traceparents) {
    exporter.reset()
    t.equal((await request({ method: 'GET', url: missingBook, headers: { traceparent: header } })).statusCode, 404)
    const spans = exporter.getFinishedSpans()
    const [server] = serverSpans(spans) as [ReadableSpan]
    if (valid) {
      t.equal(server.spanContext().traceId, callerTrace, `${header}: the caller's trace`)
      t.match(server.parentSpanContext, { spanId: callerSpan, isRemote: true }, 'the request span is the caller\'s span\'s child')
    } else {
      t.not(server.spanContext().traceId, callerTrace, `${header}: a new trace`)
      t.equal(server.parentSpanContext, undefined, 'with no parent')
    }
    t.same(childrenOf(spans, server).map(span => [span.name, span.spanContext().traceId]), [['books.get', server.spanContext().traceId]])
  }
})

t.test('a caller\'s decision not to sample its trace is followed: nothing is recorded', async t => {
  const { exporter, provider } = recorder()
  const { request } = await build(t, {}, { tracerProvider: provider })
  t.equal((await request({ method: 'GET', url: missingBook, headers: { traceparent: `00-${callerTrace}-${callerSpan}-00` } })).statusCode, 404)
  t.same(exporter.getFinishedSpans(), [])
})

t.test('a failing storage call is recorded on its span, and the 500 on the request span', async t => {
  const { exporter, provider } = recorder()
  const repositories = await freshStorage(t)
  // Every read of a book fails, as on a broken disk or a lost database.
  const books = new Proxy(repositories.books, {
    get: (target, name, receiver) => name === 'get' ? async () => { throw new Error('disk I/O error') } : Reflect.get(target, name, receiver)
  })
  const { request } = await build(t, {}, { repositories: { ...repositories, books }, tracerProvider: provider })
  t.equal((await request({ method: 'GET', url: missingBook })).statusCode, 500)
  const spans = exporter.getFinishedSpans()
  const [server] = serverSpans(spans) as [ReadableSpan]
  const [read] = childrenOf(spans, server)
  t.match(read, { name: 'books.get', status: { code: SpanStatusCode.ERROR, message: 'disk I/O error' } })
  t.match(read?.events, [{ name: 'exception', attributes: { 'exception.type': 'Error', 'exception.message': 'disk I/O error' } }], 'with the exception')
  t.match(server, { status: { code: SpanStatusCode.ERROR }, attributes: { 'http.response.status_code': 500 } })
})

t.test('the request\'s log line names its trace, with tracing on or off', async t => {
  t.test('on: the request span\'s trace, which is the caller\'s when it sent a valid traceparent', async t => {
    const { exporter, provider } = recorder()
    const log = requestLines()
    const { request } = await build(t, { logLevel: 'info' }, { tracerProvider: provider, logStream: log.stream })
    for (const [header] of traceparents) await request({ method: 'GET', url: missingBook, headers: { traceparent: header } })
    await request({ method: 'GET', url: missingBook })
    const traces = serverSpans(exporter.getFinishedSpans()).map(span => span.spanContext().traceId)
    t.same((await log.lines()).map(line => line['traceId']), traces)
    t.equal(traces[0], callerTrace)
  })

  t.test('off: the caller\'s trace when it sent a valid traceparent, else none', async t => {
    const log = requestLines()
    const { request } = await build(t, { logLevel: 'info' }, { logStream: log.stream })
    for (const [header] of traceparents) await request({ method: 'GET', url: missingBook, headers: { traceparent: header } })
    await request({ method: 'GET', url: missingBook })
    const lines = await log.lines()
    t.same(lines.map(line => line['traceId']), [...traceparents.map(([, valid]) => valid ? callerTrace : undefined), undefined])
    t.notOk(Object.hasOwn(lines.at(-1)!, 'traceId'), 'no field at all, rather than an empty one')
    t.match(lines[0], { reqId: String, traceId: callerTrace, method: 'GET', url: missingBook, statusCode: 404, msg: 'request completed' }, 'beside the request id')
  })
})

/** A local OTLP/HTTP receiver that keeps what is posted to it; `answer` replies (by default 200, as a collector does). */
async function collector (t: Test, answer: (response: ServerResponse) => void = response => response.writeHead(200, { 'content-type': 'application/json' }).end('{}')) {
  const received: { method: string, url: string, type: string, body: string }[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', chunk => { body += chunk }).on('end', () => {
      received.push({ method: request.method!, url: request.url!, type: request.headers['content-type']!, body })
      answer(response)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, received }
}

interface OtlpValue { stringValue?: string, intValue?: number }
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string, value: OtlpValue }[] }
    scopeSpans: { spans: { name: string, traceId: string, parentSpanId?: string }[] }[]
  }[]
}
const attributeMap = (attributes: { key: string, value: OtlpValue }[]) => Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue ?? value.intValue]))

const tracingConfig = (overrides: Partial<TracingConfig>): TracingConfig => ({
  serviceName: 'books-students-api',
  resourceAttributes: {},
  otlpEndpoint: null,
  console: false,
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
  ...overrides
})

t.test('startTracing: spans leave by OTLP over HTTP for the configured endpoint, with the service\'s name and version, at the latest at shutdown', async t => {
  const { endpoint, received } = await collector(t)
  const tracing = startTracing(tracingConfig({ serviceName: 'shelf', resourceAttributes: { 'deployment.environment.name': 'test' }, otlpEndpoint: endpoint }))
  const { request } = await build(t, {}, { tracerProvider: tracing.provider })
  await request({ method: 'GET', url: missingBook, headers: { traceparent } })
  await tracing.shutdown()
  t.match(received, [{ method: 'POST', url: '/v1/traces', type: 'application/json' }])
  const exported = JSON.parse(received[0]!.body) as OtlpExport
  const [resourceSpans] = exported.resourceSpans
  t.match(attributeMap(resourceSpans!.resource.attributes), { 'service.name': 'shelf', 'service.version': version, 'deployment.environment.name': 'test' })
  const spans = resourceSpans!.scopeSpans.flatMap(scope => scope.spans)
  t.same(spans.map(span => span.name).sort(), ['GET /books/:book_id', 'books.get'])
  t.ok(spans.every(span => span.traceId === callerTrace), 'in the caller\'s trace')
})

t.test('startTracing: a collector that refuses the spans, or never answers, costs a warning, not the exit', async t => {
  t.teardown(() => diag.disable())
  const warnings: string[] = []
  const log = { warn (message: string) { warnings.push(message) } }

  const refusing = await collector(t, response => response.writeHead(400).end())
  const unheard = startTracing(tracingConfig({ otlpEndpoint: refusing.endpoint }))
  unheard.provider.getTracer('test').startSpan('refused').end()
  await t.resolves(unheard.shutdown(), 'with no log to tell, shutdown still resolves')
  const refused = startTracing(tracingConfig({ otlpEndpoint: refusing.endpoint }))
  refused.logTo(log)
  refused.provider.getTracer('test').startSpan('refused').end()
  await refused.shutdown()
  t.equal(refusing.received.length, 2)
  t.match(warnings, [/^OpenTelemetry: the last spans were not exported: /])

  warnings.length = 0
  const silent = await collector(t, () => {})
  const hung = startTracing(tracingConfig({ otlpEndpoint: silent.endpoint }))
  hung.logTo(log)
  hung.provider.getTracer('test').startSpan('never answered').end()
  await hung.shutdown()
  t.same(warnings, ['OpenTelemetry: the last spans were not exported within 2000 ms'])
})

t.test('startTracing: console prints each span as it ends', async t => {
  const printed = t.capture(console, 'dir')
  const tracing = startTracing(tracingConfig({ console: true }))
  tracing.provider.getTracer('test').startSpan('printed').end()
  t.match(printed(), [{ args: [{ name: 'printed', traceId: /^[\da-f]{32}$/ }] }])
  await tracing.shutdown()
})

t.test('startTracing: the configured sampler decides which traces are recorded', async t => {
  const sampledParent = trace.setSpanContext(ROOT_CONTEXT, { traceId: callerTrace, spanId: callerSpan, traceFlags: TraceFlags.SAMPLED, isRemote: true })
  const unsampledParent = trace.setSpanContext(ROOT_CONTEXT, { traceId: callerTrace, spanId: callerSpan, traceFlags: TraceFlags.NONE, isRemote: true })
  const cases: [Partial<TracingConfig>, root: boolean, sampled: boolean, unsampled: boolean][] = [
    [{}, true, true, false],
    [{ sampler: 'always_on' }, true, true, true],
    [{ sampler: 'always_off' }, false, false, false],
    [{ sampler: 'parentbased_always_off' }, false, true, false],
    [{ sampler: 'traceidratio', samplerRatio: 0 }, false, false, false],
    [{ sampler: 'traceidratio', samplerRatio: 1 }, true, true, true],
    [{ sampler: 'parentbased_traceidratio', samplerRatio: 0 }, false, true, false]
  ]
  for (const [config, root, sampled, unsampled] of cases) {
    const tracing = startTracing(tracingConfig(config))
    const tracer = tracing.provider.getTracer('test')
    t.same([root, sampled, unsampled], [
      tracer.startSpan('root').isRecording(),
      tracer.startSpan('child', {}, sampledParent).isRecording(),
      tracer.startSpan('child', {}, unsampledParent).isRecording()
    ], JSON.stringify(config))
    await tracing.shutdown()
  }
})

t.test('the server, configured by OTEL_* variables, exports its requests\' spans before it exits on SIGTERM', async t => {
  const { endpoint, received } = await collector(t)
  const running = await start({ DATABASE_PATH: ':memory:', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'shelf-under-test' })
  t.equal((await fetch(running.origin + missingBook, { headers: { traceparent } })).status, 404)
  t.equal(await stop(running, 'SIGTERM'), 0, 'exits 0')
  const spans = received.flatMap(({ body }) => (JSON.parse(body) as OtlpExport).resourceSpans.flatMap(resource =>
    resource.scopeSpans.flatMap(scope => scope.spans.map(span => ({ service: attributeMap(resource.resource.attributes)['service.name'], ...span })))))
  t.match(spans.filter(span => span.name === 'GET /books/:book_id'), [{ service: 'shelf-under-test', traceId: callerTrace, parentSpanId: callerSpan }])
})
