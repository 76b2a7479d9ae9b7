// The change feed on SQLite: the contract, then what only a file shared by processes, and the scan bound, show.
import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { scanLimit } from '../src/storage/sqlite/events.js'
import { tempDatabase } from './helper.js'
import { feedContract } from './feed-contract.js'

feedContract(t, async t => {
  const path = tempDatabase(t)
  return async () => openSqliteRepositories(path)
})

const book = (title: string) => ({ title, author: 'A', isbn: null, published_year: null })

t.test('a write that fails after its record statement leaves neither the record nor its event', async t => {
  const path = tempDatabase(t)
  const repositories = openSqliteRepositories(path)
  t.teardown(() => repositories.close())
  const other = new Database(path)
  other.exec("CREATE TRIGGER refuse AFTER INSERT ON events WHEN new.envelope LIKE '%Refused%' BEGIN SELECT RAISE(ABORT, 'refused'); END")
  other.close()
  const head = await repositories.events.head()
  const [refused, kept] = await Promise.allSettled([repositories.books.create(book('Refused')), repositories.books.create(book('Kept'))])
  t.equal(refused.status, 'rejected')
  t.equal(kept.status, 'fulfilled', 'its neighbour in the batch commits')
  const { events } = await repositories.events.read(head, ['book.created'], 10)
  t.same(events.map(e => JSON.parse(e.envelope).data.object.title), ['Kept'])
  t.equal((await repositories.books.get((refused as unknown as { value: undefined }).value ?? 'x')), null)
})

t.test('a read scans a bounded number of rows however many its types leave out', async t => {
  const repositories = openSqliteRepositories(':memory:')
  t.teardown(() => repositories.close())
  const head = await repositories.events.head()
  await Promise.all(Array.from({ length: scanLimit + 10 }, (_, i) => repositories.books.create(book(`B${i}`))))
  await repositories.students.create({ name: 'S', email: 's@example.org', enrollment_year: null, status: 'active' })
  const first = await repositories.events.read(head, ['student.created'], 10)
  t.same(first.events, [], 'none in the first scan')
  t.not(first.next, head, 'but the position moved past the rows scanned')
  t.equal(first.more, true, 'and the read says it stopped short of the head')
  const second = await repositories.events.read(first.next, ['student.created'], 10)
  t.equal(second.events.length, 1, 'the next read finds it')
  t.equal(second.more, false, 'and reached the head')
})

t.test('events another process commits to the file are read, in order', async t => {
  const path = tempDatabase(t)
  const one = openSqliteRepositories(path)
  const two = openSqliteRepositories(path)
  t.teardown(async () => { await one.close(); await two.close() })
  const head = await one.events.head()
  await two.books.create(book('From the other process'))
  await one.books.create(book('From this one'))
  const { events } = await one.events.read(head, ['book.created'], 10)
  t.same(events.map(e => JSON.parse(e.envelope).data.object.title), ['From the other process', 'From this one'])
})
