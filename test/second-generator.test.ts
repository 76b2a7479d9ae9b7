// Portability: a second, independent generator (@hey-api/openapi-ts) turns openapi.yaml into an SDK that compiles.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { spec } from './contract.js'
import { runTool } from './process.js'

const root = fileURLToPath(new URL('..', import.meta.url))

// The tools run away from the project folder, so no config file of ours steers them and nothing is written into the tree.

// A consumer's ESM project: the generated SDK plus a probe that uses it. The compiler options are the
// project's own strict set; DOM supplies fetch, Request and URLSearchParams as in a browser or on Node.
const tsconfig = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noUncheckedIndexedAccess: true,
    noImplicitReturns: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    noFallthroughCasesInSwitch: true,
    types: []
  },
  include: ['sdk/**/*.ts', 'probe.ts']
}

// Compiling is not enough: the SDK's types must carry the contract, so a wrong call must fail to compile
// (an unused @ts-expect-error is itself an error).
const probe = `
import { createClient } from './sdk/client/index.js'
import { createBook, getBook, listStudents, updateBook, updateStudent, type Book, type StudentInput, type UpdateBookData } from './sdk/index.js'

const client = createClient({ baseUrl: 'http://127.0.0.1:3000', auth: 'key' })

export async function probe (): Promise<Book | undefined> {
  const created = await createBook({ client, body: { title: 'Dune', author: 'Frank Herbert', isbn: null } })
  const book: Book | undefined = created.data
  if (book === undefined) return undefined
  const again = await getBook({ client, path: { book_id: book.book_id } })
  // The read-change-PUT of docs/safe-writes.md: the book as read goes back whole, and the body's type keeps the
  // server-set fields (a readOnly one would be dropped from it, and reading it here would not compile).
  const putBack: UpdateBookData['body'] = { ...book, title: 'Dune (revised)' }
  const readAt: string | undefined = putBack.updated_at
  await updateBook({ client, path: { book_id: putBack.book_id ?? book.book_id }, body: putBack, headers: { 'If-Match': readAt ?? '*' } })
  const page = await listStudents({ client, query: { limit: 20 } })
  const cursor: string | null | undefined = page.data?.next_cursor
  const student: StudentInput = { name: 'Ada Lovelace', email: 'ada@example.org', status: 'graduated' }
  await updateStudent({ client, path: { student_id: String(cursor) }, body: student })
  // @ts-expect-error title is required
  await createBook({ client, body: { author: 'Frank Herbert' } })
  // @ts-expect-error published_year is an integer, not a string
  await createBook({ client, body: { title: 'Dune', author: 'Frank Herbert', published_year: '1965' } })
  // @ts-expect-error status is one of three values
  const retired: StudentInput = { name: 'A', email: 'a@example.org', status: 'expelled' }
  // @ts-expect-error getBook needs the book_id path parameter
  await getBook({ client })
  return again.data ?? (retired && undefined)
}
`

t.test('@hey-api/openapi-ts generates an SDK from openapi.yaml that compiles under strict TypeScript', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-second-generator-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  const generated = await runTool(join(root, 'node_modules/.bin/openapi-ts'), [
    '--input', join(root, 'openapi.yaml'), '--output', join(dir, 'sdk'),
    '--client', '@hey-api/client-fetch', '--plugins', '@hey-api/typescript', '@hey-api/sdk', '--no-log-file'
  ], dir)
  t.equal(generated.code, 0, 'openapi-ts generates the SDK', { output: generated.output })

  // One SDK function per operation of the contract, named by its operationId.
  const sdk = readFileSync(join(dir, 'sdk/sdk.gen.ts'), 'utf8')
  const operationIds = Object.values<Record<string, any>>(spec['paths'])
    .flatMap(item => Object.values<any>(item).map(operation => operation.operationId).filter(Boolean))
  t.equal(operationIds.length, 25, 'twenty-five operations in the contract')
  for (const id of operationIds) t.match(sdk, new RegExp(`export const ${id} = `), `the SDK has ${id}`)

  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig))
  writeFileSync(join(dir, 'probe.ts'), probe)
  const compiled = await runTool(join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', join(dir, 'tsconfig.json')], dir)
  t.equal(compiled.code, 0, 'tsc --noEmit passes on the SDK and the probe', { output: compiled.output })
})
