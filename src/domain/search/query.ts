// The search language of the `q` list parameter: parsed once in the service, then compiled for FTS5 and for tsquery.
import { fold } from './fold.js'

/** Most terms (words or phrases) a query may search for; exclusions not counted. */
export const MAX_POSITIVE_TERMS = 8
/** Most terms a query may hold in all, exclusions included. */
export const MAX_TERMS = 16
/** Most words in one phrase, whether quoted or made by punctuation inside a word (`state-of-the-art`). */
export const MAX_PHRASE_WORDS = 6
/** Fewest letters or digits before a prefix `*`: a one-character prefix matches a large part of any index. */
export const MIN_PREFIX_LENGTH = 2

/** One searchable unit: one word, or a phrase of adjacent words in order within one field. `prefix` applies to the last word. words are folded, non-empty, without spaces. */
export interface SearchTerm { words: string[], prefix: boolean }
/** Terms joined by OR; `exclude` negates the whole group. */
export interface SearchClause { exclude: boolean, any: SearchTerm[] }
/** Clauses joined by AND; at least one clause is not excluded. */
export interface SearchQuery { clauses: SearchClause[] }

export class SearchSyntaxError extends Error {
  /** 1-based position, in characters (code points), in the user's q. */
  readonly position: number

  constructor (message: string, position: number) {
    super(message)
    this.name = 'SearchSyntaxError'
    this.position = position
  }
}

interface RawTerm { kind: 'term', position: number, exclude: boolean, quoted: boolean, text: string, prefix: boolean }
interface RawOr { kind: 'or', position: number }

// Unicode White_Space, so a no-break or ideographic space separates terms as a plain space does.
const space = /^\s$/u

function lex (chars: string[]): Array<RawTerm | RawOr> {
  const tokens: Array<RawTerm | RawOr> = []
  let i = 0
  while (i < chars.length) {
    if (space.test(chars[i]!)) {
      i++
      continue
    }
    const position = i + 1
    const exclude = chars[i] === '-'
    if (exclude) {
      i++
      // A dash standing alone (`Star Wars - A New Hope`) is punctuation, not an exclusion of nothing.
      if (i === chars.length || space.test(chars[i]!)) continue
    }
    if (chars[i] === '"') {
      const close = chars.indexOf('"', i + 1)
      if (close === -1) throw new SearchSyntaxError(`unbalanced quote at ${i + 1}`, i + 1)
      let text = chars.slice(i + 1, close).join('')
      i = close + 1
      // Both "dune mes*" and "dune mes"* ask for a prefix; a * left outside would otherwise vanish without a word.
      let prefix = text.endsWith('*')
      if (prefix) text = text.slice(0, -1)
      if (chars[i] === '*') {
        prefix = true
        i++
      }
      tokens.push({ kind: 'term', position, exclude, quoted: true, text, prefix })
      continue
    }
    const start = i
    // A quote ends a bare word, so `a"b c"` is the word a and the phrase "b c", as in web search boxes.
    while (i < chars.length && chars[i] !== '"' && !space.test(chars[i]!)) i++
    let text = chars.slice(start, i).join('')
    if (text === 'OR' && !exclude) {
      tokens.push({ kind: 'or', position })
      continue
    }
    const prefix = text.endsWith('*')
    if (prefix) text = text.slice(0, -1)
    tokens.push({ kind: 'term', position, exclude, quoted: false, text, prefix })
  }
  return tokens
}

function group (tokens: Array<RawTerm | RawOr>): Array<{ exclude: boolean, terms: RawTerm[] }> {
  const groups: Array<{ exclude: boolean, terms: RawTerm[] }> = []
  let or: RawOr | null = null
  let last: RawTerm | null = null
  for (const token of tokens) {
    if (token.kind === 'or') {
      if (last === null) throw new SearchSyntaxError(`OR at ${token.position} has no term before it`, token.position)
      if (or !== null) throw new SearchSyntaxError(`OR at ${token.position} follows another OR`, token.position)
      // `-a OR b` could mean -(a OR b) or (-a) OR b; neither reading is obvious, so it is refused rather than guessed.
      if (last.exclude) throw new SearchSyntaxError(`OR at ${token.position} cannot join an excluded term`, token.position)
      or = token
    } else if (or !== null) {
      if (token.exclude) throw new SearchSyntaxError(`OR at ${or.position} cannot join an excluded term`, or.position)
      groups.at(-1)!.terms.push(token)
      or = null
      last = token
    } else {
      groups.push({ exclude: token.exclude, terms: [token] })
      last = token
    }
  }
  if (or !== null) throw new SearchSyntaxError(`OR at ${or.position} has no term after it`, or.position)
  return groups
}

export function parseSearch (q: string): SearchQuery {
  const groups = group(lex(Array.from(q)))
  const clauses: SearchClause[] = []
  let firstExclusion = 0
  let positives = 0
  let total = 0
  for (const raw of groups) {
    const any: SearchTerm[] = []
    for (const term of raw.terms) {
      const folded = fold(term.text)
      const words = folded === '' ? [] : folded.split(' ')
      if (term.prefix && Array.from(words.at(-1) ?? '').length < MIN_PREFIX_LENGTH) {
        throw new SearchSyntaxError(`prefix at ${term.position} needs at least ${MIN_PREFIX_LENGTH} letters or digits before *`, term.position)
      }
      // Punctuation alone (`C++`'s ++, a stray `&`) has nothing to find; dropping it beats refusing the query.
      if (words.length === 0) continue
      if (words.length > MAX_PHRASE_WORDS) {
        const what = term.quoted ? 'phrase' : 'word'
        throw new SearchSyntaxError(`${what} at ${term.position} has more than ${MAX_PHRASE_WORDS} words (punctuation inside a word separates words)`, term.position)
      }
      if (!raw.exclude && ++positives > MAX_POSITIVE_TERMS) {
        throw new SearchSyntaxError(`too many terms at ${term.position}: at most ${MAX_POSITIVE_TERMS} words or phrases to search for`, term.position)
      }
      if (++total > MAX_TERMS) {
        throw new SearchSyntaxError(`too many terms at ${term.position}: at most ${MAX_TERMS} in all, exclusions included`, term.position)
      }
      any.push({ words, prefix: term.prefix })
    }
    if (any.length === 0) continue
    clauses.push({ exclude: raw.exclude, any })
    if (raw.exclude && firstExclusion === 0) firstExclusion = raw.terms[0]!.position
  }
  if (!clauses.some(clause => !clause.exclude)) {
    if (firstExclusion === 0) throw new SearchSyntaxError('has no letters or digits to search for', 1)
    throw new SearchSyntaxError(`has only exclusions (the first at ${firstExclusion}); add a word or phrase to search for`, firstExclusion)
  }
  return canonical(clauses)
}

function printTerm (term: SearchTerm): string {
  const text = term.words.join(' ') + (term.prefix ? '*' : '')
  return term.words.length > 1 ? `"${text}"` : text
}

function printClause (clause: SearchClause): string {
  return (clause.exclude ? '-' : '') + clause.any.map(printTerm).join(' OR ')
}

// Code-unit order, the same in every locale; the keys sorted are distinct, so no two compare equal.
function compare (a: string, b: string): number {
  return a < b ? -1 : 1
}

/** Whether every clause to search for is one word or phrase without a prefix: then the words in order can be a whole title. */
const plain = (clauses: SearchClause[]): boolean => clauses.every(clause => clause.exclude || (clause.any.length === 1 && !clause.any[0]!.prefix))

// AND and OR are commutative and idempotent, so sorted, de-duplicated terms and clauses give one form per meaning:
// the cursor binding, the page cache and both compilers then see `dune dune messiah` and `dune messiah` alike.
// Only the order of plain words matters (relevance puts a title made of exactly them, in that order, first):
// `messiah dune` stays apart from `dune messiah`.
function canonical (clauses: SearchClause[]): SearchQuery {
  const seen = new Map<string, SearchClause>()
  for (const clause of clauses) {
    const terms = new Map(clause.any.map(term => [printTerm(term), term]))
    const any = [...terms.keys()].sort(compare).map(key => terms.get(key)!)
    const sorted = { exclude: clause.exclude, any }
    if (!seen.has(printClause(sorted))) seen.set(printClause(sorted), sorted)
  }
  const ordered = plain(clauses)
  const rank = (clause: SearchClause) => clause.exclude ? 1 : 0
  // Map keys keep the order they were first given in, and sort is stable.
  const keys = [...seen.keys()].sort((a, b) => rank(seen.get(a)!) - rank(seen.get(b)!) || (ordered && !seen.get(a)!.exclude ? 0 : compare(a, b)))
  return { clauses: keys.map(key => seen.get(key)!) }
}

/**
 * The folded text a title (or name) must be to match the query exactly: its plain words and phrases in
 * the order given, or null when a clause has OR or a prefix (no single text then).
 */
export function exactText (query: SearchQuery): string | null {
  return plain(query.clauses) ? query.clauses.filter(clause => !clause.exclude).map(clause => clause.any[0]!.words.join(' ')).join(' ') : null
}

/** The query's exclusions as a query of their own (matching what the query leaves out), or null when it has none. */
export function exclusions (query: SearchQuery): SearchQuery | null {
  const excluded = query.clauses.filter(clause => clause.exclude)
  return excluded.length === 0 ? null : { clauses: excluded.map(clause => ({ exclude: false, any: clause.any })) }
}

/** Canonical text of a parsed query: equal for queries that mean the same (`Dune  Messiah` and `dune messiah`); used to bind cursors. */
export function printSearch (query: SearchQuery): string {
  return canonical(query.clauses).clauses.map(printClause).join(' ')
}

function split (query: SearchQuery): { positive: SearchClause[], excluded: SearchClause[] } {
  const positive = query.clauses.filter(clause => !clause.exclude)
  // A pure negation would be a full scan on both engines, and FTS5 cannot even express it.
  if (positive.length === 0) throw new TypeError('a search needs at least one clause that is not excluded')
  return { positive, excluded: query.clauses.filter(clause => clause.exclude) }
}

function parenthesise (parts: string[], operator: string): string {
  return parts.length === 1 ? parts[0]! : `(${parts.join(operator)})`
}

// Every word goes in as an FTS5 string, so no user text is ever read as an operator, column filter or NEAR.
function fts5Term (term: SearchTerm): string {
  return term.words.map(word => `"${word.replaceAll('"', '""')}"`).join(' + ') + (term.prefix ? ' *' : '')
}

/**
 * Which matches a compiled search finds, by where its terms to search for are: `all`, every match;
 * `first`, the matches with each of them in the first searched field (a book's title); `rest`, the
 * other matches. Exclusions always look in every field.
 */
export type SearchScope = 'all' | 'first' | 'rest'

/** FTS5 MATCH expression over the given columns, e.g. columns ['title_key','author_key']. Bound as a parameter, never concatenated into SQL. */
export function toFts5 (query: SearchQuery, columns: string[], scope: SearchScope = 'all'): string {
  for (const column of columns) {
    if (!/^[A-Za-z_]\w*$/.test(column)) throw new TypeError(`${JSON.stringify(column)} is not a plain FTS5 column name`)
  }
  const { positive, excluded } = split(query)
  const clause = (c: SearchClause) => parenthesise(c.any.map(fts5Term), ' OR ')
  const sought = positive.map(clause).join(' AND ')
  const excludedText = excluded.map(clause).join(' OR ')
  // FTS5 phrases never span two columns, so the column filter alone keeps a phrase inside one field.
  const within = (cols: string[], expression: string) => `{${cols.join(' ')}} : (${expression})`
  if (scope === 'all') return within(columns, excluded.length > 0 ? `(${sought}) NOT (${excludedText})` : sought)
  const inFirst = within(columns.slice(0, 1), sought)
  const left = [...(scope === 'rest' ? [inFirst] : []), ...(excluded.length > 0 ? [within(columns, excludedText)] : [])]
  const found = scope === 'rest' ? within(columns, sought) : inFirst
  return left.length === 0 ? found : `(${found}) NOT (${left.join(' OR ')})`
}

function lexeme (word: string, weight: string, prefix: boolean): string {
  const label = (prefix ? '*' : '') + weight
  return `'${word.replace(/['\\]/g, '\\$&')}'` + (label === '' ? '' : `:${label}`)
}

/** `only`: the term must be found in the field of this weight, whatever the field count. */
function tsTerm (term: SearchTerm, weights: string[], only?: string): string {
  const last = term.words.length - 1
  const phrase = (weight: string) => parenthesise(term.words.map((word, i) => lexeme(word, weight, term.prefix && i === last)), ' <-> ')
  if (only !== undefined) return phrase(only)
  // A tsvector made by || numbers the author's words on from the title's, so 'messiah' <-> 'frank' would find
  // "Dune Messiah" by Frank Herbert; one weighted copy of the phrase per field keeps it inside a field, as in FTS5.
  if (last === 0 || weights.length < 2) return phrase('')
  return `(${weights.map(phrase).join(' | ')})`
}

/** PostgreSQL tsquery text (cast with ::tsquery, no parser involved) over a tsvector whose fields carry the given weights in order, e.g. ['A','B'] for books (title A, author B), ['A'] for students. */
export function toTsquery (query: SearchQuery, weights: string[], scope: SearchScope = 'all'): string {
  for (const weight of weights) {
    if (!/^[A-D]$/.test(weight)) throw new TypeError(`${JSON.stringify(weight)} is not a tsvector weight (A to D)`)
  }
  const { positive, excluded } = split(query)
  const clause = (c: SearchClause, only?: string) => parenthesise(c.any.map(term => tsTerm(term, weights, only)), ' | ')
  const inFirst = positive.map(c => clause(c, weights[0]))
  const sought = scope === 'first' ? inFirst : positive.map(c => clause(c))
  const left = [...(scope === 'rest' ? [`!${parenthesise(inFirst, ' & ')}`] : []), ...excluded.map(c => `!${clause(c)}`)]
  return [...sought, ...left].join(' & ')
}

function termIn (term: SearchTerm, words: string[]): boolean {
  const last = term.words.length - 1
  for (let start = 0; start + last < words.length; start++) {
    if (term.words.every((word, i) => term.prefix && i === last ? words[start + i]!.startsWith(word) : words[start + i] === word)) return true
  }
  return false
}

const words = (field: string): string[] => {
  const text = fold(field)
  return text === '' ? [] : text.split(' ')
}

/** Reference semantics in plain JS: does a record whose searchable fields hold these (unfolded) texts match? Used by tests as the oracle the engines are compared against. */
export function matchesSearch (query: SearchQuery, fields: string[]): boolean {
  const folded = fields.map(words)
  return query.clauses.every(clause => clause.any.some(term => folded.some(words => termIn(term, words))) !== clause.exclude)
}

/**
 * Reference semantics of relevance for a matching record: 0 when its first field is exactly the
 * query's text (exactText), 1 when every clause to search for is found in its first field, else 2.
 * Lower comes first; within a tier, newer records first.
 */
export function relevanceTier (query: SearchQuery, fields: string[]): 0 | 1 | 2 {
  const first = words(fields[0]!)
  if (first.join(' ') === exactText(query)) return 0
  return query.clauses.every(clause => clause.exclude || clause.any.some(term => termIn(term, first))) ? 1 : 2
}
