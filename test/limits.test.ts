// Abuse limits and browser protections: rate limits with draft-11 fields, security headers, CORS.
import t from 'tap'
import { createKey } from '../src/access/api-keys.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { spec } from './contract.js'
import { build, dune } from './helper.js'

t.test('every response carries RateLimit-Policy and RateLimit; keyed and anonymous callers have their own quotas', async t => {
  const { app, request } = await build(t, { rateLimit: { requests: 5, seconds: 60 }, rateLimitAnonymous: { requests: 3, seconds: 30 } })
  const keyed = await request({ method: 'GET', url: '/books' })
  t.equal(keyed.headers['ratelimit-policy'], '"keyed";q=5;w=60')
  t.equal(keyed.headers['ratelimit'], '"keyed";r=4;t=60')
  const anonymous = await request({ method: 'GET', url: '/books', key: null })
  t.equal(anonymous.headers['ratelimit-policy'], '"anonymous";q=3;w=30')
  t.equal(anonymous.headers['ratelimit'], '"anonymous";r=2;t=30')
  for (const [method, url] of [['GET', '/nowhere'], ['POST', '/api/students']] as const) {
    const res = await request({ method, url })
    t.match(res.headers['ratelimit'], /^"keyed";r=\d+;t=\d+$/, `${method} ${url} → ${res.statusCode}`)
  }
  t.match((await app.inject({ method: 'GET', url: '/docs/json' })).headers['ratelimit'], /^"anonymous";r=\d+;t=\d+$/, 'the docs count too')
  await t.resolves(app.rateLimitStore.probe(), 'without REDIS_URL the counters are in memory, always ready')
})

t.test('304, 412 and 422 carry RateLimit-Policy and RateLimit too, and the contract declares them there', async t => {
  const { request } = await build(t)
  const created = await request({ method: 'POST', url: '/books', payload: dune, headers: { 'idempotency-key': 'limits-304-412-422' } })
  const url = String(created.headers.location)
  const answers = {
    304: await request({ method: 'GET', url, headers: { 'if-none-match': String(created.headers.etag) } }),
    412: await request({ method: 'PUT', url, payload: dune, headers: { 'if-match': '"0"' } }),
    422: await request({ method: 'POST', url: '/books', payload: { ...dune, title: 'Other' }, headers: { 'idempotency-key': 'limits-304-412-422' } })
  }
  const responses = spec['components']['responses']
  const declared = { 304: responses.NotModified, 412: responses.PreconditionFailed, 422: responses.IdempotencyKeyReused }
  for (const [status, res] of Object.entries(answers)) {
    t.equal(res.statusCode, Number(status))
    t.match(res.headers, { 'ratelimit-policy': /^"keyed";q=\d+;w=\d+$/, ratelimit: /^"keyed";r=\d+;t=\d+$/ }, `the ${status} carries both fields`)
    t.match(Object.keys(declared[status as unknown as keyof typeof declared].headers), ['RateLimit-Policy', 'RateLimit'], `the contract declares them on the ${status}`)
  }
})

t.test('an exhausted quota answers 429 with Retry-After and a quota-exceeded problem; other callers go on', async t => {
  const repositories = openSqliteRepositories(':memory:')
  const { request } = await build(t, { rateLimit: { requests: 3, seconds: 60 }, rateLimitAnonymous: { requests: 2, seconds: 10 } }, { repositories })
  const other = (await createKey(repositories.apiKeys, 'other', ['books:read'])).key
  for (let i = 0; i < 2; i++) t.equal((await request({ method: 'GET', url: '/books', key: null })).statusCode, 200)
  const refused = await request({ method: 'GET', url: '/books', key: null })
  t.equal(refused.statusCode, 429)
  t.equal(refused.headers['retry-after'], '10')
  t.equal(refused.headers['ratelimit'], '"anonymous";r=0;t=10')
  t.match(refused.json(), {
    type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
    status: 429,
    'violated-policies': ['anonymous']
  })
  t.equal((await request({ method: 'GET', url: '/books', key: 'bsk_guess' })).statusCode, 429, 'a wrong key counts against the address, so guessing keys is throttled too')
  for (let i = 0; i < 3; i++) t.equal((await request({ method: 'POST', url: '/books', payload: { ...dune, isbn: null, title: `Dune ${i}` } })).statusCode, 201)
  t.equal((await request({ method: 'POST', url: '/books', payload: dune })).statusCode, 429, 'the admin key has used its quota')
  t.equal((await request({ method: 'GET', url: '/books', key: other })).statusCode, 200, 'another key has its own')
  t.equal((await request({ method: 'POST', url: '/api/students', key: null, payload: {} })).statusCode, 429, 'the limit comes before authentication')
})

t.test('a quota comes back when its window ends', async t => {
  let now = 1_000_000
  const { request } = await build(t, { rateLimitAnonymous: { requests: 1, seconds: 10 } }, { clock: () => now })
  t.equal((await request({ method: 'GET', url: '/books', key: null })).statusCode, 200)
  now += 4_500
  const refused = await request({ method: 'GET', url: '/books', key: null })
  t.equal(refused.statusCode, 429)
  t.equal(refused.headers['retry-after'], '6', 'seconds left, rounded up')
  now += 5_500
  t.equal((await request({ method: 'GET', url: '/books', key: null })).statusCode, 200)
  now += 120_000
  const later = await request({ method: 'GET', url: '/books', key: null })
  t.equal(later.headers['ratelimit'], '"anonymous";r=0;t=10', 'old windows are swept, a new one starts')
})

t.test('security headers on every response (OWASP\'s set for an API, helmet\'s for the Swagger UI page); a strict CSP except for Swagger UI; no X-Powered-By', async t => {
  const { app, request } = await build(t)
  for (const url of ['/books', '/nowhere', '/api/students']) {
    const res = await request({ method: 'GET', url })
    t.equal(res.headers['x-content-type-options'], 'nosniff', url)
    t.equal(res.headers['content-security-policy'], "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'", url)
    t.equal(res.headers['x-frame-options'], 'DENY', url)
    t.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', url)
    t.equal(res.headers['x-powered-by'], undefined, url)
    t.equal(res.headers['x-xss-protection'], undefined, 'document-only headers are left off JSON answers')
  }
  const docs = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(docs.statusCode, 200)
  t.match(docs.headers, { 'x-content-type-options': 'nosniff', 'cross-origin-opener-policy': 'same-origin', 'referrer-policy': 'no-referrer', 'x-frame-options': 'SAMEORIGIN' }, 'the page gets helmet\'s set')
  const csp = String(docs.headers['content-security-policy'])
  t.match(csp, /default-src 'self'/, 'Swagger UI may load its own scripts and styles')
  t.match(csp, /object-src 'none'/)
  t.notMatch(csp, /upgrade-insecure-requests/, 'and works on plain http')
  t.notMatch(csp, /unsafe-inline|unsafe-eval/)
})

t.test('CORS is off by default: no Access-Control headers for any origin', async t => {
  const { app, request } = await build(t)
  const res = await request({ method: 'GET', url: '/books', headers: { origin: 'https://evil.example' } })
  t.equal(res.headers['access-control-allow-origin'], undefined)
  const preflight = await app.inject({ method: 'OPTIONS', url: '/books', headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST' } })
  t.equal(preflight.statusCode, 405)
  t.equal(preflight.headers['access-control-allow-origin'], undefined)
})

t.test('CORS_ORIGINS allows exactly the listed origins, with the headers a client needs', async t => {
  const { app, request } = await build(t, { corsOrigins: ['https://app.example.org'] })
  const allowed = await request({ method: 'GET', url: '/books', headers: { origin: 'https://app.example.org' } })
  t.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.org')
  t.match(allowed.headers['access-control-expose-headers'], /ratelimit/)
  const other = await request({ method: 'GET', url: '/books', headers: { origin: 'https://evil.example' } })
  t.equal(other.headers['access-control-allow-origin'], undefined)
  // A preflight is answered by the CORS plugin, outside the contract's operations.
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/api/students',
    headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' }
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.org')
  t.match(preflight.headers['access-control-allow-headers'], /authorization/)
})

t.test('page size and string lengths are bounded by the contract', async t => {
  const { request } = await build(t)
  t.equal((await request({ method: 'GET', url: '/books?limit=101' })).statusCode, 400)
  t.equal((await request({ method: 'POST', url: '/books', payload: { ...dune, title: 'x'.repeat(501) } })).statusCode, 400)
  t.equal((await request({ method: 'POST', url: '/api/students', payload: { name: 'x'.repeat(201), email: 'a@example.org' } })).statusCode, 400)
})
