// Composes the per-resource handlers into the one object fastify-openapi-glue routes operationIds to.
import type { ServiceHandlers } from '../api-types.js'
import { CursorCodec } from '../cursor.js'
import type { Repositories } from '../storage/types.js'
import { bookHandlers } from './books.js'
import { Idempotency } from './idempotency.js'
import { studentHandlers } from './students.js'

export async function serviceHandlers (repositories: Repositories, idempotencyTtlSeconds: number): Promise<ServiceHandlers> {
  const cursors = new CursorCodec(await repositories.cursorSecret())
  const idempotency = new Idempotency(repositories.idempotency, idempotencyTtlSeconds)
  return {
    ...bookHandlers(repositories.books, cursors, idempotency),
    ...studentHandlers(repositories.students, cursors, idempotency)
  }
}
