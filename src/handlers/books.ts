// Handlers of the book operations: HTTP in and out, storage through the BookRepository.
import type { CursorCodec } from '../cursor.js'
import type { ServiceHandlers } from '../api-types.js'
import { NotFoundError } from '../errors.js'
import type { BookRepository } from '../repositories/types.js'
import { bookValues } from './input.js'
import { listPage } from './paging.js'

type BookHandlers = Pick<ServiceHandlers, 'listBooks' | 'createBook' | 'getBook' | 'updateBook' | 'deleteBook'>

export function bookHandlers (books: BookRepository, cursors: CursorCodec): BookHandlers {
  return {
    async listBooks (request, reply) {
      return listPage(request, reply, cursors, books, '/books')
    },

    async createBook (request, reply) {
      const book = await books.create(bookValues(request.body))
      reply.code(201).header('location', `/books/${book.book_id}`)
      return book
    },

    async getBook (request) {
      const book = await books.get(request.params.book_id)
      if (book === null) throw new NotFoundError('book', request.params.book_id)
      return book
    },

    async updateBook (request) {
      const book = await books.replace(request.params.book_id, bookValues(request.body))
      if (book === null) throw new NotFoundError('book', request.params.book_id)
      return book
    },

    async deleteBook (request, reply) {
      if (!await books.delete(request.params.book_id)) throw new NotFoundError('book', request.params.book_id)
      return reply.code(204).send()
    }
  }
}
