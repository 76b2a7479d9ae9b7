// The typed client SDK (the npm package books-students-api-client): openapi-fetch driven by the types generated from openapi.yaml.
import createFetchClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './openapi.js'

export type { components, paths }
export type Book = components['schemas']['Book']
export type BookInput = components['schemas']['BookInput']
/** A PUT body: the writable fields, or a Book as read with fields changed. */
export type BookReplacement = components['schemas']['BookReplacement']
export type Student = components['schemas']['Student']
export type StudentInput = components['schemas']['StudentInput']
/** A PUT body: the writable fields, or a Student as read with fields changed. */
export type StudentReplacement = components['schemas']['StudentReplacement']
/** Every 4xx/5xx body: RFC 9457 problem details. */
export type Problem = components['schemas']['Problem']
/** One change, as `/events` and `/events/stream` give it and webhooks deliver it; `type` tells which. */
export type Event = components['schemas']['Event']
export type BookEvent = components['schemas']['BookEvent']
export type StudentEvent = components['schemas']['StudentEvent']
export type WebhookEndpoint = components['schemas']['WebhookEndpoint']
/**
 * The event types this version of the contract names (a later one may add more): what `follow({ types })`
 * filters on, as a webhook endpoint's `types` list them.
 */
export type EventTypeName = components['schemas']['WebhookEndpointInput']['types'][number]

/** The paged lists, and the record type each one yields. */
export type ListPath = '/books' | '/api/students'
export type ItemOf<P extends ListPath> = paths[P]['get']['responses'][200]['content']['application/json']['items'][number]
/** A list's query parameters (filters, `q`, `sort`, `limit`); the cursor is the iteration's own. */
export type ListQueryOf<P extends ListPath> = Omit<NonNullable<paths[P]['get']['parameters']['query']>, 'cursor'>

/** A problem answer, thrown where the client cannot hand it back as a value (inside an iteration). */
export class ProblemError extends Error {
  readonly problem: Problem
  constructor (problem: Problem) {
    super(`${problem.status} ${problem.title}: ${problem.detail ?? problem.type}`)
    this.name = 'ProblemError'
    this.problem = problem
  }
}

// Each optional member also takes an explicit `undefined`, so `apiKey: process.env.API_KEY` compiles
// under `exactOptionalPropertyTypes` (on in the tsconfig that `tsc --init` writes) and means "no key".
export interface ClientOptions {
  /** Origin (and optional path prefix) of the API, e.g. `https://books.example.org`. */
  baseUrl: string
  /** Sent on every request as `Authorization: Bearer <apiKey>`; none when undefined. */
  apiKey?: string | undefined
  /** Extra headers for every request. */
  headers?: Record<string, string> | undefined
  /** A fetch to use instead of the global one (proxies, instrumentation, tests). */
  fetch?: ((input: Request) => Promise<Response>) | undefined
}

export interface FollowOptions {
  /** Follow from after this event id (or `next_cursor`, `Events-Cursor`); from now when absent. */
  after?: string | undefined
  /** Only these event types (all the key may read when absent). */
  types?: EventTypeName[] | undefined
  /** Stops following: the generator then returns. */
  signal?: AbortSignal | undefined
}

/**
 * The media types the client's methods read: JSON and problems. A list's exports (CSV, NDJSON) are
 * streams to read with fetch; typed as bodies, they made every list's `data` a union with a string.
 */
export type JsonMediaType = 'application/json' | 'application/problem+json'

export interface BooksStudentsClient extends Client<paths, JsonMediaType> {
  /**
   * Every event from `after` on, live, in the feed's order: reads /events/stream and, whenever the
   * stream ends or the connection drops, reconnects with the last id it saw, so nothing is missed or
   * repeated; a 5xx answer (a gateway while nodes restart, a fault at the server) is waited out the same
   * way, after its Retry-After when it gives one. Store `event.id` once an event is processed and pass
   * it as `after` when starting again. A refusal (4xx) is thrown as a ProblemError: a 410
   * (`/problems/cursor-expired`) means re-list, then follow from the list's `Events-Cursor`.
   */
  follow (options?: FollowOptions): AsyncGenerator<Event, void, undefined>
  /**
   * Every record of a list that matches `query` (filters, `q`, `sort`, page size), page after page,
   * following `next_cursor` until it is null. A problem answer on any page is thrown as a ProblemError.
   */
  all<P extends ListPath>(path: P, query?: ListQueryOf<P>): AsyncGenerator<ItemOf<P>, void, undefined>
}

export function createClient (options: ClientOptions): BooksStudentsClient {
  const client = createFetchClient<paths, JsonMediaType>({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: {
      ...options.headers,
      ...(options.apiKey !== undefined && { authorization: `Bearer ${options.apiKey}` })
    }
  })

  async function * all<P extends ListPath> (path: P, query?: ListQueryOf<P>): AsyncGenerator<ItemOf<P>, void, undefined> {
    let cursor: string | undefined
    do {
      // Each page repeats the query: a cursor continues only the query that issued it.
      const { data, error } = await client.GET(path as '/books', { params: { query: { ...query, cursor } as NonNullable<paths['/books']['get']['parameters']['query']> } })
      if (error !== undefined) throw new ProblemError(error)
      // openapi-fetch types a union path's page as either list's; `path` decides which one it is.
      yield * data.items as ItemOf<P>[]
      cursor = data.next_cursor ?? undefined
    } while (cursor !== undefined)
  }

  const fetchStream = options.fetch ?? (async (request: Request) => fetch(request))

  async function * follow ({ after, types, signal }: FollowOptions = {}): AsyncGenerator<Event, void, undefined> {
    let position = after
    // The server's advice (its `retry:` field) for how long to wait before reconnecting.
    let retry = 3000
    // A function, not the property: an abort happens between awaits, where TypeScript's narrowing cannot see it.
    const aborted = () => signal?.aborted === true
    while (!aborted()) {
      // Each connection gets a signal of its own, tied to the caller's only while it lasts: a Request keeps
      // a listener on the signal it is given, and a follower reconnects on one signal for months.
      const connection = new AbortController()
      const cut = () => { connection.abort() }
      signal?.addEventListener('abort', cut, { once: true })
      let wait: number
      try {
        const query = new URLSearchParams(types === undefined ? [] : [['types', types.join(',')]])
        const request = new Request(`${options.baseUrl.replace(/\/$/, '')}/events/stream?${query}`, {
          headers: {
            accept: 'text/event-stream',
            ...options.headers,
            ...(options.apiKey !== undefined && { authorization: `Bearer ${options.apiKey}` }),
            ...(position !== undefined && { 'last-event-id': position })
          },
          signal: connection.signal
        })
        wait = yield * connect(request)
      } finally {
        signal?.removeEventListener('abort', cut)
      }
      if (aborted()) return
      await pause(wait, signal)
    }

    /** One connection: its events, then how long to wait before the next (a refusal is thrown). */
    async function * connect (request: Request): AsyncGenerator<Event, number, undefined> {
      let response: Response
      try {
        response = await fetchStream(request)
      } catch {
        // The network failed (a node went away): the next connection resumes where this one stopped.
        return retry
      }
      if (response.status >= 500) {
        // A fault on the way or at the server (a gateway while nodes restart, a database coming back), not a
        // refusal: wait as it asks, or as for a dropped connection, then resume from the last id.
        await response.body?.cancel()
        return retryAfter(response) ?? retry
      }
      if (response.status !== 200) throw new ProblemError(await problemOf(response))
      try {
        for await (const frame of frames(response.body!)) {
          if (frame.retry !== undefined) retry = frame.retry
          if (frame.id !== undefined) position = frame.id
          if (frame.data !== undefined) yield JSON.parse(frame.data) as Event
          // Stopped while the caller held the event: read no further (leaving the loop cancels the body).
          if (aborted()) break
        }
      } catch {
        // Cut off mid-stream: the next connection resumes from the last id.
      }
      return retry
    }
  }

  return Object.assign(client, { all, follow })
}

/** Retry-After in milliseconds, when it gives a number of seconds. */
function retryAfter (response: Response): number | undefined {
  const seconds = response.headers.get('retry-after')
  return seconds !== null && /^\d+$/.test(seconds) ? Number(seconds) * 1000 : undefined
}

/** The answer's problem details; for a body that is none (a proxy's page), RFC 9457's about:blank for its status. */
async function problemOf (response: Response): Promise<Problem> {
  const text = await response.text()
  try {
    const body = JSON.parse(text) as Problem
    if (typeof body === 'object' && body !== null && body.status === response.status) return body
  } catch {}
  return { type: 'about:blank', title: response.statusText === '' ? `HTTP ${response.status}` : response.statusText, status: response.status }
}

/** Waits `ms`, or less when `signal` aborts (it has not yet: callers check). */
async function pause (ms: number, signal: AbortSignal | undefined): Promise<void> {
  await new Promise<void>(resolve => {
    // Either way the listener goes: a follower pauses at every reconnection, for months, on one signal.
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

interface Frame { id?: string, data?: string, retry?: number }

/** Server-Sent Events frames as the HTML standard parses them: fields up to a blank line; comments skipped. */
async function * frames (body: ReadableStream<Uint8Array>): AsyncGenerator<Frame, void, undefined> {
  let frame: Frame = {}
  for await (const line of lines(body)) {
    if (line === '') {
      yield frame
      frame = {}
      continue
    }
    const colon = line.indexOf(':')
    if (colon === 0) continue
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') frame.id = value
    else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`
    else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value)
  }
}

/** The body's lines, each ended by CRLF, CR or LF; an unended last line is dropped, as the standard says. */
async function * lines (body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let end: number
    // A CR that ends the text so far may be the first half of a CRLF split across chunks: the next one tells.
    while ((end = buffer.search(/\r\n|\r(?!$)|\n/)) >= 0) {
      yield buffer.slice(0, end)
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
    }
  }
  if (buffer.endsWith('\r')) yield buffer.slice(0, -1)
}
