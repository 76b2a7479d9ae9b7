// The peers run's scenarios (issue 24's five), each sending every target its own equivalent of one request: the service's routes and ids, or the peers'.
import { randomInt } from 'node:crypto'
import { nextPostedIsbn } from '../isbn.mjs'
import { opts } from '../options.mjs'
import { bookRequests, request } from '../scenarios.mjs'
import { peerTargets } from './targets.mjs'

/**
 * The peers' requests on the same books: `sampleIds[i]` is their id of sample.books[i], and the bodies
 * carry the same fields under the peers' names (year for published_year).
 */
function peerRequests (sample, sampleIds) {
  return {
    getBook: req => request(req, 'GET', `/books/${sampleIds[randomInt(sampleIds.length)]}`),
    listFirst: req => request(req, 'GET', '/books?limit=20'),
    postBook: req => request(req, 'POST', '/books', JSON.stringify({ title: 'A benchmark book', author: 'Bench Author', isbn: nextPostedIsbn(), year: 2001 })),
    putBook: req => {
      const i = randomInt(sampleIds.length)
      const book = sample.books[i]
      return request(req, 'PUT', `/books/${sampleIds[i]}`, JSON.stringify({ title: `${book.title} (revised)`, author: book.author, isbn: book.isbn, year: book.published_year }))
    }
  }
}

/**
 * The scenarios of a peers run on `sample` (the seeded books the requests pick from), `sampleIds` the
 * peers' ids of them; --only picks among them. A scenario's setup(req, target) sends the target its own
 * form of the request; `short` heads the scenario's column.
 */
export function peerScenarios (sample, sampleIds) {
  const forms = { service: bookRequests(sample), peer: peerRequests(sample, sampleIds) }
  const peers = new Set(peerTargets.map(t => t.id))
  const on = kind => (req, target) => forms[peers.has(target) ? 'peer' : 'service'][kind](req)
  const [getBook, listFirst, postBook, putBook] = ['getBook', 'listFirst', 'postBook', 'putBook'].map(on)
  const only = opts.only?.split(',')
  return [
    { name: 'GET one book', short: 'GET one', id: 'get-book', read: true, setup: getBook },
    { name: 'GET list, first page of 20', short: 'list 20', id: 'list-first', read: true, setup: listFirst },
    { name: 'POST book', short: 'POST', id: 'post-book', write: true, setup: postBook },
    { name: 'PUT book', short: 'PUT', id: 'put-book', write: true, setup: putBook },
    {
      name: 'mixed: 60% GET one book, 20% GET list, 10% POST, 10% PUT',
      short: 'mixed',
      id: 'mixed',
      setup: (req, target) => {
        const roll = randomInt(10)
        const send = roll < 6 ? getBook : roll < 8 ? listFirst : roll === 8 ? postBook : putBook
        return send(req, target)
      }
    }
  ].filter(s => only === undefined || only.includes(s.id))
}
