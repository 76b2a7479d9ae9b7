// The scenarios: what each sends, drawn per request from the seeded records, to the ceiling and to each engine's service.
import { randomInt } from 'node:crypto'
import { int } from './format.mjs'
import { nextPostedIsbn } from './isbn.mjs'
import { opts } from './options.mjs'
import { fromDist } from './paths.mjs'
import { apiKey } from './servers.mjs'
import { bookColumns } from './floor.mjs'

const pick = list => list[randomInt(list.length)]
const bookBody = () => JSON.stringify({ title: 'A benchmark book', author: 'Bench Author', isbn: nextPostedIsbn(), published_year: 2001 })
const putBody = book => JSON.stringify({ title: `${book.title} (revised)`, author: book.author, isbn: book.isbn, published_year: book.published_year })

export const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' }

// autocannon writes Content-Length into the headers object it is handed and keeps it for the next
// request, so every request gets a fresh copy: a GET after a POST must not announce a body.
export const request = (req, method, path, body) => ({ ...req, method, path, body, headers: { ...headers } })

/** The service's (and the ceiling's) requests on books, drawn from `sample`; the peers' scenarios send them too. */
export function bookRequests (sample) {
  return {
    getBook: req => request(req, 'GET', `/books/${pick(sample.books).book_id}`),
    listFirst: req => request(req, 'GET', '/books?limit=20'),
    postBook: req => request(req, 'POST', '/books', bookBody()),
    putBook: req => {
      const book = pick(sample.books)
      return request(req, 'PUT', `/books/${book.book_id}`, putBody(book))
    }
  }
}

/**
 * Per engine, the signed cursors the scenarios start from: the middle of the creation order, and
 * positions in the middle of the title order (sort=title), each bound to its query as the service binds it.
 */
export async function listCursors (seeded) {
  const { CursorCodec } = await fromDist('http/cursor.js')
  const { signCursor } = await fromDist('handlers/paging.js')
  const { bookList } = await fromDist('handlers/books.js')
  search = await fromDist('domain/search/query.js')
  fold = (await fromDist('domain/search/fold.js')).fold
  return Object.fromEntries(Object.entries(seeded.secrets).map(([engine, secret]) => {
    const codec = new CursorCodec(Buffer.from(secret))
    return [engine, {
      deep: signCursor(codec, bookList, {}, JSON.stringify({ k: [String(Math.floor(seeded.count / 2))] })),
      titleMiddle: seeded.titleMiddle.map(m => signCursor(codec, bookList, { sort: 'title' }, JSON.stringify({ k: [m.title_key, String(m.seq)] })))
    }]
  }))
}

/** `cursors`: per engine, the signed cursors of listCursors(); the target of a request is 'ceiling' or an engine. */
export function scenarios (seeded, cursors) {
  const only = opts.only?.split(',')
  return allScenarios(seeded, cursors).filter(s => only === undefined || only.includes(s.id))
}

// The service's own folding and search compilers, for the engine floors' statements: loaded by listCursors().
let search
let fold

/** A search's page as one statement: the newest 20 (or oldest) matches, streamed (FTS5) or found and sorted (GIN). */
function searchFloor (engine, term, descending = true) {
  const query = search.parseSearch(term)
  const order = descending ? 'DESC' : ''
  return engine === 'sqlite'
    ? { sql: `SELECT ${bookColumns} FROM books WHERE seq IN (SELECT rowid FROM books_fts WHERE books_fts MATCH ? ORDER BY rowid ${order} LIMIT 21) ORDER BY seq ${order}`, params: [search.toFts5(query, ['title_key', 'author_key'])] }
    : { sql: `SELECT ${bookColumns} FROM books WHERE tsv @@ ?::tsquery ORDER BY seq ${order} LIMIT 21`, params: [search.toTsquery(query, ['A', 'B'])] }
}

/** A filtered page sorted by title as one statement, the engine choosing how. */
const byTitle = (where, params) => ({ sql: `SELECT ${bookColumns} FROM books WHERE ${where} ORDER BY title_key, seq LIMIT 21`, params })

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const share = (books, count) => `${(100 * books / count).toFixed(books < count / 100 ? 3 : 0)} %`

function allScenarios ({ sample, picks, updatedAt, count, titleMiddle }, cursors) {
  const { getBook, listFirst, postBook, putBook } = bookRequests(sample)
  // Query scenarios (issue 12): the ceiling has no filters or search, so it serves its first page of 20
  // in their place, the yardstick of what answering a page costs bare Node. Each request draws its query
  // from a pool (authors, terms, ranges, cursors) so that SQLite's page cache (256 pages) seldom holds
  // the answer; where the pool is small (the one common term; the few authors with a few dozen books at
  // 1,000 books) it does, so the queries' own cost on SQLite is measured with --cache-size 0.
  // `floor(engine)`: a draw of the best single statement for the same kind of page (see floor.mjs).
  const query = (id, name, path, floor) => ({
    name,
    id,
    read: true,
    query: true,
    floor,
    setup: (req, target) => request(req, 'GET', target === 'ceiling' ? '/books?limit=20' : path(target))
  })
  const q = encodeURIComponent
  const books = list => {
    const [low, high] = [Math.min(...list.map(p => p.books)), Math.max(...list.map(p => p.books))]
    return low === high ? `${int(low)} book${low === 1 ? '' : 's'}` : `${int(low)}–${int(high)} books`
  }
  const years = (min, max) => `published_year_min=${min}&published_year_max=${max}`
  // The floors draw from the same pools, as parameters.
  const yearsOf = text => text.match(/\d+/g).map(Number).filter((_, i) => i < 2)
  // Pools larger than the 256 pages SQLite caches: 450 narrow ranges, 1,254 broad ones, 651 sparse combinations.
  const narrow = range(1800, 2024).flatMap(year => [years(year, year + 1), years(year, year + 2)])
  const broad = range(1800, 1913).flatMap(year => range(108, 118).map(span => years(year, year + span)))
  const sparse = range(1800, 1830).flatMap(year => range(0, 20).map(i => `${years(year, year + 50)}&updated_since=${q(updatedAt(0.95 + i * 0.002))}`))
  return [
    { name: 'GET one book', id: 'get-book', read: true, setup: getBook },
    { name: 'GET list, first page', id: 'list-first', read: true, setup: listFirst },
    {
      name: 'GET list, page deep in the collection',
      id: 'list-deep',
      read: true,
      setup: (req, target) => request(req, 'GET', `/books?limit=20&cursor=${target === 'ceiling' ? Math.floor(sample.books.length / 2) : cursors[target].deep}`)
    },
    // The list queries before the writes, which add tens of thousands of books (all alike) to the collection.
    query('list-filter', `list: author= (one of ${picks.authors.length} with ${books(picks.authors)})`,
      () => `/books?limit=20&author=${q(pick(picks.authors).author)}`,
      () => ({ sql: `SELECT ${bookColumns} FROM books WHERE author_key = ? ORDER BY seq LIMIT 21`, params: [fold(pick(picks.authors).author)] })),
    query('list-filter-years', 'list: 2- or 3-year published_year range, sort=title', () => `/books?limit=20&${pick(narrow)}&sort=title`,
      () => byTitle('published_year_sort BETWEEN ? AND ?', yearsOf(pick(narrow)))),
    query('list-sorted-deep', 'list: sort=title, cursor in the middle of the title order',
      target => `/books?limit=20&sort=title&cursor=${pick(cursors[target].titleMiddle)}`,
      () => {
        const middle = pick(titleMiddle)
        return byTitle('(title_key, seq) > (?, ?)', [middle.title_key, middle.seq])
      }),
    query('list-filter-broad', 'list: published_year range over about half the years (109–119), sort=title', () => `/books?limit=20&${pick(broad)}&sort=title`,
      () => byTitle('published_year_sort BETWEEN ? AND ?', yearsOf(pick(broad)))),
    query('list-walk-sparse', 'list: 51-year published_year range + updated_since in the last 1–5 %, sort=title',
      () => `/books?limit=20&${pick(sparse)}&sort=title`,
      engine => {
        const text = pick(sparse)
        const since = decodeURIComponent(text.split('updated_since=')[1])
        return byTitle(`published_year_sort BETWEEN ? AND ? AND updated_at >= ${engine === 'sqlite' ? '?' : '?::timestamptz'}`, [...yearsOf(text), since])
      }),
    query('search-rare', `search: rare term (one of ${picks.rare.length}, in ${books(picks.rare)})`,
      () => `/books?limit=20&q=${q(pick(picks.rare).term)}`, engine => searchFloor(engine, pick(picks.rare).term)),
    query('search-common', `search: common term (${picks.common.map(c => `${c.term}, ${share(c.books, count)} of books`).join('; ')}), by relevance`,
      () => `/books?limit=20&q=${q(pick(picks.common).term)}`, engine => searchFloor(engine, pick(picks.common).term)),
    query('search-common-created', 'search: common term, sort=created_at',
      () => `/books?limit=20&q=${q(pick(picks.common).term)}&sort=created_at`, engine => searchFloor(engine, pick(picks.common).term, false)),
    {
      name: 'mix: GET one book (24 connections) beside list: 2- or 3-year range by title (8 connections, without pause)',
      id: 'isolation',
      read: true,
      // The measured requests (GET one), and the load beside them (the dearest list scenario at scale).
      setup: getBook,
      beside: (req, target) => request(req, 'GET', target === 'ceiling' ? '/books?limit=20' : `/books?limit=20&${pick(narrow)}&sort=title`)
    },
    { name: 'POST book', id: 'post-book', setup: postBook },
    { name: 'PUT book', id: 'put-book', setup: putBook },
    { name: 'GET one student (with auth)', id: 'get-student', read: true, setup: req => request(req, 'GET', `/api/students/${pick(sample.students).student_id}`) },
    {
      name: 'mix: 80% GET one book, 10% POST, 10% PUT',
      id: 'mix',
      setup: req => {
        const roll = randomInt(10)
        return roll < 8 ? getBook(req) : roll === 8 ? postBook(req) : putBook(req)
      }
    }
  ]
}
