// Pages for people at the URLs they are likely to open: / leads to the docs, and each problem type URI explains its problem.
import type { FastifyInstance } from 'fastify'
import type { OpenApiDocument } from '../contract/openapi-document.js'
import { sendProblem } from './problems.js'

/** One entry of the contract's `x-problem-types`. */
export interface ProblemType {
  type: string
  title: string
  status: number
  description: string
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
/** The descriptions use Markdown's `code` spans, as the rest of openapi.yaml does. */
const codeSpans = (html: string): string => html.replace(/`([^`]+)`/g, '<code>$1</code>')

function page ({ type, title, status, description }: ProblemType): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} (${status}): ${escapeHtml(type)}</title></head>
<body><h1>${escapeHtml(title)}</h1>
<p>HTTP status ${status}; problem type <code>${escapeHtml(type)}</code>.</p>
<p>${codeSpans(escapeHtml(description))}</p>
<p>See <a href="/docs">the API documentation</a> and its contract, <a href="/docs/yaml">openapi.yaml</a>.</p>
</body></html>
`
}

/** Registers `/` and `/problems/{name}`; `headers` are the security headers for HTML pages. */
export function registerPages (app: FastifyInstance, served: OpenApiDocument, headers: Readonly<Record<string, string>>): void {
  const problemTypes = served['x-problem-types'] as ProblemType[]
  const pages = new Map(problemTypes.map(problemType => [problemType.type.replace('/problems/', ''), page(problemType)]))

  // A person who opens the bare origin is sent to Swagger UI; a program reading the body finds the links.
  app.get('/', async (_request, reply) => reply.code(302).header('location', '/docs').send({
    docs: '/docs',
    openapi: '/docs/json',
    books: '/books',
    students: '/api/students'
  }))

  app.get<{ Params: { name: string } }>('/problems/:name', async (request, reply) => {
    const html = pages.get(request.params.name)
    if (html === undefined) return sendProblem(reply, { type: 'about:blank', status: 404, detail: `No problem type is named ${request.params.name}` })
    return reply.headers(headers).type('text/html; charset=utf-8').send(html)
  })
}
