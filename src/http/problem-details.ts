// The words of the problems a person reads: one voice for every validation issue and request error, naming the field, limit or position.
import type { FastifyError, FastifyRequest } from 'fastify'
import type { ProblemError } from '../contract/api-types.js'
import { type RequestPart, ValidationError } from './errors.js'
import { eventTypes } from '../storage/events.js'

type AjvIssue = NonNullable<FastifyError['validation']>[number]

const escapePointer = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1')

const typeNames: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  null: 'null',
  object: 'an object',
  array: 'an array'
}

/** What a value of each patterned field or parameter looks like, in words, instead of its regular expression. */
const patternMeanings: Record<string, string> = {
  isbn: 'must be an ISBN-10 or ISBN-13: its digits (an ISBN-10 may end in X), with hyphens or spaces between them',
  cursor: 'is not a cursor issued by this list',
  'if-match': 'must be * or one or more entity tags in double quotes, as the ETag header gave them, e.g. "3-5e6f7a8b9c0d"',
  'if-none-match': 'must be * or one or more entity tags in double quotes, as the ETag header gave them, e.g. "3-5e6f7a8b9c0d"',
  'idempotency-key': 'must be 1 to 255 printable ASCII characters, optionally in double quotes',
  // Text fields refuse only NUL (U+0000), which PostgreSQL cannot store; both engines answer alike.
  title: 'must not contain the NUL character (U+0000)',
  author: 'must not contain the NUL character (U+0000)',
  name: 'must not contain the NUL character (U+0000)'
}

/** The same for query parameters whose items have a pattern (an item's issue is about `/name/index`). */
const parameterPatternMeanings: Record<string, string> = {
  types: `must name event types this version knows, comma-separated: ${eventTypes.join(', ')}`
}

const formatMeanings: Record<string, string> = {
  isbn: 'is not a valid ISBN-10 or ISBN-13: its check digit is wrong',
  uuid: 'must be an id such as 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60, as returned when the record was created',
  email: 'must be an email address'
}

/** The member an issue is about (its JSON Pointer below the part) and what is wrong with it, in words. */
function describe (issue: AjvIssue, part: RequestPart): { path: string, detail: string } {
  const params = issue.params as Record<string, any>
  const path = issue.instancePath
  const name = path.split('/').pop()!.replace(/~1/g, '/').replace(/~0/g, '~')
  switch (issue.keyword) {
    case 'required':
      return { path: `${path}/${escapePointer(String(params['missingProperty']))}`, detail: 'is required' }
    case 'additionalProperties':
      return {
        path: `${path}/${escapePointer(String(params['additionalProperty']))}`,
        detail: part === 'body' ? 'is not a field of this resource' : 'is not a known parameter'
      }
    case 'type':
      return { path, detail: `must be ${String(params['type']).split(',').map(type => typeNames[type]).join(' or ')}` }
    case 'enum':
      return { path, detail: `must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}` }
    case 'minLength':
      return { path, detail: params['limit'] === 1 ? 'must not be empty' : `must be at least ${String(params['limit'])} characters long` }
    case 'maxLength':
      return { path, detail: `must be at most ${String(params['limit'])} characters long` }
    case 'minimum':
      return { path, detail: `must be ${String(params['limit'])} or more` }
    case 'maximum':
      return { path, detail: `must be ${String(params['limit'])} or less` }
    case 'pattern': {
      const parameterMeaning = part === 'body' ? undefined : parameterPatternMeanings[path.split('/')[1]!]
      return { path, detail: parameterMeaning ?? patternMeanings[name] ?? 'is not in the form this field takes (see its description in openapi.yaml)' }
    }
    case 'format':
      return { path, detail: formatMeanings[String(params['format'])] ?? `must be ${String(params['format'])}` }
    default:
      return { path, detail: String(issue.message) }
  }
}

/** AJV's issues as one 400: JSON Pointers into the body, parameter names elsewhere. */
export function validationError (issues: AjvIssue[], part: RequestPart, request: FastifyRequest): ValidationError {
  // `/books/` reaches the record's route with an empty id; say what is missing rather than that '' is not a UUID.
  const params = request.params as Record<string, string>
  const emptyId = part === 'params' ? Object.keys(params).find(name => params[name] === '') : undefined
  if (emptyId !== undefined) {
    const list = request.url.replace(/\/(\?.*)?$/s, '')
    return new ValidationError(part, [{ detail: `is missing: the path ends with / where the id belongs (the list itself is at ${list})`, parameter: emptyId }])
  }
  if (part === 'body') return new ValidationError(part, bodyProblems(issues))
  const errors = relevant(issues).map((issue): ProblemError => {
    const { path, detail } = describe(issue, part)
    // Parameters are flat: the first segment names the parameter.
    const parameter = path.replace(/^\/([^/]*).*$/s, '$1')
    return { detail, parameter: parameter.replace(/~1/g, '/').replace(/~0/g, '~') }
  })
  return new ValidationError(part, errors)
}

/** The issues worth telling, at most 100: a value of the wrong shape also fails its format, and the shape is what to fix first. */
function relevant (issues: AjvIssue[]): AjvIssue[] {
  return issues.filter(issue => issue.keyword !== 'format' || !issues.some(other => other !== issue && other.instancePath === issue.instancePath)).slice(0, 100)
}

/** AJV's issues with a body (or an imported row, validated as a body is), each with a JSON Pointer into it. */
export function bodyProblems (issues: AjvIssue[]): { detail: string, pointer: string }[] {
  return relevant(issues).map(issue => {
    const { path, detail } = describe(issue, 'body')
    return { detail, pointer: '#' + path.split('/').map(encodeURIComponent).join('/') }
  })
}

/** What went wrong with a body that is not JSON, with where: V8's words, without the input they may quote. */
export function invalidJsonDetail (text: string): string {
  let message = ''
  try {
    JSON.parse(text)
  } catch (error) {
    message = (error as Error).message
  }
  const position = /at position (\d+)/.exec(message)?.[1]
  if (position !== undefined) return `The request body is not valid JSON: ${message.replace(/ in JSON at position.*$/s, '')} at character ${Number(position) + 1}`
  // V8 names no position for a misspelt literal (tru, nul); its message would quote the body instead.
  const token = /^Unexpected token '(.)'/.exec(message)?.[1]
  if (token !== undefined) return `The request body is not valid JSON: unexpected '${token}' (a misspelt true, false or null?)`
  return 'The request body is not valid JSON: it ends before the value is complete'
}

/** Fastify's own refusals of a request, reworded for people. */
export function requestErrorDetail (error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    {
      // Every operation's route lists them (src/http/protocol.ts); no other route reads a body.
      const types = request.routeOptions.config.bodyTypes!
      return types.length === 0 ? 'This operation takes no request body' : `The request body must be ${types.join(' or ')}`
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `The request body is larger than the ${request.routeOptions.bodyLimit} bytes this server accepts`
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is empty; send a JSON object'
    default:
      return error.message
  }
}
