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

export interface BooksStudentsClient extends Client<paths> {
  /**
   * Every record of a list that matches `query` (filters, `q`, `sort`, page size), page after page,
   * following `next_cursor` until it is null. A problem answer on any page is thrown as a ProblemError.
   */
  all<P extends ListPath>(path: P, query?: ListQueryOf<P>): AsyncGenerator<ItemOf<P>, void, undefined>
}

export function createClient (options: ClientOptions): BooksStudentsClient {
  const client = createFetchClient<paths>({
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

  return Object.assign(client, { all })
}
