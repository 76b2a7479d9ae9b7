// Response serializers compiled once per process, by the schema they write, as the validators are (src/http/validation.ts).
import fastJsonStringify from 'fast-json-stringify'
import type { FastifySerializerCompiler } from 'fastify'

type Serializer = (data: unknown) => string

const compiled = new Map<string, Serializer>()

/**
 * Fastify's own serializer (fast-json-stringify of the route's response schema; the app shares no
 * schemas and sets no options), compiled once for every app built here: a test process builds
 * hundreds, and each would compile every response schema of the contract again.
 */
export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  const key = JSON.stringify(schema)
  let serializer = compiled.get(key)
  if (serializer === undefined) {
    serializer = fastJsonStringify(schema) as Serializer
    compiled.set(key, serializer)
  }
  return serializer
}
