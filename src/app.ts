// buildApp(config): the whole service as a Fastify instance, routed from openapi.yaml; it never listens.
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import accepts from '@fastify/accepts'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { errorCodes, type FastifyInstance } from 'fastify'
import openapiGlue from 'fastify-openapi-glue'
import type { Config } from './config.js'
import { serviceHandlers } from './handlers/index.js'
import { errorHandler } from './problems.js'
import { registerOperations } from './protocol.js'
import { openSqliteRepositories } from './repositories/sqlite.js'
import type { Repositories } from './repositories/types.js'
import { validatorCompiler } from './validation.js'

/** The contract, found from src/ and dist/ alike. */
export const specPath = fileURLToPath(new URL('../openapi.yaml', import.meta.url))

// A caller's request id is reused only when it is short and plain, so it is safe in logs and headers.
const requestIdPattern = /^[\w.:-]{1,128}$/

export interface AppDependencies {
  /** Storage; SQLite at config.databasePath unless given. */
  repositories: Repositories
  /** Where logs go; stdout unless given. */
  logStream: { write (line: string): void }
}

export async function buildApp (config: Config, dependencies: Partial<AppDependencies> = {}): Promise<FastifyInstance> {
  const repositories = dependencies.repositories ?? openSqliteRepositories(config.databasePath, { synchronous: config.databaseSynchronous })
  const app = Fastify({
    logger: { level: config.logLevel, ...(dependencies.logStream && { stream: dependencies.logStream }) },
    bodyLimit: config.bodyLimit,
    genReqId: request => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID()
    },
    return503OnClosing: true
  })
  app.addHook('onClose', async () => repositories.close())

  app.setValidatorCompiler(validatorCompiler)
  app.setErrorHandler(errorHandler)
  // Fastify parses text/plain by default; the contract accepts JSON bodies only (415 otherwise).
  app.removeContentTypeParser('text/plain')
  // The glue warns at start about every media type in the spec that has no parser, response types
  // included; refusing problem+json bodies explicitly keeps the 415 and silences the false alarm.
  app.addContentTypeParser('application/problem+json', (request, _body, done) => {
    done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']))
  })
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  await app.register(accepts)

  await app.register(swagger, { mode: 'static', specification: { path: specPath, baseDir: fileURLToPath(new URL('..', import.meta.url)) } })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } })
  const handlers = await serviceHandlers(repositories, config.idempotencyTtlSeconds)
  await registerOperations(app, async operations => {
    await operations.register(openapiGlue, { specification: specPath, serviceHandlers: handlers, securityHandlers: {} })
  })
  return app
}
