// fold(): the one normalisation of searchable and sortable text, shared by SQLite, PostgreSQL and the query parser.

/** Bumped whenever fold() changes, so cursors and stored keys made by an older fold are retired. */
export const FOLD_VERSION = 1

/** Longest word fold() keeps, in code points: at most 2,000 UTF-8 bytes, under PostgreSQL's 2,047-byte lexeme limit (longer words are dropped from a tsvector without an error, and the words around them become adjacent). */
export const FOLD_MAX_WORD_LENGTH = 500

/** Most words fold() keeps of one text: PostgreSQL keeps 256 positions per lexeme of a tsvector, and a book's two fields together must stay within it, or a phrase found by FTS5 would be missed there. */
export const FOLD_MAX_WORDS = 128

// Letters without a decomposition, so NFKD leaves them whole; ς is σ to FTS5's case folding, so it is here too.
const letters: Record<string, string> = {
  ø: 'o', ß: 'ss', æ: 'ae', œ: 'oe', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't', ŋ: 'n', ĸ: 'q', ς: 'σ'
}
const letter = new RegExp(`[${Object.keys(letters).join('')}]`, 'gu')

// Combining marks vanish rather than split, so "naïve" stays one word; New Tai Lue vowel signs and two Vedic
// signs became letters in later Unicode versions but are marks to FTS5's unicode61 tables, which would split at them.
const marks = /[\p{M}\u{19B0}-\u{19C0}\u{19C8}\u{19C9}\u{1CF2}\u{1CF3}]+/gu

// Letters and digits assigned after Unicode 14.0 (Node 20 knows Unicode 17): PostgreSQL's parser sees letters only
// through the C library's locale tables (glibc 2.36 is at Unicode 14) and drops what it does not know, so here they
// separate words. Listed rather than computed because JavaScript has no Unicode age property; made with Python
// 3.11's unicodedata (Unicode 14.0). test/search-engines.test.ts puts every character fold() keeps through both
// engines, so a Node release that knows more letters fails there until this list grows.
const newer = /[\u{88F}\u{C5C}\u{CDC}\u{1C89}-\u{1C8A}\u{A7CB}-\u{A7CF}\u{A7D2}\u{A7D4}\u{A7DA}-\u{A7DC}\u{A7F1}\u{105C0}-\u{105F3}\u{10940}-\u{10959}\u{10D40}-\u{10D65}\u{10D6F}-\u{10D85}\u{10EC2}-\u{10EC7}\u{1123F}-\u{11240}\u{11380}-\u{11389}\u{1138B}\u{1138E}\u{11390}-\u{113B5}\u{113B7}\u{113D1}\u{113D3}\u{116D0}-\u{116E3}\u{11BC0}-\u{11BE0}\u{11BF0}-\u{11BF9}\u{11DB0}-\u{11DDB}\u{11DE0}-\u{11DE9}\u{11F02}\u{11F04}-\u{11F10}\u{11F12}-\u{11F33}\u{11F50}-\u{11F59}\u{1342F}\u{13441}-\u{13446}\u{13460}-\u{143FA}\u{16100}-\u{1611D}\u{16130}-\u{16139}\u{16D40}-\u{16D6C}\u{16D70}-\u{16D79}\u{16EA0}-\u{16EB8}\u{16EBB}-\u{16ED3}\u{16FF2}-\u{16FF6}\u{187F8}-\u{187FF}\u{18CFF}\u{18D09}-\u{18D1E}\u{18D80}-\u{18DF2}\u{1B132}\u{1B155}\u{1CCF0}-\u{1CCF9}\u{1DF25}-\u{1DF2A}\u{1E030}-\u{1E06D}\u{1E4D0}-\u{1E4EB}\u{1E4F0}-\u{1E4F9}\u{1E5D0}-\u{1E5ED}\u{1E5F0}-\u{1E5FA}\u{1E6C0}-\u{1E6DE}\u{1E6E0}-\u{1E6E2}\u{1E6E4}-\u{1E6E5}\u{1E6E7}-\u{1E6ED}\u{1E6F0}-\u{1E6F4}\u{1E6FE}-\u{1E6FF}\u{2B739}-\u{2B73F}\u{2CEA2}-\u{2CEAD}\u{2EBF0}-\u{2EE5D}\u{31350}-\u{33479}]/gu

// Other numbers (❶, ௰, ৴) are no digits to the C library either; those that mean digits (², ①, ½) decomposed already.
const separators = /[^\p{L}\p{Nd}\p{Nl}]+/gu

// PostgreSQL's parser reads a word starting 3e5 and going on with a letter ("3e5x") as the number 3e5 and a second
// word; cutting there makes fold's words the parser's words.
const exponent = /(?<=^| )(\d+e\d+)(?=[^ \d])/g

/**
 * NFKD, drop combining marks (\p{M}), map letters with no decomposition (ø→o, ß→ss, æ→ae, œ→oe, ł→l, đ→d, ð→d, þ→th,
 * ı→i, ħ→h, ŧ→t, ŋ→n, ĸ→q, ς→σ, and their capitals), lower-case without locale; every run of characters that are
 * not letters, decimal digits or letter numbers of Unicode 14 becomes one space, trimmed. Words are then cut where
 * PostgreSQL's parser would cut them (3e5x → 3e5 x), to FOLD_MAX_WORD_LENGTH characters and to FOLD_MAX_WORDS words,
 * so that both engines store exactly fold(text).split(' ').
 */
export function fold (text: string): string {
  const words = text.normalize('NFKD').toLowerCase().normalize('NFKD')
    .replace(marks, '')
    .replace(letter, c => letters[c]!)
    .replace(newer, ' ')
    .replace(separators, ' ')
    .trim()
    .replace(exponent, '$1 ')
    .split(' ')
  if (words.length > FOLD_MAX_WORDS) words.length = FOLD_MAX_WORDS
  return words.map(word => word.length > FOLD_MAX_WORD_LENGTH ? Array.from(word).slice(0, FOLD_MAX_WORD_LENGTH).join('') : word).join(' ')
}
