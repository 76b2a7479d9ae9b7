// How the docs test reads Markdown (issue 27's conventions): the kinds of code blocks, expected output, links and anchors.
import { posix } from 'node:path'
import GithubSlugger from 'github-slugger'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { toString } from 'mdast-util-to-string'

export const kinds = ['sh', 'sh background', 'sh ci', 'text', 'json', 'ts', 'yaml', 'dotenv'] as const
export type Kind = typeof kinds[number]

export interface Block {
  kind: Kind
  /** The line of the opening fence, 1-based: what a failure names. */
  line: number
  code: string
  /** `json Book`: the component schema of openapi.yaml the document must satisfy. */
  schema?: string
}

export interface Problem { line: number, message: string }

type Tree = ReturnType<typeof fromMarkdown>
type Node = Tree['children'][number] | Tree

/** Every node of the tree, depth first in document order (code blocks inside lists and quotes included). */
function * walk (node: Node): Generator<Node> {
  yield node
  if ('children' in node) for (const child of node.children) yield * walk(child as Node)
}

// A tree parsed from text has a position on every node.
const lineOf = (node: Node): number => node.position!.start.line

/** The code blocks of a Markdown text, each with its kind, and a problem for each block whose kind is missing or unknown. */
export function readBlocks (markdown: string): { blocks: Block[], problems: Problem[] } {
  const blocks: Block[] = []
  const problems: Problem[] = []
  for (const node of walk(fromMarkdown(markdown))) {
    if (node.type !== 'code') continue
    const line = lineOf(node)
    const info = [node.lang, node.meta].filter(part => part !== null && part !== undefined).join(' ').trim().replace(/\s+/g, ' ')
    const schema = /^json ([A-Za-z][\w.-]*)$/.exec(info)?.[1]
    const kind = schema === undefined ? kinds.find(k => k === info) : 'json'
    if (kind === undefined) {
      problems.push({ line, message: `a code block of ${info === '' ? 'no kind' : `unknown kind "${info}"`}: give it one of ${kinds.join(', ')} (or json <Schema>)` })
    } else {
      blocks.push({ kind, line, code: node.value, ...(schema !== undefined && { schema }) })
    }
  }
  return { blocks, problems }
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * The first line of `expected` that no line of `actual` matches in order, or undefined when all do.
 * `…` matches any run of characters; trailing spaces do not count; blank expected lines are layout, not output.
 */
export function unmatchedLine (expected: string, actual: string): string | undefined {
  const lines = actual.split('\n').map(line => line.trimEnd())
  let next = 0
  for (const wanted of expected.split('\n').map(line => line.trimEnd()).filter(line => line !== '')) {
    const pattern = new RegExp('^' + wanted.split('…').map(escapeRegExp).join('.*') + '$')
    const found = lines.findIndex((line, index) => index >= next && pattern.test(line))
    if (found === -1) return wanted
    next = found + 1
  }
  return undefined
}

/** The command lines of an `sh ci` block: comments and blank lines are not commands. */
export function commandLines (code: string): string[] {
  return code.split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
}

/** The command lines of an `sh ci` block that appear verbatim in none of CI's files. */
export function missingFromCi (code: string, ciFiles: string[]): string[] {
  // Only what CI runs counts: a command named in a comment of .ci/run is not run by it.
  const commands = ciFiles.map(text => text.split('\n').filter(line => !line.trim().startsWith('#')).join('\n'))
  return commandLines(code).filter(command => !commands.some(text => text.includes(command)))
}

/** KEY=value lines (comments and blank lines skipped; one pair of surrounding quotes removed), and the lines that are neither. */
export function parseDotenv (code: string): { env: Record<string, string>, problems: string[] } {
  const env: Record<string, string> = {}
  const problems: string[] = []
  for (const line of code.split('\n').map(l => l.trim())) {
    if (line === '' || line.startsWith('#')) continue
    const pair = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (pair === null) {
      problems.push(line)
      continue
    }
    const value = pair[2]!
    env[pair[1]!] = /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value
  }
  return { env, problems }
}

/** The documented addresses (127.0.0.1:3000 for the API, :9464 for operations) turned into the test service's. */
export function substituteAddresses (text: string, ports: { port: number, opsPort: number }): string {
  return text.replaceAll('127.0.0.1:3000', `127.0.0.1:${ports.port}`).replaceAll('127.0.0.1:9464', `127.0.0.1:${ports.opsPort}`)
}

const postgresUrl = /postgres(?:ql)?:\/\/[^\s'"/]*@?(?:127\.0\.0\.1|localhost)(?::\d+)?\/([A-Za-z_][\w]*)/g

/** The database names of the PostgreSQL URLs a text mentions, each once. */
export function postgresDatabases (text: string): string[] {
  return [...new Set([...text.matchAll(postgresUrl)].map(match => match[1]!))]
}

/** Whether the text creates that database itself (createdb NAME, CREATE DATABASE NAME). */
export function createsDatabase (text: string, name: string): boolean {
  return new RegExp(`\\b(createdb\\s+(-\\S+\\s+)*|CREATE DATABASE\\s+)${escapeRegExp(name)}\\b`, 'i').test(text)
}

/** The text with each documented database name, in URLs and in createdb/dropdb/CREATE/DROP DATABASE, replaced by the test's. */
export function substituteDatabases (text: string, names: ReadonlyMap<string, string>): string {
  let result = text.replace(postgresUrl, (url, name: string) => names.has(name) ? url.slice(0, url.length - name.length) + names.get(name)! : url)
  for (const [documented, test] of names) {
    result = result.replace(new RegExp(`\\b((?:createdb|dropdb)\\s+(?:-\\S+\\s+)*|(?:CREATE|DROP) DATABASE\\s+(?:IF (?:NOT )?EXISTS\\s+)?)${escapeRegExp(documented)}\\b`, 'gi'), `$1${test}`)
  }
  return result
}

/** The anchors a Markdown text offers: its headings' slugs by GitHub's rules (duplicates get -1, -2…), and explicit ids. */
export function anchorsOf (markdown: string): Set<string> {
  const slugger = new GithubSlugger()
  const anchors = new Set<string>()
  for (const node of walk(fromMarkdown(markdown))) {
    if (node.type === 'heading') anchors.add(slugger.slug(toString(node)))
    if (node.type === 'html') for (const match of node.value.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!)
  }
  return anchors
}

/** What the link check reads: paths relative to the repository root, with / between segments. */
export interface Files {
  exists: (path: string) => boolean
  read: (path: string) => string
}

/** Every relative link (and image) of `file` that leads to no file, or to a heading its target does not have. External links are not fetched. */
export function linkProblems (file: string, markdown: string, files: Files): Problem[] {
  const problems: Problem[] = []
  const anchors = new Map<string, Set<string>>()
  const anchorsOfTarget = (target: string): Set<string> => {
    if (!anchors.has(target)) anchors.set(target, anchorsOf(files.read(target)))
    return anchors.get(target)!
  }
  for (const node of walk(fromMarkdown(markdown))) {
    if (node.type !== 'link' && node.type !== 'image' && node.type !== 'definition') continue
    const url = node.url
    if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) continue
    const hash = url.indexOf('#')
    const path = decodeURIComponent((hash === -1 ? url : url.slice(0, hash)).split('?')[0]!)
    const anchor = hash === -1 ? undefined : decodeURIComponent(url.slice(hash + 1))
    // As GitHub renders it: a leading / is the repository's root, anything else is relative to the file.
    const target = path === '' ? file : posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(file), path)).replace(/\/$/, '')
    const line = lineOf(node)
    if (target.startsWith('..') || !files.exists(target)) {
      problems.push({ line, message: `link ${url}: ${target} does not exist` })
    } else if (anchor !== undefined && target.endsWith('.md') && !anchorsOfTarget(target).has(anchor)) {
      problems.push({ line, message: `link ${url}: ${target} has no heading with the anchor #${anchor}` })
    }
  }
  return problems
}
