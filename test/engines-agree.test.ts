// Differential: the same generated requests to a SQLite node and a PostgreSQL node get the same answers, byte for byte.
import fc from 'fast-check'
import t from 'tap'
import { build, type TestApi } from './helper.js'
import { testDatabase, withPostgres } from './postgres.js'

type Kind = 'books' | 'students'
const paths: Record<Kind, string> = { books: '/books', students: '/api/students' }

// Small pools, so that unique values collide and ids, tags and cursors get reused.
const text = fc.oneof(fc.constantFrom('Dune', 'dune', 'Ørsted', 'Straße', '😀', ' ', '', 'a\u0000b', 'x'.repeat(501)), fc.string({ unit: 'binary', maxLength: 8 }))
const isbn = fc.constantFrom(null, '978-0-441-01359-3', '0441013597', '9780441013594', '9791090636071', 'bad')
const email = fc.constantFrom('ada@example.org', 'ADA@example.org', 'bob@example.org', 'not-an-email')
const year = fc.oneof(fc.constantFrom(null, -5001, -5000, 0, 1799, 1800, 9999, 10000), fc.integer({ min: 1000, max: 2100 }))
const body = (kind: Kind) => kind === 'books'
  ? fc.record({ title: text, author: text, isbn, published_year: year }, { requiredKeys: ['title', 'author'] })
  : fc.record({ name: text, email, enrollment_year: year, status: fc.constantFrom('active', 'graduated', 'withdrawn', 'expelled') }, { requiredKeys: ['name', 'email'] })
const kind = fc.constantFrom<Kind>('books', 'students')
const tag = fc.constantFrom('current', 'stale', 'none', '*')
const target = fc.nat(6) // an index into the ids created so far; beyond them, an id nobody has

const operation = fc.oneof(
  kind.chain(k => fc.record({ op: fc.constant('create' as const), kind: fc.constant(k), body: body(k), key: fc.constantFrom(undefined, 'k1', 'k2') })),
  fc.record({ op: fc.constant('get' as const), kind, target }),
  kind.chain(k => fc.record({ op: fc.constant('put' as const), kind: fc.constant(k), target, body: body(k), tag })),
  fc.record({ op: fc.constant('delete' as const), target, tag }),
  fc.record({ op: fc.constant('list' as const), kind, limit: fc.integer({ min: 1, max: 4 }) })
)
type Operation = typeof operation extends fc.Arbitrary<infer O> ? O : never

/** One node under test: its app, and the ids and tags it handed out, in order. */
interface Node { api: TestApi, ids: Record<Kind, string[]>, tags: Map<string, string> }

const unknownId = '0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60'

/** Sends `op` to `node`; returns what the client saw, with each id, tag and time replaced by its place in the node's history. */
async function send (node: Node, op: Operation): Promise<string> {
  const k: Kind = op.op === 'delete' ? 'books' : op.kind
  const id = 'target' in op ? node.ids[k][op.target] ?? unknownId : undefined
  const headers: Record<string, string> = {}
  if ('tag' in op && op.tag !== 'none') headers['if-match'] = op.tag === '*' ? '*' : op.tag === 'stale' ? '"1-000000000000"' : node.tags.get(id!) ?? '"9-000000000000"'
  if (op.op === 'create' && op.key !== undefined) headers['idempotency-key'] = op.key
  const seen: string[] = []
  let url: string | null = op.op === 'create' || op.op === 'list' ? `${paths[k]}${op.op === 'list' ? `?limit=${op.limit}` : ''}` : `${paths[k]}/${id}`
  while (url !== null) {
    const method = ({ create: 'POST', get: 'GET', put: 'PUT', delete: 'DELETE', list: 'GET' } as const)[op.op]
    const res = await node.api.request({ method, url, headers, ...('body' in op && { payload: op.body }) })
    url = null
    if (res.statusCode === 201) node.ids[k].push(res.json()[k === 'books' ? 'book_id' : 'student_id'])
    const etag = res.headers.etag as string | undefined
    if (etag !== undefined && id !== undefined) node.tags.set(id, etag)
    if (etag !== undefined && res.statusCode === 201) node.tags.set(node.ids[k].at(-1)!, etag)
    // Feed positions are each engine's own (a sequence number; a transaction id and one).
    seen.push(`${res.statusCode} ${JSON.stringify({ ...res.headers, date: undefined, 'x-request-id': undefined, ratelimit: undefined, 'events-cursor': undefined })} ${res.body}`)
    if (op.op === 'list' && res.statusCode === 200 && res.json().next_cursor !== null) url = `${paths[k]}?limit=${op.limit}&cursor=${res.json().next_cursor}`
  }
  let out = seen.join('\n')
  for (const kind of ['books', 'students'] as const) node.ids[kind].forEach((id, i) => { out = out.replaceAll(id, `<${kind} ${i}>`).replaceAll(id.slice(-12), `<tail ${kind} ${i}>`) })
  // Times differ between runs; cursors are signed with each database's own secret.
  return out.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>').replace(/cursor=[\w.-]+|"next_cursor":"[\w.-]+"/g, '<cursor>')
}

await withPostgres(t, t => {
  t.test('SQLite and PostgreSQL answer every generated sequence of requests alike', async t => {
    let sequences = 0
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 10, maxLength: 40 }), async operations => {
      // Two nodes made fresh for each sequence, one per engine.
      const node = async (postgres: boolean): Promise<Node> => ({
        api: await build(t, postgres ? { postgresUrl: await testDatabase(t), recordCacheSize: 0 } : { databasePath: ':memory:' }),
        ids: { books: [], students: [] },
        tags: new Map()
      })
      const [sqlite, postgres] = [await node(false), await node(true)]
      for (const [i, op] of operations.entries()) {
        const [a, b] = [await send(sqlite, op), await send(postgres, op)]
        if (a !== b) throw new Error(`request ${i} ${JSON.stringify(op)}:\nSQLite:     ${a}\nPostgreSQL: ${b}`)
      }
      await sqlite.api.app.close()
      await postgres.api.app.close()
      sequences++
    }), { seed: 20261123, numRuns: 10 })
    t.equal(sequences, 10, 'every sequence ran on both engines')
  })
})
