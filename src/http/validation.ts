// Request validators: bodies are checked strictly (no coercion, no stripping), path and query strings are coerced.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { isIsbn } from '../domain/isbn.js'

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
  // The contract's deprecation dates (docs/versioning.md) annotate body fields; they validate nothing.
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

/** An integer parameter as a client serialises one: an optional minus sign and decimal digits, nothing else. */
const decimalInteger = /^-?[0-9]+$/

/** Said of a parameter whose value is not a decimal integer: the shape the client must fix. */
const decimalIntegerDetail = 'must be an integer written in decimal digits, with an optional minus sign (no spaces, sign +, fraction, exponent or 0x)'

/** The properties of an object schema that are integers. */
function integerProperties ({ properties = {} }: ObjectSchema): string[] {
  return Object.entries(properties).filter(([, schema]) => [(schema as { type?: unknown }).type].flat().includes('integer')).map(([name]) => name)
}

type StringsValidator = ((data: Record<string, unknown>) => boolean) & { errors?: ErrorObject[] | null }

/**
 * AJV coerces a string to a number with Number(), which also reads ' 10', '10.0', '1e1', '0x10' and
 * 'Infinity', and a non-finite result then skips minimum and maximum (ajv-validator/ajv#2212, still
 * open): it has no setting for decimal-only coercion. So integer members are turned into numbers
 * here, from decimal digits only, and AJV sees numbers; everything else it coerces as before.
 */
function decimalIntegers (validate: ValidateFunction, names: string[]): StringsValidator {
  if (names.length === 0) return validate
  const checked: StringsValidator = data => {
    const malformed: ErrorObject[] = []
    for (const name of names) {
      const value = data[name]
      if (typeof value !== 'string') continue
      if (decimalInteger.test(value)) {
        // Beyond 308 digits Number() gives ±Infinity; the largest double keeps the value out of bounds, as it is.
        const number = Number(value)
        data[name] = Number.isFinite(number) ? number : Math.sign(number) * Number.MAX_VALUE
      } else {
        malformed.push({ instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, keyword: 'decimalInteger', params: {}, message: decimalIntegerDetail })
        // Out of AJV's way (its coercion would read it), so that it reports the other members' problems.
        delete data[name]
      }
    }
    const valid = validate(data)
    checked.errors = malformed.length === 0 ? validate.errors : [...malformed, ...validate.errors ?? []]
    return valid && malformed.length === 0
  }
  return checked
}

/**
 * Validators compiled once per process, by what they check: every app built here (a test builds
 * hundreds) gets the same functions for the same contract, and AJV, which caches by schema object,
 * does not compile (and keep) one more copy per app.
 */
const compiled = new Map<string, unknown>()

function compiledOnce<V> (key: string, compile: () => V): V {
  if (!compiled.has(key)) compiled.set(key, compile())
  return compiled.get(key) as V
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  return compiledOnce(`${String(httpPart)} ${JSON.stringify(schema)}`, () => {
    if (httpPart === 'body') return bodies.compile(schema)
    const strict = httpPart === 'headers' ? lowerCaseHeaders(schema) : schema
    return decimalIntegers(strings.compile(strict), integerProperties(strict))
  })
}

/** `node` with every `$ref` into the document replaced by what it points at (the contract's schemas have no cycles). */
function inlined (node: unknown, document: object): unknown {
  if (Array.isArray(node)) return node.map(item => inlined(item, document))
  if (node === null || typeof node !== 'object') return node
  const { $ref, ...rest } = node as Record<string, unknown>
  if (typeof $ref === 'string') {
    const target = $ref.slice(2).split('/').reduce<unknown>((at, key) => (at as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')], document)
    return inlined(target, document)
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inlined(value, document)]))
}

/** A validator of one of the contract's component schemas, as strict as a body's (an imported row is validated as a create's body is). */
export function schemaValidator (document: object, name: string): ValidateFunction {
  const schema = inlined({ $ref: `#/components/schemas/${name}` }, document) as object
  return compiledOnce(`component ${JSON.stringify(schema)}`, () => bodies.compile(schema))
}
