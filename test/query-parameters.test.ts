// Every query parameter of every operation, read from openapi.yaml: numbers as clients spell them, integer bounds, UTF-8.
import fc from 'fast-check'
import type { Response as InjectResponse } from 'light-my-request'
import t from 'tap'
import { contractProblems, resolve, spec } from './contract.js'
import { adminKey, build, type TestApi } from './helper.js'

type Json = Record<string, any>

interface QueryParameter {
  operationId: string
  method: string
  /** A path that reaches the operation (path parameters filled in). */
  path: string
  name: string
  schema: Json
  /** The operation answers an endless event stream when the request is valid. */
  streams: boolean
}

const someId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

const queryParameters: QueryParameter[] = Object.entries<Json>(spec['paths']).flatMap(([template, item]) =>
  ['get', 'put', 'post', 'delete'].filter(method => item[method] !== undefined).flatMap(method => {
    const operation = item[method]
    const parameters = [...item['parameters'] ?? [], ...operation['parameters'] ?? []].map((p: Json) => resolve(p, '').node)
    return parameters.filter(p => p['in'] === 'query').map(p => ({
      operationId: operation['operationId'],
      method: method.toUpperCase(),
      path: template.replace(/\{[^}]+\}/g, someId),
      name: p['name'],
      schema: resolve(p['schema'], '').node,
      streams: 'text/event-stream' in (operation['responses']['200']?.['content'] ?? {})
    }))
  }))
const integerParameters = queryParameters.filter(p => [p.schema['type']].flat().includes('integer'))

/** How people and tools write numbers, many of which JavaScript's Number() reads and a decimal integer is not. */
const numericSpellings = [
  'Infinity', '-Infinity', '+Infinity', 'NaN', '-NaN', '1e308', '1e309', '-1e309', '1e1', '1E1', '1e-1', '0x10', '0X1F', '0b1', '0o7', '010', '-0', '+0', '+10',
  ' 10', '10 ', '\t10', '10\n', '10.0', '10.', '.5', '10.5', '1_000', '1,000', '9007199254740993', '-9007199254740993', '1'.repeat(400), '-' + '9'.repeat(400),
  '1' + '0'.repeat(308), '٣', '１０', '', '-', '--1', '0.0000001', '5e-324', '1e+2', 'true', 'null', '[]', '{}'
]

async function send (api: TestApi, { method, path, streams }: QueryParameter, query: string): Promise<InjectResponse> {
  const url = `${path}?${query}`
  if (!streams) return api.request({ method, url })
  // A valid request opens a stream that never ends: its status is all that is looked at, and it is closed.
  const res = await api.app.inject({ method, url, headers: { authorization: `Bearer ${adminKey}` }, payloadAsStream: true })
  const stream = res.stream()
  if (res.statusCode === 200) {
    stream.destroy()
    return res
  }
  let body = ''
  for await (const chunk of stream) body += String(chunk)
  const answer = Object.assign(res, { body, payload: body, json: () => JSON.parse(body) })
  const problems = contractProblems(method, url, answer)
  if (problems.length > 0) throw new Error(`${method} ${url} → ${res.statusCode}: ${problems.join('; ')}`)
  return answer
}

/** The 400 problem names `name`; returns the details it gives for it. */
function detailsFor (res: InjectResponse, name: string): string[] {
  if (res.statusCode !== 400) return []
  return (res.json().errors as { parameter?: string, detail: string }[]).filter(e => e.parameter === name).map(e => e.detail)
}

const quotas = { rateLimit: { requests: 1e9, seconds: 60 }, rateLimitAnonymous: { requests: 1e9, seconds: 60 } }

t.test('the contract has query parameters, integers among them, and this file finds them all', async t => {
  t.ok(queryParameters.length >= 20, `${queryParameters.length} query parameters`)
  t.same([...new Set(integerParameters.map(p => p.name))].sort(), ['enrollment_year_max', 'enrollment_year_min', 'limit', 'published_year_max', 'published_year_min'])
  t.ok(queryParameters.some(p => p.streams), 'the event stream is among them')
})

t.test('every query parameter of every operation, spelt as numbers are spelt, never gets a 5xx', async t => {
  const api = await build(t, quotas)
  await api.request({ method: 'POST', url: '/books', payload: { title: 'Dune', author: 'Frank Herbert', published_year: 1965 } })
  await api.request({ method: 'POST', url: '/api/students', payload: { name: 'Ada Lovelace', email: 'ada@example.org', enrollment_year: 2025 } })
  for (const parameter of queryParameters) {
    const integer = integerParameters.includes(parameter)
    for (const spelling of numericSpellings) {
      const res = await send(api, parameter, `${encodeURIComponent(parameter.name)}=${encodeURIComponent(spelling)}`)
      if (res.statusCode >= 500) t.fail(`${parameter.method} ${parameter.path} ${parameter.name}=${JSON.stringify(spelling)} → ${res.statusCode} ${res.body}`)
      // An integer parameter takes decimal digits within its bounds, and nothing else.
      const decimal = /^-?[0-9]+$/.test(spelling) && Number(spelling) >= parameter.schema['minimum'] && Number(spelling) <= parameter.schema['maximum']
      if (integer && !decimal && detailsFor(res, parameter.name).length === 0) {
        t.fail(`${parameter.operationId} ${parameter.name}=${JSON.stringify(spelling)} → ${res.statusCode} ${res.body}: not a 400 naming ${parameter.name}`)
      }
    }
  }
  t.pass(`${queryParameters.length} parameters × ${numericSpellings.length} spellings`)
})

t.test('integer parameters, generated from their schemas: decimal digits within bounds are served; any other spelling or value is a 400 naming the parameter', async t => {
  const api = await build(t, quotas)
  for (const parameter of integerParameters) {
    const { minimum, maximum } = parameter.schema as { minimum: number, maximum: number }
    const at = (value: string): string => `${parameter.name}=${encodeURIComponent(value)}`
    const withinBounds = fc.integer({ min: minimum, max: maximum })
    // Leading zeros are still decimal digits.
    const decimal = fc.tuple(withinBounds, fc.nat({ max: 3 })).map(([n, zeros]) => `${n < 0 ? '-' : ''}${'0'.repeat(zeros)}${Math.abs(n)}`)
    await fc.assert(fc.asyncProperty(decimal, async value => {
      const res = await send(api, parameter, at(value))
      if (res.statusCode !== 200) throw new Error(`${parameter.operationId} ${parameter.name}=${value} → ${res.statusCode} ${res.body}`)
    }), { numRuns: 40 })

    const outOfBounds = fc.oneof(
      fc.integer({ min: maximum + 1 }).map(String), fc.integer({ max: minimum - 1 }).map(String),
      fc.stringMatching(/^[1-9][0-9]{15,400}$/), fc.stringMatching(/^-[1-9][0-9]{15,400}$/)
    )
    await fc.assert(fc.asyncProperty(outOfBounds, async value => {
      const res = await send(api, parameter, at(value))
      const expected = Number(value) < minimum ? `must be ${minimum} or more` : `must be ${maximum} or less`
      if (!detailsFor(res, parameter.name).includes(expected)) throw new Error(`${parameter.operationId} ${parameter.name}=${value} → ${res.statusCode} ${res.body}`)
    }), { numRuns: 40 })

    // A number within bounds, written in a way Number() reads but a decimal integer is not; or any other text.
    const misspelt = fc.oneof(
      withinBounds.chain(n => fc.constantFrom(` ${n}`, `${n} `, `+${n}`, `${n}.0`, `${n}.`, `${n}e0`, `${n / 10}e1`, `${n < 0 ? '-' : ''}0x${Math.abs(n).toString(16)}`, `${n}_`, `${n},0`, `\u00a0${n}`)),
      fc.string({ unit: 'binary', maxLength: 20 }).filter(text => !/^-?[0-9]+$/.test(text))
    )
    await fc.assert(fc.asyncProperty(misspelt, async value => {
      const res = await send(api, parameter, at(value))
      if (!detailsFor(res, parameter.name).some(detail => detail.includes('decimal digits'))) throw new Error(`${parameter.operationId} ${parameter.name}=${JSON.stringify(value)} → ${res.statusCode} ${res.body}`)
    }), { numRuns: 60 })
  }
  // A misspelt integer does not hide the other parameters' problems.
  const both = await api.request({ method: 'GET', url: '/books?limit=1e1&published_year_min=10000' })
  t.same(both.json().errors.map((e: { parameter: string }) => e.parameter), ['limit', 'published_year_min'])
})

t.test('a query name or value whose %-escapes are not UTF-8 is a 400 naming the parameter, for every query parameter of every operation', async t => {
  const api = await build(t, quotas)
  const notUtf8 = fc.uint8Array({ minLength: 1, maxLength: 8 })
    .filter(bytes => { try { new TextDecoder('utf-8', { fatal: true }).decode(bytes); return false } catch { return true } })
    .map(bytes => [...bytes].map(b => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join(''))
  const value = fc.tuple(fc.string({ maxLength: 5 }).map(encodeURIComponent), notUtf8, fc.string({ maxLength: 5 }).map(encodeURIComponent)).map(parts => parts.join(''))
  await fc.assert(fc.asyncProperty(fc.constantFrom(...queryParameters), fc.oneof(value, fc.constantFrom('%C3%28', '%ED%A0%80', '%FF', '%C0%AF', '%F4%90%80%80')), async (parameter, escaped) => {
    const res = await send(api, parameter, `${parameter.name}=${escaped}`)
    if (!detailsFor(res, parameter.name).some(detail => detail.includes('UTF-8'))) throw new Error(`${parameter.operationId} ${parameter.name}=${escaped} → ${res.statusCode} ${res.body}`)
  }), { numRuns: 300 })

  // A name that is not UTF-8 is named as sent, with a value or without.
  for (const query of ['%C3%28=1', '%C3%28']) {
    const badName = await api.request({ method: 'GET', url: `/books?${query}` })
    t.same(badName.json().errors, [{ parameter: '%C3%28', detail: 'is not valid UTF-8 once its %-escapes are decoded' }], query)
  }
  // Well-formed escapes, `+` and a `%` that starts no escape are text as before.
  for (const query of ['q=%C3%A9t%C3%A9', 'q=100%', 'q=50%+off', 'author=%F0%9F%98%80']) {
    t.equal((await api.request({ method: 'GET', url: `/books?${query}` })).statusCode, 200, query)
  }
})

t.test('an unknown event type is a 400 that names the types the contract knows', async t => {
  const api = await build(t)
  const known: string[] = spec['components']['schemas']['EventType']['x-extensible-enum']
  for (const url of ['/events?types=book.exploded', '/events?types=book.created,book.exploded', '/events/stream?types=book.exploded']) {
    const res = await send(api, queryParameters.find(p => url.startsWith(`${p.path}?`) && p.name === 'types')!, url.split('?')[1]!)
    t.equal(res.statusCode, 400, url)
    const [detail] = detailsFor(res, 'types')
    t.ok(known.every(type => detail?.includes(type)), `${url}: ${detail}`)
  }
})
