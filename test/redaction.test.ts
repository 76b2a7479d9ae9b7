// No log line ever holds an API key, an Authorization header or a secret, wherever a request puts one.
import fc from 'fast-check'
import t from 'tap'
import { createKey } from '../src/access/api-keys.js'
import { urlRedactor } from '../src/observability/log-redaction.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { adminKey, build } from './helper.js'
import { start, stop } from './process.js'

const metricsToken = 'metrics-token-secret-0123456789'

t.test('requests carrying credentials anywhere (headers, query, path, cookie, body) leave none in the log, even at trace level', async t => {
  const lines: string[] = []
  const repositories = openSqliteRepositories(':memory:')
  const { key: apiKey } = await createKey(repositories.apiKeys, 'reader', ['books:read'])
  const { key: revoked, key_id: keyId } = await createKey(repositories.apiKeys, 'gone', ['books:read'])
  await repositories.apiKeys.revoke(keyId)
  const { app } = await build(t, { logLevel: 'trace', metricsToken, opsPort: 'public' }, {
    repositories,
    logStream: { write: (line: string) => { lines.push(line) } }
  })
  const secrets = [adminKey, apiKey, revoked, metricsToken]
  // A failing read, so that the error path's log line is among those checked.
  const get = repositories.books.get.bind(repositories.books)
  repositories.books.get = async id => id.startsWith('0000') ? Promise.reject(new Error('storage failed')) : get(id)

  const placements = fc.record({
    secret: fc.constantFrom(...secrets),
    where: fc.constantFrom('bearer', 'basic', 'raw-authorization', 'x-api-key', 'cookie', 'query-named', 'query-other', 'path', 'body', 'metrics'),
    path: fc.constantFrom('/books', '/books/00000000-0000-4000-8000-000000000000', '/api/students', '/nowhere', '/metrics', '/health/ready'),
    parameter: fc.constantFrom('api_key', 'access_token', 'key', 'token', 'apiKey', 'Authorization', 'q', 'cursor', 'x'),
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE')
  })
  await fc.assert(fc.asyncProperty(placements, async ({ secret, where, path, parameter, method }) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    let url: string = path
    let payload: string | undefined
    switch (where) {
      case 'bearer': headers.authorization = `Bearer ${secret}`; break
      case 'basic': headers.authorization = `Basic ${Buffer.from(`user:${secret}`).toString('base64')}`; break
      case 'raw-authorization': headers.authorization = secret; break
      case 'x-api-key': headers['x-api-key'] = secret; break
      case 'cookie': headers.cookie = `session=${secret}`; break
      case 'query-named': url = `${path}?${parameter}=${encodeURIComponent(secret)}&limit=5`; break
      case 'query-other': url = `${path}?limit=5&${parameter}=${secret}`; break
      case 'path': url = `/books/${secret}`; break
      case 'body': payload = JSON.stringify({ title: secret, author: secret }); break
      case 'metrics': url = '/metrics'; headers.authorization = `Bearer ${secret}`; break
    }
    await app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined && method !== 'GET' && { payload }) })
  }), { numRuns: 400, seed: 1 })
  await app.close()
  const log = lines.join('')
  t.ok(log.includes('"request completed"'), 'requests were logged')
  t.ok(log.includes('"request failed"'), 'the error path was taken and logged')
  t.ok(log.includes('[redacted]'), 'credentials were met and masked')
  for (const secret of secrets) t.notOk(log.includes(secret), `no line holds ${secret.slice(0, 8)}…`)
  t.notOk(/"authorization"/i.test(log), 'no Authorization header is ever logged')
})

/** `text` with each character written as itself or percent-encoded (hex in upper or lower case), as `spelling` says. */
function spelt (text: string, spelling: readonly number[]): string {
  return [...text].map((char, i) => {
    const hex = char.charCodeAt(0).toString(16).padStart(2, '0')
    return [char, `%${hex.toUpperCase()}`, `%${hex.toLowerCase()}`][spelling[i]!]
  }).join('')
}

/** What the server reads from percent-encoded ASCII text. */
const decodedAscii = (text: string) => text.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

t.test('a credential percent-encoded any way, in the path or the query, is in no log line and in no problem it causes', async t => {
  const lines: string[] = []
  const repositories = openSqliteRepositories(':memory:')
  const { key: apiKey } = await createKey(repositories.apiKeys, 'reader', ['books:read'])
  const { app } = await build(t, { logLevel: 'info', metricsToken, opsPort: 'public', rateLimitAnonymous: { requests: 10_000, seconds: 60 } }, {
    repositories,
    logStream: { write: (line: string) => { lines.push(line) } }
  })
  const secrets = [adminKey, apiKey, metricsToken]
  const placed = fc.constantFrom(...secrets).chain(secret => fc.record({
    secret: fc.constant(secret),
    spelling: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: secret.length, maxLength: secret.length }),
    where: fc.constantFrom('record', 'nowhere', 'problem-type', 'query-named', 'query-encoded-name', 'query-other', 'query-name')
  }))
  const responses: string[] = []
  const statuses = new Set<number>()
  await fc.assert(fc.asyncProperty(placed, async ({ secret, spelling, where }) => {
    const sent = spelt(secret, spelling)
    const url = {
      record: `/books/${sent}`,
      nowhere: `/nowhere/${sent}/x`,
      'problem-type': `/problems/${sent}`,
      'query-named': `/books?limit=5&api_key=${sent}`,
      'query-encoded-name': `/books?api%5Fkey=${sent}&limit=x`,
      'query-other': `/books?q=${sent}&limit=x`,
      'query-name': `/books?${sent}=1`
    }[where]
    const response = await app.inject({ url })
    responses.push(response.body)
    statuses.add(response.statusCode)
    // The answer echoes no credential.
    return !decodedAscii(response.body).includes(secret)
  }), { numRuns: 300, seed: 2 })
  t.same([...statuses].sort(), [400, 404], 'refused and not found: answers that echo the request')
  await app.close()
  const log = lines.join('')
  t.ok(log.includes('[redacted]'), 'credentials were met and masked in the log')
  t.ok(responses.some(body => body.includes('[redacted]')), 'and in the answers')
  for (const secret of secrets) t.notOk(decodedAscii(log).includes(secret), `no line holds ${secret.slice(0, 8)}…, however it was spelt`)
})

t.test('the URL redactor keeps what is not a credential', async t => {
  const redact = urlRedactor(['operator-secret-value', ''])
  t.equal(redact('/books?limit=5&cursor=abc'), '/books?limit=5&cursor=abc')
  t.equal(redact('/books?api_key=x&limit=5'), '/books?api_key=[redacted]&limit=5')
  t.equal(redact('/books?limit=5&ACCESS_TOKEN=abc#frag'), '/books?limit=5&ACCESS_TOKEN=[redacted]#frag')
  t.equal(redact('/books/bsk_0123456789abcdef_secret-part?x=1'), '/books/[redacted]?x=1')
  t.equal(redact('/books/operator-secret-value'), '/books/[redacted]')
  t.equal(redact('/books/operator%2Dsecret%2dvalue'), '/books/[redacted]', 'the operator\'s secret, percent-encoded')
  t.equal(redact('/books/bsk%5F0123456789abcdef%5fsecret-part?x=1'), '/books/[redacted]?x=1', 'a key, percent-encoded')
  t.equal(redact('/books?api%5Fkey=x&limit=5&%ZZ=1'), '/books?api%5Fkey=[redacted]&limit=5&%ZZ=1', 'a parameter named in escapes; a malformed one kept as sent')
  t.equal(redact('/books?q=caf%C3%A9&limit=5'), '/books?q=caf%C3%A9&limit=5', 'other escapes are kept')
  t.equal(redact('/books?author=Herbert&limit=500'), '/books?author=Herbert&limit=500', 'an author is no credential')
  t.equal(redact('/books?oauth_token=x&Authorization=y'), '/books?oauth_token=[redacted]&Authorization=[redacted]')
})

t.test('the process logs no secret from its settings, at start or when it cannot connect', async t => {
  const running = await start({ LOG_LEVEL: 'trace', DATABASE_PATH: ':memory:', METRICS_TOKEN: metricsToken, REDIS_URL: 'redis://:redis-password-1234@127.0.0.1:1', REDIS_TIMEOUT_MS: '50' })
  await fetch(`${running.origin}/books?api_key=${adminKey}`, { headers: { authorization: `Bearer ${adminKey}` } })
  await fetch(`${running.opsOrigin!}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
  t.equal(await stop(running, 'SIGTERM'), 0)
  const output = running.output()
  t.match(output, /Redis at REDIS_URL redis:\/\/:\*\*\*@127\.0\.0\.1:1/, 'Redis\'s failure is logged with the password masked')
  for (const secret of [adminKey, metricsToken, 'redis-password-1234']) t.notOk(output.includes(secret), `no ${secret.slice(0, 8)}… in the output`)
})
