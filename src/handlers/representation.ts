// Serialised answers remembered per stored object, so a record or page handed out again unchanged is not serialised again.
import type { FastifyReply } from 'fastify'

const json = 'application/json; charset=utf-8'

interface Answer {
  body: string
  headers: Record<string, string>
}

/**
 * Sends a 200 answer built from `source`, a record or a page's items the repository keeps in its cache
 * and never changes: `build` runs, and the body is serialised by the route's response schema, the first time
 * only, for as long as `source` lives. Serialising a list page of 20 and signing its cursor were a
 * fifth of a list's CPU (issue 6).
 */
export class Representations<S extends object> {
  readonly #answers = new WeakMap<S, Answer>()

  send<B> (reply: FastifyReply, source: S, build: () => { body: B, headers?: Record<string, string> }): FastifyReply {
    let answer = this.#answers.get(source)
    if (answer === undefined) {
      const { body, headers = {} } = build()
      // reply.serialize() cannot pick a serialiser by media type (the contract's are per media type).
      const serialize = reply.getSerializationFunction('200', 'application/json')!
      answer = { body: serialize(body as Record<string, unknown>), headers }
      this.#answers.set(source, answer)
    }
    return reply.headers(answer.headers).type(json).send(answer.body)
  }
}
