// Checks every response a test receives against openapi.yaml: declared status, media type, schema, headers.
import { readFileSync } from 'node:fs'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { Response as InjectResponse } from 'light-my-request'
import { parse } from 'yaml'
import { parse as parseCsv } from 'csv-parse/sync'
import { isIsbn } from '../src/domain/isbn.js'
import { specPath } from '../src/contract/openapi-document.js'

type Json = Record<string, any>

export const spec: Json = parse(readFileSync(specPath, 'utf8'))

const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, allowUnionTypes: true })
addFormats.default(ajv)
// openapi.yaml's own format, as its description defines it.
ajv.addFormat('isbn', { type: 'string', validate: isIsbn })
ajv.addSchema(spec, 'spec')

const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')

/** The node a $ref leads to (following chains), with its JSON Pointer. */
export function resolve (node: Json, pointer: string): { node: Json, pointer: string } {
  if (typeof node['$ref'] !== 'string') return { node, pointer }
  const target = node['$ref'] as string
  const value = target.slice(2).split('/').reduce<Json>((n, s) => n[s.replace(/~1/g, '/').replace(/~0/g, '~')], spec)
  return resolve(value, target)
}

const validators = new Map<string, ValidateFunction>()
/** A validator for the schema at a JSON Pointer into openapi.yaml, compiled once. */
export function validatorAt (pointer: string): ValidateFunction {
  let validate = validators.get(pointer)
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `spec${pointer}` })
    validators.set(pointer, validate)
  }
  return validate
}

// Concrete paths first, as OpenAPI matches them before templated ones: `/books/export.csv` is not `/books/{book_id}`.
const templates = Object.keys(spec['paths']).sort((a, b) => Number(a.includes('{')) - Number(b.includes('{'))).map(path => ({
  path,
  // An empty segment still reaches the operation (Fastify matches `/books/` with book_id ''), which answers 400.
  pattern: new RegExp('^' + path.replace(/\{[^}]+\}/g, '[^/]*') + '$')
}))

export interface Operation {
  path: string
  method: string
  operationId: string
}

/** The spec operation a request goes to, or undefined when the path or the method is not declared. */
export function operationFor (method: string, url: string): Operation | undefined {
  const path = requestedPath(url)
  const template = templates.find(t => t.pattern.test(path))
  const lower = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase()
  const operation = template && spec['paths'][template.path][lower]
  return operation && { path: template.path, method: lower, operationId: operation.operationId }
}

// Request headers with a meaning in the contract: sending one to an operation that does not declare it is a test bug.
const contractHeaders = ['if-match', 'if-none-match', 'idempotency-key']

/** The problems of `res` against the contract, as readable lines (empty when it conforms). */
/**
 * The path a request reaches: clients (and app.inject) resolve dot segments, `%2e` included, as
 * WHATWG URL parsing does, so `/books/..` is a request for `/`.
 */
const requestedPath = (url: string): string => new URL(url.split('?')[0]!, 'http://service').pathname

export function contractProblems (method: string, url: string, res: InjectResponse, requestHeaders: Record<string, unknown> = {}): string[] {
  const problems: string[] = []
  const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim()
  const operation = operationFor(method, url)
  let response: { node: Json, pointer: string }
  // The bare origin is a page for people outside the contract: it leads to the docs.
  if (operation === undefined && requestedPath(url) === '/' && res.statusCode === 302) return res.headers['location'] === '/docs' ? [] : ['/ does not lead to /docs']
  if (operation === undefined) {
    // Undeclared path or method: the service answers 404 or 405 with a problem.
    if (![404, 405].includes(res.statusCode)) problems.push(`undeclared ${method} ${url} answered ${res.statusCode}`)
    response = resolve({ $ref: '#/components/responses/NotFound' }, '')
  } else {
    const pointer = `#/paths/${escape(operation.path)}/${operation.method}/responses/${res.statusCode}`
    const item = spec['paths'][operation.path]
    const parameters = [...item.parameters ?? [], ...item[operation.method].parameters ?? []].map((p: Json) => resolve(p, '').node)
    for (const name of Object.keys(requestHeaders).map(h => h.toLowerCase()).filter(h => contractHeaders.includes(h))) {
      if (!parameters.some(p => p['in'] === 'header' && String(p['name']).toLowerCase() === name)) {
        problems.push(`${operation.operationId} does not declare the request header ${name}`)
      }
    }
    const declared = item[operation.method].responses[String(res.statusCode)]
    if (declared === undefined) return [...problems, `${operation.operationId} does not declare status ${res.statusCode}`]
    response = resolve(declared, pointer)
    for (const [name, header] of Object.entries<Json>(response.node['headers'] ?? {})) {
      const { node, pointer: headerPointer } = resolve(header, `${response.pointer}/headers/${escape(name)}`)
      const value = res.headers[name.toLowerCase()]
      if (value === undefined) {
        if (node['required'] === true) problems.push(`${operation.operationId} ${res.statusCode} lacks the ${name} header`)
        continue
      }
      const validate = validatorAt(`${headerPointer}/schema`)
      // Header values are text on the wire: a numeric schema (Retry-After) is met by a numeral.
      const text = String(value)
      const numeral = /^-?\d+(\.\d+)?$/.test(text)
      if (!validate(text) && !(numeral && validate(Number(text)))) problems.push(`${name} header ${JSON.stringify(value)} ${validate.errors?.[0]?.message}`)
    }
  }
  const content: Json | undefined = response.node['content']
  const isHead = method.toUpperCase() === 'HEAD'
  if (content === undefined) {
    if (res.payload !== '') problems.push(`status ${res.statusCode} declares no body but got ${res.payload.slice(0, 80)}`)
    return problems
  }
  if (content[mediaType] === undefined) {
    problems.push(`status ${res.statusCode} has content type ${mediaType || '(none)'}, declared: ${Object.keys(content).join(', ')}`)
    return problems
  }
  if (isHead) {
    if (res.payload !== '') problems.push('HEAD response has a body')
    return problems
  }
  // An export: each NDJSON line is a record of its list; a CSV's header names the same record's fields, each row has a cell per field.
  if (operation !== undefined && (mediaType === 'application/x-ndjson' || mediaType === 'text/csv')) return [...problems, ...exportProblems(operation.path, mediaType, res.payload)]
  const validate = validatorAt(`${response.pointer}/content/${escape(mediaType)}/schema`)
  let body: unknown
  try {
    body = JSON.parse(res.payload)
  } catch {
    return [...problems, `body is not JSON: ${res.payload.slice(0, 80)}`]
  }
  if (!validate(body)) problems.push(...(validate.errors ?? []).map(e => `body${e.instancePath} ${e.message}`))
  if (mediaType === 'application/problem+json' && (body as Json)['status'] !== res.statusCode) {
    problems.push('problem status differs from the HTTP status')
  }
  return problems
}

/**
 * The schema of one record an export path (`/books/export.csv`, `…/export.ndjson`) writes: an item of
 * its list's page. The export's own schema is a file (`type: string, format: binary`): its lines are
 * described in words, so the record is read where the list declares it.
 */
function exportRecord (path: string): { node: Json, pointer: string } {
  const list = path.replace(/\/export\.(csv|ndjson)$/, '')
  const page = resolve(spec['paths'][list].get.responses['200'].content['application/json'].schema, `#/paths/${escape(list)}/get/responses/200/content/application~1json/schema`)
  return resolve(page.node['properties'].items.items, `${page.pointer}/properties/items/items`)
}

function exportProblems (path: string, mediaType: string, payload: string): string[] {
  const record = exportRecord(path)
  if (mediaType === 'application/x-ndjson') {
    if (payload !== '' && !payload.endsWith('\n')) return ['the NDJSON export does not end with a line end']
    const validate = validatorAt(record.pointer)
    return payload.split('\n').slice(0, -1).flatMap((line, i) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        return [`line ${i + 1} is not JSON: ${line.slice(0, 80)}`]
      }
      return validate(parsed) ? [] : (validate.errors ?? []).map(e => `line ${i + 1}${e.instancePath} ${e.message}`)
    })
  }
  const fields = Object.keys(record.node['properties'])
  let rows: string[][]
  try {
    rows = parseCsv(payload, { bom: true, relax_column_count: true }) as string[][]
  } catch (error) {
    return [`the CSV export does not parse: ${(error as Error).message}`]
  }
  const [header, ...records] = rows
  if (header === undefined || header.join() !== fields.join()) return [`the CSV header ${JSON.stringify(header)} is not the record's fields ${JSON.stringify(fields)}`]
  if (!payload.endsWith('\r\n')) return ['the CSV export does not end with CRLF']
  return records.flatMap((row, i) => row.length === fields.length ? [] : [`CSV row ${i + 1} has ${row.length} cells, not ${fields.length}`])
}
