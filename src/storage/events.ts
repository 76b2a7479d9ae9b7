// The change feed's events as every engine stores them: their types and their CloudEvents envelope.

export const eventTypes = ['book.created', 'book.replaced', 'book.deleted', 'student.created', 'student.replaced'] as const
export type EventType = typeof eventTypes[number]

/** CloudEvents `source`: the same for every event of this service (ids are unique per database and carry its feed id). */
export const eventSource = '/books-students-api'

/**
 * The envelope of one change as JSON text, every attribute but `id` (which is the event's position,
 * known only once it is stored). Written once, at the change, and served verbatim ever after.
 */
export function eventEnvelope (type: EventType, subject: string, time: string, id: string, revision: number, object: unknown): string {
  return `{"specversion":"1.0","source":"${eventSource}","type":"${type}","subject":${JSON.stringify(subject)},"time":"${time}",` +
    `"datacontenttype":"application/json","data":{"id":"${id}","revision":${revision},"object":${JSON.stringify(object)}}}`
}

/** The event as served: its envelope with its id. */
export function eventJson (position: string, envelope: string): string {
  return `{"id":"${position}",${envelope.slice(1)}`
}
