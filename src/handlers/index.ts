// Composes the per-resource handlers into the one object fastify-openapi-glue routes operationIds to.
import type { ServiceHandlers } from '../api-types.js'
import { CursorCodec } from '../cursor.js'
import type { Repositories } from '../repositories/types.js'
import { bookHandlers } from './books.js'
import { studentHandlers } from './students.js'

export async function serviceHandlers (repositories: Repositories): Promise<ServiceHandlers> {
  const cursors = new CursorCodec(await repositories.cursorSecret())
  return {
    ...bookHandlers(repositories.books, cursors),
    ...studentHandlers(repositories.students, cursors)
  }
}
