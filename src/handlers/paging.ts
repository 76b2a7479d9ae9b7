// Cursor paging shared by the list operations: signs positions and mirrors next_cursor in a Link header.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CursorCodec } from '../cursor.js'
import { ValidationError } from '../errors.js'
import type { Page, RecordStore } from '../storage/types.js'
import { Representations } from './representation.js'

// A page object stands for one list, limit and position: its answer, cursor and Link included, is fixed.
const pages = new Representations<Page<unknown>>()

type ListRequest = FastifyRequest<{ Querystring: { limit?: number, cursor?: string } }>

export async function listPage<T> (
  request: ListRequest,
  reply: FastifyReply,
  cursors: CursorCodec,
  store: RecordStore<T, never>,
  /** The list's path; cursors are signed with it, so a cursor of one list is foreign to another. */
  list: string
): Promise<FastifyReply> {
  // The contract's default (20) fills an absent limit during validation.
  const { limit = 20, cursor } = request.query
  const after = cursor === undefined ? null : cursors.decode(list, cursor)
  if (cursor !== undefined && after === null) {
    throw new ValidationError('querystring', [{ detail: 'is not a cursor issued by this list', parameter: 'cursor' }])
  }
  const page = await store.list(limit, after)
  return pages.send(reply, page, () => {
    const nextCursor = page.after === null ? null : cursors.encode(list, page.after)
    const body: { items: T[], next_cursor: string | null } = { items: page.items, next_cursor: nextCursor }
    const headers: Record<string, string> = nextCursor === null ? {} : { link: `<${list}?limit=${limit}&cursor=${nextCursor}>; rel="next"` }
    return { body, headers }
  })
}
