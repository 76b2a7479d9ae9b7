// Handlers of the book operations: HTTP in and out, storage through the BookRepository.
import type { ServiceHandlers } from '../contract/api-types.js'
import { NotFoundError } from '../http/errors.js'
import type { BookRepository } from '../storage/types.js'
import { etagOf, expectedRevisions, readAnswer, replaceRecord, withEtag } from './conditional.js'
import type { Idempotency } from './idempotency.js'
import { bookValues, recordId } from './input.js'
import { fold } from '../domain/search/fold.js'
import { asIs, type ListContext, type ListParameters, listExport, listPage } from './paging.js'

export const bookList: ListParameters = {
  path: '/books',
  plural: 'books',
  readScope: 'books:read',
  equals: { author: { field: 'author', normalise: fold }, isbn: { field: 'isbn', normalise: asIs } },
  ranges: [
    { field: 'published_year', min: 'published_year_min', max: 'published_year_max' },
    { field: 'updated_at', min: 'updated_since', max: 'updated_before', instants: true }
  ]
}

type BookHandlers = Pick<ServiceHandlers, 'listBooks' | 'exportBooksCsv' | 'exportBooksNdjson' | 'createBook' | 'getBook' | 'updateBook' | 'deleteBook'>

export function bookHandlers (books: BookRepository, lists: ListContext, idempotency: Idempotency): BookHandlers {
  return {
    async listBooks (request, reply) {
      return listPage(request, reply, lists, books, bookList)
    },

    async exportBooksCsv (request, reply) {
      return listExport(request, reply, lists, books, bookList, 'csv')
    },

    async exportBooksNdjson (request, reply) {
      return listExport(request, reply, lists, books, bookList, 'ndjson')
    },

    async createBook (request, reply) {
      const values = bookValues(request.body)
      return idempotency.create({
        request,
        reply,
        operation: 'createBook',
        values,
        create: remember => books.create(values, remember),
        headersOf: ({ record, revision }) => ({ location: `/books/${record.book_id}`, etag: etagOf(record.book_id, revision) })
      })
    },

    async getBook (request, reply) {
      const id = recordId(request.params.book_id)
      return readAnswer(request, reply, 'book', id, await books.get(id))
    },

    async updateBook (request, reply) {
      const id = recordId(request.params.book_id)
      const updated = await replaceRecord(books, { kind: 'book', idField: 'book_id', id, body: request.body, values: bookValues(request.body), ifMatch: request.headers['if-match'] })
      return withEtag(reply, id, updated)
    },

    async deleteBook (request, reply) {
      const id = recordId(request.params.book_id)
      if (!await books.delete(id, expectedRevisions(request.headers['if-match'], id))) throw new NotFoundError('book', id)
      return reply.code(204).send()
    }
  }
}
