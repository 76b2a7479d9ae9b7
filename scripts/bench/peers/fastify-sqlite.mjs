// A peer of `npm run bench -- --peers`: books on bare Fastify 5 and better-sqlite3 with no features, the floor the service's own figures are set against.
// What a careful hand-written service costs: prepared statements, JSON schemas on bodies and responses,
// WAL with synchronous=NORMAL, and nothing else (no logger, auth, rate limit, idempotency, search or feed).
// Started by the bench on a file that ./seed.mjs filled, with DATABASE_PATH, PORT and HOST.
import Database from 'better-sqlite3'
import Fastify from 'fastify'

const db = new Database(process.env.DATABASE_PATH, { fileMustExist: true })
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')

const columns = 'id, title, author, year, isbn'
const findBook = db.prepare(`SELECT ${columns} FROM books WHERE id = ?`)
const listBooks = db.prepare(`SELECT ${columns} FROM books ORDER BY id LIMIT ?`)
const insertBook = db.prepare(`INSERT INTO books (title, author, year, isbn) VALUES (@title, @author, @year, @isbn) RETURNING ${columns}`)
const updateBook = db.prepare(`UPDATE books SET title = @title, author = @author, year = @year, isbn = @isbn WHERE id = @id RETURNING ${columns}`)

const bookInput = {
  type: 'object',
  required: ['title', 'author'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1 },
    author: { type: 'string', minLength: 1 },
    year: { type: ['integer', 'null'] },
    isbn: { type: ['string', 'null'] }
  }
}
const book = { type: 'object', properties: { id: { type: 'integer' }, ...bookInput.properties } }
const bookParams = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } }
const notFound = { type: 'object', properties: { message: { type: 'string' } } }

// Optional fields the client left out are stored as NULL, as a full replacement would.
const row = body => ({ year: null, isbn: null, ...body })

const app = Fastify({ logger: false })

app.get('/books', {
  schema: {
    querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } } },
    response: { 200: { type: 'array', items: book } }
  }
}, async request => listBooks.all(request.query.limit))

app.get('/books/:id', { schema: { params: bookParams, response: { 200: book, 404: notFound } } }, async (request, reply) => {
  const found = findBook.get(request.params.id)
  return found ?? reply.code(404).send({ message: 'not found' })
})

app.post('/books', { schema: { body: bookInput, response: { 201: book } } }, async (request, reply) => {
  reply.code(201)
  return insertBook.get(row(request.body))
})

app.put('/books/:id', { schema: { params: bookParams, body: bookInput, response: { 200: book, 404: notFound } } }, async (request, reply) => {
  const updated = updateBook.get({ ...row(request.body), id: request.params.id })
  return updated ?? reply.code(404).send({ message: 'not found' })
})

await app.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1' })
process.on('SIGTERM', async () => {
  await app.close()
  db.close()
  process.exit(0)
})
