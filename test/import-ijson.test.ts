// NDJSON import rows as I-JSON (RFC 7493), on the test engine: a row a create would refuse for its JSON is refused, naming what and where.
import t from 'tap'
import { build, eventually, type TestApi } from './helper.js'

type Json = Record<string, any>

const ndjson = { 'content-type': 'application/x-ndjson' }

/** Starts an import and waits for its end. */
async function imported (api: TestApi, query: string, payload: string): Promise<Json> {
  const res = await api.request({ method: 'POST', url: `/imports?${query}`, headers: ndjson, payload })
  t.equal(res.statusCode, 202)
  const location = res.headers['location'] as string
  return eventually(async () => (await api.request({ url: location })).json(), job => !['receiving', 'running'].includes(job.state), `${location} ended`)
}

// The two rows of the research note (2026-11-28, L1): both were stored, the first as bytes that are not UTF-8.
const loneSurrogate = '{"title":"lone \\ud800 surrogate","author":"nd1"}'
const givenTwice = '{"title":"dup1","author":"nd2","title":"dup2"}'

t.test('POST /imports (ndjson): a lone surrogate or a member given twice refuses the row, in the words a create uses; the valid rows are written', async t => {
  const api = await build(t)
  const rows = [
    loneSurrogate,
    givenTwice,
    '{"title":"Dune","author":"Frank Herbert"}',
    '{"title":"Emma","author":"Jane Austen","nested":{"\\udc00":[1,{"a":1,"\\u0061":2}]}}',
    '{"title":"Persuasion","author":"Jane Austen","__proto__":{"admin":true}}',
    `{"title":"Deep","author":"A","x":${'['.repeat(100)}${']'.repeat(100)}}`
  ]
  const ended = await imported(api, 'collection=books&mode=valid', rows.join('\n') + '\n')
  t.same(ended.problems.map((p: Json) => [p.line, p.type, p.pointer]), [
    [1, '/problems/invalid-import', '#/title'],
    [2, '/problems/invalid-import', '#/title'],
    [4, '/problems/invalid-import', '#/nested'],
    [5, '/problems/invalid-import', '#/__proto__'],
    [6, '/problems/invalid-import', '#/x' + '/0'.repeat(63)]
  ])
  const created = await api.request({ method: 'POST', url: '/books', headers: { 'content-type': 'application/json' }, payload: loneSurrogate })
  t.equal(ended.problems[0].detail, created.json().errors[0].detail, 'the words of a create')
  t.match(ended.problems[0].detail, /must be Unicode text/)
  t.match(ended.problems[1].detail, /more than once in its object.*RFC 7493/)
  t.match(ended.problems[2].detail, /member whose name is not Unicode text/)
  t.match(ended.problems[4].detail, /nested more than 64 deep/)
  t.match(ended, { state: 'succeeded', rows: { read: 6, written: 1, refused: 5 } })
  t.same((await api.request({ url: '/books' })).json().items.map((book: Json) => book.title), ['Dune'], 'only the valid row is stored')
})

t.test('POST /imports (ndjson, mode=all): either row refuses the whole file', async t => {
  const api = await build(t)
  for (const row of [loneSurrogate, givenTwice]) {
    const ended = await imported(api, 'collection=books', `{"title":"Dune","author":"Frank Herbert"}\n${row}\n`)
    t.match(ended, { state: 'failed', rows: { written: 0 } })
    t.match(ended.problems, [{ line: 2, type: '/problems/invalid-import', pointer: '#/title' }])
  }
  t.same((await api.request({ url: '/books' })).json().items, [], 'nothing was written')
})

t.test('POST /imports (ndjson): a name given twice that is longer than a pointer may be is named, cut to the contract\'s 200 characters', async t => {
  const api = await build(t)
  const name = 'n'.repeat(500)
  const ended = await imported(api, 'collection=books&mode=valid', `{"title":"Dune","author":"A","${name}":1,"${name}":2}\n`)
  t.equal(ended.problems[0].pointer, `#/${name}`.slice(0, 199) + '…')
})
