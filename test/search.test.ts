// The search language without a database: fold(), the grammar and its errors, the canonical text and both compilers.
import fc from 'fast-check'
import t from 'tap'
import { FOLD_MAX_WORD_LENGTH, FOLD_MAX_WORDS, fold } from '../src/domain/search/fold.js'
import {
  MAX_PHRASE_WORDS, MAX_POSITIVE_TERMS, MAX_TERMS, MIN_PREFIX_LENGTH, SearchSyntaxError,
  exactText, exclusions, matchesSearch, parseSearch, printSearch, relevanceTier, toFts5, toTsquery
} from '../src/domain/search/query.js'
import type { SearchQuery } from '../src/domain/search/query.js'

/** What fold() may return: words of letters and digits that lower-casing leaves alone, one space between. */
function wellFormed (folded: string): boolean {
  return folded === '' || (/^[\p{L}\p{Nd}\p{Nl}]+(?: [\p{L}\p{Nd}\p{Nl}]+)*$/u.test(folded) && folded.toLowerCase() === folded)
}

t.test('fold folds accents, case and letters without a decomposition', async t => {
  const cases: Array<[string, string]> = [
    ['Ørsted', 'orsted'], ['ØRSTED', 'orsted'], ['Straße', 'strasse'], ['STRASSE', 'strasse'], ['ẞ', 'ss'],
    ['naïve café', 'naive cafe'], ['Æsop Œuvre', 'aesop oeuvre'], ['Łódź', 'lodz'], ['Đorđe', 'dorde'],
    ['Þór Ðe', 'thor de'], ['Ħal Ŧ Ŋ ĸ', 'hal t n q'], ['İstanbul ıI', 'istanbul ii'], ['ΟΔΟΣ σοφός', 'οδοσ σοφοσ'],
    ['ǅungla', 'dzungla'], ['ᴬᴮ', 'ab']
  ]
  for (const [text, folded] of cases) t.equal(fold(text), folded, text)
})

t.test('fold decomposes compatibility characters: ligatures, numerals, fractions, superscripts', async t => {
  t.equal(fold('ﬁnance ﬂow ﬀ'), 'finance flow ff')
  t.equal(fold('Ⅻ ⅻ Louis XIV'), 'xii xii louis xiv')
  t.equal(fold('½ x² ①'), '1 2 x2 1', 'the fraction slash separates; circled and superscript digits are digits')
  t.equal(fold('ｆｕｌｌｗｉｄｔｈ'), 'fullwidth')
})

t.test('fold keeps the letters of every script and drops symbols and emoji', async t => {
  t.equal(fold('東京の本'), '東京の本', 'CJK kept, as one word: neither engine segments it')
  t.equal(fold('ภาษาไทย'), 'ภาษาไทย')
  t.equal(fold('مرحبا שלום'), 'مرحبا שלום', 'right-to-left scripts')
  t.equal(fold('हिन्दी'), 'हनद', 'Devanagari vowel signs are combining marks and go, consistently on both sides')
  t.equal(fold('🙂 dune 👍🏽 ©'), 'dune')
  t.equal(fold('\u0301\u0308\u20dd'), '', 'combining marks alone fold to nothing')
  t.equal(fold('٣٤ ❶ ௰'), '٣٤', 'digits of other scripts stay; other numbers are symbols to the C library, so separators here')
})

t.test('fold makes punctuation and white space one space, so punctuation splits words', async t => {
  t.equal(fold('  state-of-the-art  '), 'state of the art')
  t.equal(fold('C++ 20.04 x86_64 user@example.org'), 'c 20 04 x86 64 user example org')
  t.equal(fold('a\u0000b\u2028c\u3000d\u00a0e'), 'a b c d e', 'controls and every kind of space')
  t.equal(fold(''), '')
})

t.test('fold cuts a word PostgreSQL would read as a number followed by a word', async t => {
  t.equal(fold('1st 3e5 1e 12e3x 1e5e5 a1e5b 3E5X'), '1st 3e5 1e 12e3 x 1e5 e5 a1e5b 3e5 x')
})

t.test('fold leaves out the characters one engine would treat differently', async t => {
  t.equal(fold('ς'), 'σ', 'final sigma is sigma to FTS5')
  t.equal(fold('x\u19b0y\u1cf2z'), 'xyz', 'letters that FTS5 still takes for marks vanish like marks')
  t.equal(fold('a\u{31350}b\u{1e4d0}c'), 'a b c', 'letters newer than Unicode 14 separate words')
})

t.test('fold caps word length and word count within what a tsvector keeps', async t => {
  const long = 'ж'.repeat(FOLD_MAX_WORD_LENGTH + 100)
  const folded = fold(`${long} x`)
  t.equal(folded, `${'ж'.repeat(FOLD_MAX_WORD_LENGTH)} x`)
  t.equal(Buffer.byteLength(fold('\u{2070e}'.repeat(1000))), 2000, 'the longest word stays under 2,047 bytes even in 4-byte characters')
  const words = Array.from({ length: FOLD_MAX_WORDS + 10 }, (_, i) => `w${i}`)
  t.same(fold(words.join(' ')).split(' '), words.slice(0, FOLD_MAX_WORDS))
})

t.test('fold: every code point folds to well-formed text, and folding twice changes nothing', async t => {
  let bad = 0
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    const folded = fold(String.fromCodePoint(cp))
    if (!wellFormed(folded) || fold(folded) !== folded) {
      if (bad++ < 5) t.fail(`U+${cp.toString(16)} folds to ${JSON.stringify(folded)}`)
    }
  }
  t.equal(bad, 0)
})

t.test('fold: any string folds to well-formed text, idempotently', async t => {
  fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme', maxLength: 200 })), text => {
    const folded = fold(text)
    return wellFormed(folded) && fold(folded) === folded
  }), { numRuns: 2000 })
  t.pass('2,000 strings folded')
})

/** Parses, expecting success, and returns the canonical text. */
function printed (q: string): string {
  return printSearch(parseSearch(q))
}

t.test('parseSearch: words, phrases, exclusions, OR and prefixes', async t => {
  t.same(parseSearch('dune'), { clauses: [{ exclude: false, any: [{ words: ['dune'], prefix: false }] }] })
  t.same(parseSearch('Dune "Frank  Herbert" -messiah dun* OR "the chil*"'), {
    clauses: [
      { exclude: false, any: [{ words: ['frank', 'herbert'], prefix: false }] },
      { exclude: false, any: [{ words: ['the', 'chil'], prefix: true }, { words: ['dun'], prefix: true }] },
      { exclude: false, any: [{ words: ['dune'], prefix: false }] },
      { exclude: true, any: [{ words: ['messiah'], prefix: false }] }
    ]
  })
  const cases: Array<[string, string]> = [
    ['Dune  Messiah', 'dune messiah'],
    ['dune messiah OR children', 'children OR messiah dune'],
    ['a OR b OR c', 'a OR b OR c'],
    // Plain words keep their order (relevance puts a title of exactly these words first); with OR or a prefix, sorted.
    ['dune or messiah', 'dune or messiah'],
    ['Or', 'or'],
    ['-OR dune', 'dune -or'],
    ['state-of-the-art', '"state of the art"'],
    ['C++', 'c'],
    ['20.04', '"20 04"'],
    ['+++ dune ***x', 'dune x'],
    ['-+++ dune', 'dune'],
    ['dune OR +++', 'dune'],
    ['"" dune', 'dune'],
    ['"dune"', 'dune'],
    ['"dune mes*"', '"dune mes*"'],
    ['"dune mes"*', '"dune mes*"'],
    ['"dune *"', 'dune*'],
    ['dun**', 'dun*'],
    ['dune*x', '"dune x"'],
    ['state-of-the-ar*', '"state of the ar*"'],
    ['a"b c"d', 'a "b c" d'],
    ['"a""b"', 'a b'],
    ['-"dune messiah" frank', 'frank -"dune messiah"'],
    ['--dune frank', 'frank -dune'],
    ['NOT AND NEAR(a b)', 'not and "near a" b'],
    ['title:dune {title_key}:x ^dune', '"title dune" "title key x" dune'],
    ["'; DROP TABLE books; --", 'drop table books'],
    ['Ørsted STRASSE', 'orsted strasse'],
    ['\u3000dune\u00a0messiah\t', 'dune messiah']
  ]
  for (const [q, canonical] of cases) t.equal(printed(q), canonical, q)
})

t.test('parseSearch: every error names its position', async t => {
  const cases: Array<[string, string, number]> = [
    ['dune "messiah', 'unbalanced quote at 6', 6],
    ['"a" "b" "c', 'unbalanced quote at 9', 9],
    ['"', 'unbalanced quote at 1', 1],
    ['OR', 'OR at 1 has no term before it', 1],
    ['OR dune', 'OR at 1 has no term before it', 1],
    ['dune OR', 'OR at 6 has no term after it', 6],
    ['dune OR OR messiah', 'OR at 9 follows another OR', 9],
    ['-dune OR messiah', 'OR at 7 cannot join an excluded term', 7],
    ['dune OR -messiah', 'OR at 6 cannot join an excluded term', 6],
    ['-', 'has no letters or digits to search for', 1],
    [' - -', 'has no letters or digits to search for', 1],
    ['d*', `prefix at 1 needs at least ${MIN_PREFIX_LENGTH} letters or digits before *`, 1],
    ['dune *', 'prefix at 6 needs at least 2 letters or digits before *', 6],
    ['**', 'prefix at 1 needs at least 2 letters or digits before *', 1],
    ['"dune m*"', 'prefix at 1 needs at least 2 letters or digits before *', 1],
    ['C++*', 'prefix at 1 needs at least 2 letters or digits before *', 1],
    ['', 'has no letters or digits to search for', 1],
    [' +++ "" ', 'has no letters or digits to search for', 1],
    ['-dune', 'has only exclusions (the first at 1); add a word or phrase to search for', 1],
    ['+++ -+++ -dune', 'has only exclusions (the first at 10); add a word or phrase to search for', 10],
    ['a-b-c-d-e-f-g', `word at 1 has more than ${MAX_PHRASE_WORDS} words (punctuation inside a word separates words)`, 1],
    ['x "a b c d e f g"', 'phrase at 3 has more than 6 words (punctuation inside a word separates words)', 3],
    ['a b c d e f g h i', `too many terms at 17: at most ${MAX_POSITIVE_TERMS} words or phrases to search for`, 17],
    ['a b OR c OR d e f g h i', 'too many terms at 23: at most 8 words or phrases to search for', 23],
    ['a -b -c -d -e -f -g -h -i -j -k -l -m -n -o -p -q', `too many terms at 48: at most ${MAX_TERMS} in all, exclusions included`, 48],
    ['🙂 "dune', 'unbalanced quote at 3', 3]
  ]
  for (const [q, message, position] of cases) {
    t.throws(() => parseSearch(q), { name: 'SearchSyntaxError', message, position }, JSON.stringify(q))
  }
  const error = new SearchSyntaxError('x at 2', 2)
  t.ok(error instanceof Error)
})

t.test('printSearch: one text per meaning', async t => {
  const same: string[][] = [
    ['Dune  Messiah', 'dune messiah', 'DUNE dune Messiah', '"dune" "messiah"', 'dune - messiah', 'dune messiah -'],
    ['messiah dune', 'Messiah  DUNE messiah'],
    ['dune messiah OR children', 'dune children OR messiah', 'Children OR MESSIAH dune', 'dune messiah OR children OR messiah'],
    ['-frank dune', 'dune -frank', 'dune -frank -Frank', 'dune -"frank"'],
    ['dun* OR x', 'x OR dun**', '"dun"* OR x'],
    ['state-of-the-art', '"state of the art"', 'State Of The Art'.replaceAll(' ', '.')]
  ]
  for (const group of same) {
    const texts = group.map(printed)
    t.same(new Set(texts).size, 1, group.join(' | '))
  }
  const different = ['dune messiah', 'messiah dune', '"dune messiah"', 'dune OR messiah', 'dune -messiah', 'dune* messiah', 'dune messiah*', 'dune or messiah']
  t.equal(new Set(different.map(printed)).size, different.length)
  const unsorted: SearchQuery = { clauses: [{ exclude: true, any: [{ words: ['b'], prefix: false }] }, { exclude: false, any: [{ words: ['c'], prefix: false }, { words: ['a'], prefix: false }] }] }
  t.equal(printSearch(unsorted), 'a OR c -b', 'a query built by hand prints in the same canonical order')
})

t.test('toFts5: quoted strings, column filter, explicit parentheses', async t => {
  const columns = ['title_key', 'author_key']
  t.equal(toFts5(parseSearch('dune'), columns), '{title_key author_key} : ("dune")')
  t.equal(toFts5(parseSearch('dune messiah OR children'), columns), '{title_key author_key} : (("children" OR "messiah") AND "dune")')
  t.equal(toFts5(parseSearch('"dune mes*" -frank -"brian herbert"'), columns), '{title_key author_key} : (("dune" + "mes" *) NOT ("brian" + "herbert" OR "frank"))')
  t.equal(toFts5(parseSearch('dun*'), ['name_key']), '{name_key} : ("dun" *)')
  const hostile: SearchQuery = { clauses: [{ exclude: false, any: [{ words: ['a"b', 'NEAR'], prefix: false }] }, { exclude: true, any: [{ words: ['x'], prefix: false }, { words: ['y'], prefix: true }] }] }
  t.equal(toFts5(hostile, ['c']), '{c} : (("a""b" + "NEAR") NOT (("x" OR "y" *)))', 'quotes doubled even in words fold would never make')
  t.throws(() => toFts5(parseSearch('dune'), ['title_key} : x OR {a']), TypeError)
  t.throws(() => toFts5({ clauses: [{ exclude: true, any: [{ words: ['x'], prefix: false }] }] }, columns), /at least one clause that is not excluded/)
})

t.test('toTsquery: quoted lexemes, weighted phrases, prefixes', async t => {
  t.equal(toTsquery(parseSearch('dune'), ['A', 'B']), "'dune'")
  t.equal(toTsquery(parseSearch('dun* messiah OR children'), ['A', 'B']), "('children' | 'messiah') & 'dun':*")
  t.equal(toTsquery(parseSearch('"dune mes*" -frank'), ['A', 'B']), "(('dune':A <-> 'mes':*A) | ('dune':B <-> 'mes':*B)) & !'frank'")
  t.equal(toTsquery(parseSearch('"ada love*" OR x'), ['A']), "(('ada' <-> 'love':*) | 'x')", 'one field: no weights needed')
  t.equal(toTsquery(parseSearch('dune -"a b" -c'), []), "'dune' & !('a' <-> 'b') & !'c'")
  const hostile: SearchQuery = { clauses: [{ exclude: false, any: [{ words: ["it's", 'a\\b'], prefix: true }] }] }
  t.equal(toTsquery(hostile, ['A', 'B']), "(('it\\'s':A <-> 'a\\\\b':*A) | ('it\\'s':B <-> 'a\\\\b':*B))")
  t.throws(() => toTsquery(parseSearch('dune'), ["A'"]), TypeError)
  t.throws(() => toTsquery({ clauses: [] }, ['A']), /at least one clause that is not excluded/)
})

t.test('relevance scopes: the matches with every term to search for in the title, and the rest; exclusions look everywhere', async t => {
  const query = parseSearch('dune "chil*" -frank')
  t.equal(toFts5(query, ['title_key', 'author_key'], 'first'), '({title_key} : ("chil" * AND "dune")) NOT ({title_key author_key} : ("frank"))')
  t.equal(toFts5(query, ['title_key', 'author_key'], 'rest'),
    '({title_key author_key} : ("chil" * AND "dune")) NOT ({title_key} : ("chil" * AND "dune") OR {title_key author_key} : ("frank"))')
  t.equal(toFts5(parseSearch('dune'), ['title_key', 'author_key'], 'first'), '{title_key} : ("dune")')
  t.equal(toTsquery(query, ['A', 'B'], 'first'), "'chil':*A & 'dune':A & !'frank'")
  t.equal(toTsquery(query, ['A', 'B'], 'rest'), "'chil':* & 'dune' & !('chil':*A & 'dune':A) & !'frank'")
  t.equal(exactText(parseSearch('Children of "DUNE" -frank')), 'children of dune', 'plain words and phrases, in the order given')
  t.equal(exactText(parseSearch('dune OR messiah')), null)
  t.equal(exactText(parseSearch('dun*')), null)
  t.same(['Dune', 'Dune Messiah', 'Messiah', 'dune dune'].map(title => relevanceTier(parseSearch('dune'), [title, 'Dune Author'])), [0, 1, 2, 1])
  t.same(exclusions(parseSearch('dune -a -"b c"')), { clauses: [{ exclude: false, any: [{ words: ['b', 'c'], prefix: false }] }, { exclude: false, any: [{ words: ['a'], prefix: false }] }] })
  t.equal(exclusions(parseSearch('dune')), null)
})

t.test('matchesSearch: the reference semantics', async t => {
  const book = ['Dune Messiah', 'Frank Herbert']
  const matches = (q: string, fields = book) => matchesSearch(parseSearch(q), fields)
  t.ok(matches('dune'))
  t.ok(matches('DUNE herbert'), 'words may come from different fields')
  t.ok(matches('"dune messiah"'))
  t.notOk(matches('"messiah frank"'), 'a phrase does not span two fields')
  t.notOk(matches('"messiah dune"'), 'a phrase keeps its order')
  t.ok(matches('"dune mes*"'))
  t.ok(matches('her*'))
  t.notOk(matches('"dune her*"'))
  t.ok(matches('dune -children'))
  t.notOk(matches('dune -frank'))
  t.ok(matches('children OR messiah'))
  t.notOk(matches('children OR chapterhouse'))
  t.ok(matches('orsted', ['H. C. Ørsted']))
  t.ok(matches('strasse', ['Die Straße']))
  t.ok(matches('naive cafe', ['naïve café']))
  t.notOk(matches('dune', ['', '']))
  t.notOk(matches('"a b c"', ['a b']), 'a phrase longer than the field')
})

/** Fragments that have broken search parsers and query languages. */
const hostile = fc.constantFrom(
  'C++', '"', '""', '"unterminated', 'a"b', '-', '--', '- ', 'NOT', 'AND', 'OR', 'OR OR', 'or', '*', '**', '***x', 'x*', 'xy*',
  'NEAR(a b)', 'NEAR/2', 'title:dune', 'author:x', '{title_key}:x', '{title_key author_key}: (x)', '^dune', 'rowid', '"a" + "b"',
  "'; DROP TABLE books; --", '\\', "'", '\u0000', '%00', '\u202e', 'مرحبا', 'שלום', '東京の本', '🙂', '👍🏽', '\u0301\u0308',
  'state-of-the-art', "don't", '20.04', '3e5x', '(', ')', '!', '&', '|', '<->', ':*', 'Ørsted', 'ß', 'ﬁ', 'Ⅻ', 'ı', 'İ'
)
const word = fc.oneof(hostile, fc.stringMatching(/^[a-z]{1,6}$/), fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }))
const separator = fc.constantFrom(' ', '  ', '', '\t', '\u3000', '-', '"', '*')
const query = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.array(fc.tuple(word, separator), { maxLength: 24 }).map(parts => parts.flat().join('')),
  fc.constantFrom('x'.repeat(10_000), 'ab '.repeat(3334), '"'.repeat(200), '-'.repeat(300), `${'ж'.repeat(9999)}*`)
)

t.test('parseSearch on any string returns a well-formed query or a SearchSyntaxError', async t => {
  fc.assert(fc.property(query, q => {
    let parsed: SearchQuery
    try {
      parsed = parseSearch(q)
    } catch (error) {
      if (!(error instanceof SearchSyntaxError)) throw error
      const length = Array.from(q).length
      return Number.isInteger(error.position) && error.position >= 1 && error.position <= Math.max(1, length) && error.message.length > 0
    }
    const terms = parsed.clauses.flatMap(clause => clause.any.map(term => ({ term, exclude: clause.exclude })))
    const positives = terms.filter(({ exclude }) => !exclude)
    const wellFormedTerms = terms.every(({ term }) => term.words.length >= 1 && term.words.length <= MAX_PHRASE_WORDS &&
      term.words.every(w => w !== '' && fold(w) === w) && (!term.prefix || Array.from(term.words.at(-1)!).length >= MIN_PREFIX_LENGTH))
    const excludedAlone = parsed.clauses.every(clause => !clause.exclude || clause.any.length === 1)
    if (!(wellFormedTerms && excludedAlone && positives.length >= 1 && positives.length <= MAX_POSITIVE_TERMS && terms.length <= MAX_TERMS)) return false
    // Both compilers accept whatever the parser returns (the engines themselves are tried in search-engines.test.ts).
    toFts5(parsed, ['title_key', 'author_key'])
    toTsquery(parsed, ['A', 'B'])
    const canonical = printSearch(parsed)
    return printSearch(parseSearch(canonical)) === canonical && printSearch(parseSearch(printSearch(parseSearch(canonical)))) === canonical
  }), { numRuns: 5000 })
  t.pass('5,000 strings parsed')
})
