// Entity tags and RFC 9110 preconditions (If-Match, If-None-Match) for single-record operations.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { RevisionNotCurrentError } from '../domain/outcomes.js'
import { NotFoundError, ValidationError } from '../http/errors.js'
import type { ExpectedRevisions, RecordStore, Versioned } from '../storage/types.js'
import { recordId } from './input.js'
import { Representations } from './representation.js'

// The tail of the UUIDv7 (48 bits: the low end of its per-millisecond counter, which starts at a
// random value, and 32 random bits) makes a tag of one record useless on another that happens
// to share its revision, at no cost per request (a digest of the id was a measurable share of a GET).
const idTail = (id: string): string => id.slice(-12)

/** The record's strong ETag: its revision, which changes on every write, bound to its id. */
export function etagOf (id: string, revision: number): string {
  return `"${revision}-${idTail(id)}"`
}

/** Sets the ETag of `versioned` on the reply and answers its record. */
export function withEtag<T> (reply: FastifyReply, id: string, versioned: Versioned<T>): T {
  reply.header('etag', etagOf(id, versioned.revision))
  return versioned.record
}

const records = new Representations<Versioned<unknown>>()

/** A GET's answer: the record with its ETag, 304 when the client's copy is current, 404 when there is none. */
export function readAnswer<T> (request: FastifyRequest, reply: FastifyReply, kind: string, id: string, found: Versioned<T> | null): FastifyReply {
  if (found === null) throw new NotFoundError(kind, id)
  const etag = etagOf(id, found.revision)
  if (notModified(request.headers['if-none-match'], etag)) return reply.header('etag', etag).code(304).send()
  return records.send(reply, found, () => ({ body: found.record, headers: { etag } }))
}

// An entity-tag may contain commas, so the list is read tag by tag rather than split on commas.
const entityTag = /\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/gy

/** The tags of an If-Match or If-None-Match value, '*' for "any", or [] when it holds no valid tag. */
function tagsOf (value: string): { weak: boolean, tag: string }[] | '*' {
  if (value.trim() === '*') return '*'
  const tags: { weak: boolean, tag: string }[] = []
  entityTag.lastIndex = 0
  for (let match = entityTag.exec(value); match !== null && match[0] !== ''; match = entityTag.exec(value)) {
    tags.push({ weak: match[1] !== undefined, tag: `"${match[2]}"` })
  }
  return tags
}

/**
 * The revisions an If-Match value accepts for the record `id` (null: any, when absent or '*').
 * Strong comparison: weak tags and tags of other records accept nothing, so the write gets 412.
 */
export function expectedRevisions (ifMatch: string | undefined, id: string): ExpectedRevisions {
  if (ifMatch === undefined) return null
  const tags = tagsOf(ifMatch)
  if (tags === '*') return null
  const suffix = `-${idTail(id)}"`
  return tags
    .filter(t => !t.weak && t.tag.endsWith(suffix) && /^"\d+-/.test(t.tag))
    .map(t => Number(t.tag.slice(1, t.tag.indexOf('-'))))
}

/** Whether If-None-Match names the current tag (weak comparison, RFC 9110 §13.1.2): answer 304. */
function notModified (ifNoneMatch: string | undefined, current: string): boolean {
  if (ifNoneMatch === undefined) return false
  const tags = tagsOf(ifNoneMatch)
  return tags === '*' || tags.some(t => t.tag === current)
}

/** What a PUT replaces a record with: the path's id, the validated body, its values, and If-Match. */
export interface Replacement<V> {
  kind: string
  idField: string
  id: string
  body: Record<string, unknown>
  values: V
  ifMatch: string | undefined
}

/**
 * A PUT. A replacement may carry the server-set fields as a GET returned them (read, change one field,
 * PUT back), and its schema allows any timestamp in them: the timestamps are ignored whatever they
 * hold, never stored and never compared. Guarding against a lost update is If-Match's job (a body read
 * before someone else's change, sent with its tag, is a 412); comparing the timestamps refused bodies
 * the contract allows and gave a write without If-Match a precondition its client never asked for.
 * The id may only be the path's (in any letter case, as UUIDs compare: RFC 9562) or be left out, else
 * 400. That refusal keeps RFC 9110's order (§13.2.1, §13.2.2: 404 for no record, then If-Match's 412,
 * then the body's content), so it alone reads the record first; every other PUT leaves If-Match to
 * storage, which checks it in the write itself.
 */
export async function replaceRecord<T, V> (store: RecordStore<T, V>, replacement: Replacement<V>): Promise<Versioned<T>> {
  const { kind, idField, id, body, values } = replacement
  const expected = expectedRevisions(replacement.ifMatch, id)
  const sentId = body[idField]
  if (typeof sentId === 'string' && recordId(sentId) !== id) {
    const current = await store.get(id)
    if (current === null) throw new NotFoundError(kind, id)
    if (expected !== null && !expected.includes(current.revision)) throw RevisionNotCurrentError.of(kind, expected, current.revision)
    throw new ValidationError('body', [{ detail: `must be the id in the path, ${id}, or be left out`, pointer: `#/${idField}` }])
  }
  const replaced = await store.replace(id, values, expected)
  if (replaced === null) throw new NotFoundError(kind, id)
  return replaced
}
