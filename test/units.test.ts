// Below the HTTP layer: migrations, repositories, ISBN and input rules, cursors — no Fastify.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { IdempotencyKeyTakenError } from '../src/domain/outcomes.js'
import { IdempotencyKeyInUseError } from '../src/http/errors.js'
import { Idempotency } from '../src/handlers/idempotency.js'
import type { IdempotencyStore } from '../src/storage/types.js'
import { validatorCompiler } from '../src/http/validation.js'
import { validationError } from '../src/http/problem-details.js'
import { openDatabase } from '../src/storage/sqlite/database.js'
import { migrate } from '../src/storage/sqlite/migrations.js'
import { latestVersion, version4Keys } from '../src/storage/schema.js'
import { CursorCodec } from '../src/http/cursor.js'
import { bookValues, studentValues } from '../src/handlers/input.js'
import { bookTable, studentTable } from '../src/storage/tables.js'
import { toIsbn13 } from '../src/domain/isbn.js'
import { fold } from '../src/domain/search/fold.js'
import { storedImport } from '../src/storage/import-rows.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { creationOrder } from '../src/storage/list-sql.js'

t.test('toIsbn13 normalises valid ISBNs and refuses the rest', async t => {
  t.equal(toIsbn13('0-441-01359-7'), '9780441013593')
  t.equal(toIsbn13('978 0 441 01359 3'), '9780441013593')
  t.equal(toIsbn13('080442957x'), '9780804429573')
  t.equal(toIsbn13('979-10-90636-07-1'), '9791090636071')
  for (const bad of ['0441013598', '9780441013594', '1234567890123', '12345', 'X441013597']) t.equal(toIsbn13(bad), null, bad)
})

t.test('migrate brings a new database to the latest version and is idempotent', async t => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  migrate(db)
  t.equal(db.pragma('user_version', { simple: true }), latestVersion)
  migrate(db)
  t.equal(db.prepare('SELECT count(*) AS n FROM settings').pluck().get(), 1, 'the second run changed nothing')
})

t.test('migrate refuses a database from a newer version of the service', async t => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.pragma('user_version = 99')
  t.throws(() => migrate(db), /schema version 99 is newer than this service knows/)
})

t.test('openDatabase creates the folder, uses WAL and keeps data across opens', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'nested', 'db.sqlite')
  const first = openSqliteRepositories(path)
  const book = await first.books.create({ title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
  const secret = await first.cursorSecret()
  await first.close()
  const db = openDatabase(path)
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  db.close()
  const second = openSqliteRepositories(path)
  t.teardown(() => second.close())
  t.same(await second.books.get(book.record.book_id), book)
  t.same(await second.cursorSecret(), secret, 'cursors stay valid across restarts')
})

t.test('repositories page by creation order and report unique violations by field', async t => {
  const repositories = openSqliteRepositories(':memory:')
  t.teardown(() => repositories.close())
  const { students } = repositories
  const created = []
  for (const name of ['a', 'b', 'c']) {
    created.push(await students.create({ name, email: `${name}@example.org`, enrollment_year: null, status: 'active' }))
  }
  const first = await students.list(creationOrder, 2, null)
  t.same(first.items, created.slice(0, 2).map(c => c.record))
  const second = await students.list(creationOrder, 2, first.after)
  t.same(second, { items: created.slice(2).map(c => c.record), after: null, position: null }, 'no feed position unless asked for')
  await t.rejects(students.create({ name: 'x', email: 'A@EXAMPLE.org', enrollment_year: null, status: 'active' }),
    { name: 'ValueTakenError', field: 'email', message: 'Another student already has this email' })
  t.equal(await students.replace('0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d', { name: 'x', email: 'x@example.org', enrollment_year: null, status: 'active' }, null), null)
})

t.test('repositories pass on storage errors other than a unique violation', async t => {
  const repositories = openSqliteRepositories(':memory:')
  t.teardown(() => repositories.close())
  // The table's CHECK constraint is the last line of defence behind the contract's enum.
  const bogus = { name: 'x', email: 'x@example.org', enrollment_year: null, status: 'expelled' as 'active' }
  await t.rejects(repositories.students.create(bogus), { code: 'SQLITE_CONSTRAINT_CHECK' })
})

t.test('CursorCodec round-trips positions and refuses anything it did not sign for that list', async t => {
  const codec = new CursorCodec(Buffer.alloc(32, 1))
  const cursor = codec.encode('/books', '42')
  t.match(cursor, /^[\w-]+\.[\w-]+$/)
  t.equal(codec.decode('/books', cursor), '42')
  t.equal(codec.decode('/api/students', cursor), null, 'foreign list')
  t.equal(new CursorCodec(Buffer.alloc(32, 2)).decode('/books', cursor), null, 'another secret')
  for (const bad of ['', '42', 'a.b.c', `${cursor}x`, cursor.replace('.', '.A')]) t.equal(codec.decode('/books', bad), null, bad)
})

t.test('studentValues makes an omitted status active and optional fields null', async t => {
  t.same(studentValues({ name: 'Ada', email: 'ada@example.org' }), { name: 'Ada', email: 'ada@example.org', enrollment_year: null, status: 'active' })
})

t.test('bookValues keeps every writable field, in the 13-digit ISBN form, and makes omitted ones null', async t => {
  t.same(bookValues({ title: 'Dune', author: 'Frank Herbert' }), { title: 'Dune', author: 'Frank Herbert', isbn: null, published_year: null })
  t.same(bookValues({ title: 'Dune', author: 'Frank Herbert', isbn: '0-441-01359-7', published_year: 1965 }), { title: 'Dune', author: 'Frank Herbert', isbn: '9780441013593', published_year: 1965 })
  t.same(Object.keys(studentValues({ name: 'Ada', email: 'ada@example.org', status: 'graduated' })), Object.keys(studentTable.writable), 'the fields are the table\'s writable ones')
})

t.test('the keys version 4 backfills are folded as tables.ts derives them today', async t => {
  const tables = { books: bookTable, students: studentTable } as Record<string, { derived: Record<string, (values: object) => string> }>
  for (const { table, keys } of version4Keys) {
    for (const [key, column] of Object.entries(keys)) {
      t.equal(tables[table]!.derived[key]!({ [column]: 'Ørsted Straße' }), fold('Ørsted Straße'), `${table}.${key} is ${column} folded`)
    }
  }
})

t.test('header schemas match the lowercased request headers whatever case the contract spells them in', async t => {
  const validate = validatorCompiler({ schema: { type: 'object', properties: { 'X-Key': { type: 'string', maxLength: 2 } }, required: ['X-Key'] }, method: 'GET', url: '/', httpPart: 'headers' }) as (v: unknown) => boolean
  t.ok(validate({ 'x-key': 'ab' }))
  t.notOk(validate({ 'x-key': 'abc' }), 'the property is checked')
  t.notOk(validate({}), 'and required')
  const bare = validatorCompiler({ schema: { type: 'object' }, method: 'GET', url: '/', httpPart: 'headers' }) as (v: unknown) => boolean
  t.ok(bare({ anything: 'x' }))
})

t.test('openDatabase flushes every commit to disk with synchronous full, and not by default', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-sync-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const full = openDatabase(join(dir, 'full.sqlite'), { synchronous: 'full' })
  t.equal(full.pragma('synchronous', { simple: true }), 2, 'FULL')
  full.close()
  const normal = openDatabase(join(dir, 'normal.sqlite'))
  t.equal(normal.pragma('synchronous', { simple: true }), 1, 'NORMAL')
  normal.close()
})

t.test('validation issues without words of their own keep the validator\'s message, never an empty one', async t => {
  const request = { params: {}, url: '/books' } as unknown as FastifyRequest
  const issue = (keyword: string, params: Record<string, unknown>, message: string, instancePath: string) => ({ keyword, params, message, instancePath, schemaPath: '#' })
  const error = validationError([issue('format', { format: 'date-time' }, 'must match format "date-time"', '/when'), issue('multipleOf', { multipleOf: 2 }, 'must be multiple of 2', '/count'), issue('pattern', { pattern: '^x$' }, 'must match pattern "^x$"', '/code')], 'body', request)
  t.same(error.errors, [
    { detail: 'must be date-time', pointer: '#/when' },
    { detail: 'must be multiple of 2', pointer: '#/count' },
    { detail: 'is not in the form this field takes (see its description in openapi.yaml)', pointer: '#/code' }
  ])
})

t.test('a key another node took meanwhile whose entry cannot be read back (expired and swept between) is 409 in use, never a 500', async t => {
  const store: IdempotencyStore = { find: async () => null }
  const request = { headers: { 'idempotency-key': '"k"' }, caller: { kind: 'key', keyId: 'admin', scopes: [] } } as unknown as FastifyRequest
  const created = new Idempotency(store, 60).create({
    request,
    reply: {} as FastifyReply,
    operation: 'createBook',
    values: {},
    create: async () => { throw new IdempotencyKeyTakenError() },
    headersOf: () => ({})
  })
  await t.rejects(created, new IdempotencyKeyInUseError())
})

t.test('an import\'s rate is rows over the seconds since it was created, and none before a millisecond has passed', async t => {
  const row = { import_id: 'i', key_id: 'k', collection: 'books', mode: 'all', format: 'csv', state: 'succeeded', cancel_requested: 0, rows_read: 3000, rows_written: 3000, rows_refused: 0, bytes: 10, created_at: '2026-11-27T00:00:00.000Z', started_at: '2026-11-27T00:00:00.000Z', finished_at: '2026-11-27T00:00:02.000Z', detail: null, problems: '[]', problems_omitted: 0, written_to: 0, idempotency_key: null, fingerprint: null } as const
  t.equal(storedImport(row).rows_per_second, 1500)
  t.equal(storedImport({ ...row, finished_at: row.created_at }).rows_per_second, null, 'finished in the millisecond it was created')
  t.equal(storedImport({ ...row, finished_at: null }, Date.parse(row.created_at)).rows_per_second, null, 'read in the millisecond it was created')
})
