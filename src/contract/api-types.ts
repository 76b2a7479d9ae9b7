// Types derived from the contract (generated/openapi.d.ts): record shapes and the typed handler map.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { components, operations, webhooks } from '../../generated/openapi.js'

/** The operations a client calls; the contract's webhooks are requests this service sends, never routes. */
type WebhookOperation = webhooks[keyof webhooks]['post']
export type OperationId = { [Id in keyof operations]: operations[Id] extends WebhookOperation ? never : Id }[keyof operations]
export type Book = components['schemas']['Book']
export type BookInput = components['schemas']['BookInput']
export type Student = components['schemas']['Student']
export type StudentInput = components['schemas']['StudentInput']
export type Problem = components['schemas']['Problem']
export type ProblemError = components['schemas']['ProblemError']
export type Event = components['schemas']['Event']
export type BookEvent = components['schemas']['BookEvent']
export type StudentEvent = components['schemas']['StudentEvent']
export type WebhookEndpoint = components['schemas']['WebhookEndpoint']
export type WebhookEndpointInput = components['schemas']['WebhookEndpointInput']
export type Import = components['schemas']['Import']
export type ImportProblem = components['schemas']['ImportProblem']

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never
type SuccessStatus = 200 | 201

export interface RouteOf<Id extends OperationId> {
  Params: NonNullable<operations[Id]['parameters']['path']>
  Querystring: NonNullable<operations[Id]['parameters']['query']>
  Body: operations[Id] extends { requestBody: infer B } ? JsonOf<B> : undefined
}

/** The 2xx body the contract declares for the operation (never for a 204). */
export type SuccessBody<Id extends OperationId> = {
  [S in keyof operations[Id]['responses'] & SuccessStatus]: JsonOf<operations[Id]['responses'][S]>
}[keyof operations[Id]['responses'] & SuccessStatus]

export type Handler<Id extends OperationId> = (
  request: FastifyRequest<RouteOf<Id>>,
  reply: FastifyReply
) => Promise<SuccessBody<Id> | FastifyReply>

/** One handler per operationId: a missing or misnamed handler is a compile error. */
export type ServiceHandlers = { [Id in OperationId]: Handler<Id> }
