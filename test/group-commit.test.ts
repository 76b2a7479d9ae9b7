// Group commit: concurrent writes share one transaction, yet each succeeds or fails on its own, and only a committed write is acknowledged.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import type { BookValues } from '../src/storage/types.js'
import { creationOrder } from '../src/storage/list-sql.js'
import { companyTurns, companyWaitMs, fullBatch, GroupCommit } from '../src/storage/sqlite/group-commit.js'

const book = (title: string, isbn: string | null = null): BookValues => ({ title, author: 'A', isbn, published_year: null })

/** Repositories on a file, and a second connection to it for changing the schema behind their back. */
function onFile (t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-group-'))
  const path = join(dir, 'data.sqlite')
  const repositories = openSqliteRepositories(path)
  const other = new Database(path)
  t.teardown(async () => {
    other.close()
    await repositories.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { repositories, other }
}

t.test('writes of one tick: a 409 and a 412 fail alone, the others commit', async t => {
  const repositories = openSqliteRepositories(':memory:')
  t.teardown(() => repositories.close())
  const { books } = repositories
  const first = await books.create(book('first', '978-0-441-01359-3'))
  const results = await Promise.allSettled([
    books.create(book('a')),
    books.create(book('duplicate', '978-0-441-01359-3')),
    books.replace(first.record.book_id, book('stale'), [99]),
    books.replace(first.record.book_id, book('renamed', '978-0-441-01359-3'), [1]),
    books.create(book('b')),
    books.delete(first.record.book_id, [1])
  ])
  t.same(results.map(r => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'rejected'])
  t.match(results[1], { reason: { name: 'ValueTakenError', field: 'isbn' } })
  t.match(results[2], { reason: { name: 'RevisionNotCurrentError', changedSince: false } })
  t.match(results[3], { value: { revision: 2, record: { title: 'renamed' } } })
  // The delete saw the replace of the same batch (revision 2), as it would have one after the other.
  t.match(results[5], { reason: { name: 'RevisionNotCurrentError', changedSince: true } })
  t.same((await books.list(creationOrder, 10, null)).items.map(b => b.title), ['renamed', 'a', 'b'])
})

t.test('a failed COMMIT fails every write of the batch and stores none', async t => {
  const { repositories, other } = onFile(t)
  // A deferred foreign key is checked only at COMMIT: a book titled "orphan" makes the COMMIT fail.
  other.exec(`
    CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE child (parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
    CREATE TRIGGER orphan AFTER INSERT ON books WHEN NEW.title = 'orphan' BEGIN INSERT INTO child VALUES (42); END;
  `)
  const results = await Promise.allSettled([repositories.books.create(book('a')), repositories.books.create(book('orphan'))])
  t.match(results, [{ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } }, { status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } }])
  t.same((await repositories.books.list(creationOrder, 10, null)).items, [])
  t.equal((await repositories.books.create(book('later'))).record.title, 'later', 'the next batch commits')
})

t.test('a write that ends the whole transaction fails the batch, and no later write commits on its own', async t => {
  const { repositories, other } = onFile(t)
  other.exec("CREATE TRIGGER abort BEFORE INSERT ON books WHEN NEW.title = 'abort' BEGIN SELECT RAISE(ROLLBACK, 'aborted'); END;")
  const results = await Promise.allSettled(['a', 'abort', 'c'].map(title => repositories.books.create(book(title))))
  t.same(results.map(r => r.status), ['rejected', 'rejected', 'rejected'])
  t.match(results[0], { reason: { message: 'aborted' } })
  t.same((await repositories.books.list(creationOrder, 10, null)).items, [])
})

t.test('closing the repositories commits the writes still waiting for their batch', async t => {
  const { repositories, other } = onFile(t)
  const pending = repositories.books.create(book('last'))
  await repositories.close()
  t.equal((await pending).record.title, 'last')
  t.same(other.prepare('SELECT title FROM books').pluck().all(), ['last'])
})

t.test('a batch waits a few turns of the event loop for company, no longer than its bound, and not once it is full', async t => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE w (n INTEGER)')
  const insert = db.prepare('INSERT INTO w (n) VALUES (?)')
  const batches: number[] = []
  // The test's own clock: a loaded machine's turns may take longer than the bound, and that must not split the first batch.
  let now = 0
  const writes = new GroupCommit(db, () => {}, size => batches.push(size), () => now)
  const write = (n: number) => writes.run(() => insert.run(n))
  const nextTurn = () => new Promise(resolve => setImmediate(resolve))

  // One write a turn, for as many turns as a batch waits: one COMMIT for them all.
  const spread: Promise<unknown>[] = []
  for (let turn = 0; turn < companyTurns; turn++) {
    spread.push(write(turn))
    await nextTurn()
  }
  await Promise.all(spread)
  t.same(batches, [companyTurns], 'the writes of consecutive turns share one transaction')

  // A write alone commits without anything else happening: the turns of an idle loop pass at once.
  batches.length = 0
  await write(100)
  t.same(batches, [1])

  // A full batch goes at once: the next turn's write starts a batch of its own.
  batches.length = 0
  const full = Array.from({ length: fullBatch }, (_, i) => write(200 + i))
  await nextTurn()
  await Promise.all([...full, write(300)])
  t.same(batches, [fullBatch, 1])

  // A turn that lasts longer than the bound (a long synchronous task) ends the wait.
  batches.length = 0
  const first = write(400)
  now += companyWaitMs
  const second = new Promise(resolve => setImmediate(() => { resolve(write(401)) }))
  await Promise.all([first, second])
  t.same(batches, [1, 1], 'the write that waited past the bound went alone')
  t.equal((db.prepare('SELECT count(*) AS c FROM w').get() as { c: number }).c, companyTurns + 1 + fullBatch + 1 + 2, 'every write committed')
})
