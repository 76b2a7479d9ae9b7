// The benchmark's ceiling: the service's routes on bare node:http and an in-memory Map, the yardstick of its figures.
// No framework, validation, logging or disk, so the service's figures can be read as a share of what Node can do.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'

const books = new Map()
let bookList = []
const students = new Map()

function send (res, status, body, headers = {}) {
  const json = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers })
  res.end(json)
}

function readJson (req, done) {
  const chunks = []
  req.on('data', chunk => chunks.push(chunk))
  req.on('end', () => done(JSON.parse(Buffer.concat(chunks).toString() || 'null')))
}

const server = createServer((req, res) => {
  const [path, query = ''] = req.url.split('?')
  const parts = path.split('/')
  if (req.method === 'POST' && path === '/__seed') {
    return readJson(req, seed => {
      bookList = seed.books
      for (const book of seed.books) books.set(book.book_id, book)
      for (const student of seed.students) students.set(student.student_id, student)
      send(res, 200, { books: books.size, students: students.size })
    })
  }
  if (path === '/books') {
    if (req.method === 'GET') {
      // Cursors here are plain offsets: the ceiling skips the signing the service does.
      const params = new URLSearchParams(query)
      const limit = Number(params.get('limit') ?? 20)
      const from = Number(params.get('cursor') ?? 0)
      const items = bookList.slice(from, from + limit)
      return send(res, 200, { items, next_cursor: from + limit < bookList.length ? String(from + limit) : null })
    }
    return readJson(req, input => {
      const now = new Date().toISOString()
      const book = { book_id: randomUUID(), ...input, created_at: now, updated_at: now }
      books.set(book.book_id, book)
      send(res, 201, book, { location: `/books/${book.book_id}` })
    })
  }
  if (parts[1] === 'books' && parts.length === 3) {
    const old = books.get(parts[2])
    if (old === undefined) return send(res, 404, { status: 404 })
    if (req.method === 'GET') return send(res, 200, old)
    return readJson(req, input => {
      const book = { book_id: old.book_id, ...input, created_at: old.created_at, updated_at: new Date().toISOString() }
      books.set(book.book_id, book)
      send(res, 200, book)
    })
  }
  if (parts[1] === 'api' && parts[2] === 'students' && parts.length === 4) {
    const student = students.get(parts[3])
    return student === undefined ? send(res, 404, { status: 404 }) : send(res, 200, student)
  }
  send(res, 404, { status: 404 })
})

server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
