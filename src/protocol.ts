// HTTP rules the contract cannot state: 405 with Allow, problem 404, 406 on Accept, strict query strings.
import type { FastifyInstance, RouteOptions } from 'fastify'
import { sendProblem } from './problems.js'

const servedTypes = ['application/json', 'application/problem+json']

/** True for routes fastify-openapi-glue made from an operation of openapi.yaml. */
export const isOperationRoute = (route: RouteOptions): boolean =>
  typeof (route.schema as { operationId?: unknown } | undefined)?.operationId === 'string'

function asArray<T> (value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

/** Must be called before the operations are registered: hooks reach only routes added after them. */
export function applyProtocolRules (app: FastifyInstance): void {
  const allowed: { pattern: RegExp, methods: Set<string> }[] = []

  app.addHook('onRoute', route => {
    if (!isOperationRoute(route)) return
    const pattern = new RegExp('^' + route.url.replace(/:[^/]+/g, '[^/]+') + '$')
    const entry = allowed.find(a => a.pattern.source === pattern.source) ?? { pattern, methods: new Set<string>() }
    if (!allowed.includes(entry)) allowed.push(entry)
    for (const method of asArray(route.method)) entry.methods.add(method)

    // Unknown query parameters are refused (400), not ignored: a typo must not pass silently.
    const schema = route.schema ?? {}
    schema.querystring = { type: 'object', properties: {}, ...(schema.querystring as object), additionalProperties: false }
    route.schema = schema

    // 406 before any work is done when the client accepts neither JSON nor problem+json.
    route.onRequest = [...asArray(route.onRequest), async (request, reply) => {
      if (request.accepts().type(servedTypes) === false) {
        return sendProblem(reply, {
          type: 'about:blank',
          status: 406,
          detail: `This operation answers only with ${servedTypes.join(' or ')}`
        })
      }
    }]
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? ''
    const match = allowed.find(a => a.pattern.test(path))
    if (match !== undefined) {
      const allow = [...match.methods].sort().join(', ')
      reply.header('allow', allow)
      return sendProblem(reply, { type: 'about:blank', status: 405, detail: `${request.method} is not allowed here; allowed: ${allow}` })
    }
    return sendProblem(reply, { type: 'about:blank', status: 404, detail: `Nothing is served at ${path}` })
  })
}
