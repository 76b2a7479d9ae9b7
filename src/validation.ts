// Request validators: bodies are checked strictly (no coercion, no stripping), path and query strings are coerced.
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { isIsbn } from './isbn.js'

const common: Options = {
  allErrors: true, // report every problem at once; schemas bound every string and array
  removeAdditional: false, // an unknown field is an error, never silently dropped
  useDefaults: true,
  allowUnionTypes: true, // OpenAPI 3.1 nullability: type: [string, 'null']
  strict: true
}

function ajv (options: Options): Ajv {
  const instance = new Ajv({ ...common, ...options })
  addFormats.default(instance)
  // The contract's own format: the check digit JSON Schema cannot state (openapi.yaml explains it).
  instance.addFormat('isbn', { type: 'string', validate: isIsbn })
  // The contract's deprecation dates (README.md, Versioning) annotate body fields; they validate nothing.
  instance.addKeyword('x-deprecated-at').addKeyword('x-sunset')
  // Event types are an open list (clients ignore ones they do not know); the known ones are documentation.
  instance.addKeyword('x-extensible-enum')
  return instance
}

/** A JSON body means what it says: "1965" is not the integer 1965. */
const bodies = ajv({ coerceTypes: false })
/** Path and query values arrive as strings and are coerced to the declared types. */
const strings = ajv({ coerceTypes: 'array' })

type ObjectSchema = { properties?: Record<string, unknown>, required?: string[] }

/**
 * Node lowercases request header names, and Fastify lowercases header schemas only for its own
 * compiler; with ours, `Idempotency-Key` from the contract would never meet `idempotency-key`.
 */
function lowerCaseHeaders (schema: ObjectSchema): ObjectSchema {
  return {
    ...schema,
    ...(schema.properties && { properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k.toLowerCase(), v])) }),
    ...(schema.required && { required: schema.required.map(k => k.toLowerCase()) })
  }
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body'
    ? bodies.compile(schema)
    : strings.compile(httpPart === 'headers' ? lowerCaseHeaders(schema) : schema)
