// Compile-time proof that the client is typed from openapi.yaml: `tsc --noEmit` fails if any @ts-expect-error line compiles.
import { type Book, type BookInput, createClient, type EventTypeName, type Problem, type Student } from '../client/src/index.js'

/** Never run; only type-checked (it is not a *.test.ts file). */
export async function clientTypeChecks (): Promise<unknown[]> {
  const seen: unknown[] = []
  const client = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'key' })

  const created = await client.POST('/books', { body: { title: 'Dune', author: 'Frank Herbert' } })
  if (created.error !== undefined) {
    const problem: Problem = created.error
    const status: number = problem.status
    // @ts-expect-error a problem has no `message` member
    seen.push(problem.message, status)
  } else {
    const book: Book = created.data
    // @ts-expect-error books have no `name`
    seen.push(book.name)
  }

  // @ts-expect-error unknown path
  await client.GET('/book')
  // @ts-expect-error students cannot be deleted: the contract has no DELETE there
  await client.DELETE('/api/students/{student_id}', { params: { path: { student_id: 'x' } } })
  // @ts-expect-error the path parameter is required
  await client.GET('/books/{book_id}')
  // @ts-expect-error the path parameter is book_id, not id
  await client.GET('/books/{book_id}', { params: { path: { id: 'x' } } })
  // openapi-fetch does not flag an unknown member inside an inline body once every required one is
  // there (openapi-ts/openapi-typescript#1769); a body typed with the exported input type is checked.
  // @ts-expect-error `rating` is not a field of a book
  const body: BookInput = { title: 'Dune', author: 'Frank Herbert', rating: 5 }
  await client.POST('/books', { body })
  // @ts-expect-error `author` is required
  await client.POST('/books', { body: { title: 'Dune' } })
  // @ts-expect-error published_year is an integer, not a string
  await client.PUT('/books/{book_id}', { params: { path: { book_id: 'x' } }, body: { title: 'T', author: 'A', published_year: '1965' } })
  // @ts-expect-error status is one of active, graduated, withdrawn
  await client.POST('/api/students', { body: { name: 'Ada', email: 'ada@example.org', status: 'expelled' } })
  // @ts-expect-error limit is a number
  await client.GET('/books', { params: { query: { limit: '5' } } })
  // @ts-expect-error only the two lists can be paged
  client.all('/books/{book_id}')
  // @ts-expect-error sort is one of the declared keys
  client.all('/books', { sort: 'titel' })
  // @ts-expect-error author is a list of names
  client.all('/books', { author: 'Frank Herbert' })
  // @ts-expect-error books have no status
  client.all('/books', { status: ['active'] })
  client.all('/books', { q: 'dune', author: ['Frank Herbert'], published_year_min: 1960, sort: '-published_year' })
  client.all('/api/students', { status: ['active', 'graduated'], sort: 'name' })

  const types: EventTypeName[] = ['book.created', 'student.replaced']
  client.follow({ types })
  // @ts-expect-error follow() takes the event types the contract names
  client.follow({ types: ['book.exploded'] })
  // @ts-expect-error an event type is one name; a comma-separated list is the wire's form, not the client's
  client.follow({ types: ['book.created,book.deleted'] })

  for await (const student of client.all('/api/students')) {
    const s: Student = student
    // @ts-expect-error a student is not a book
    const b: Book = student
    seen.push(s, b)
  }
  return seen
}
