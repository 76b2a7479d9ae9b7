// The benchmark's seeded catalogue, generated from a fixed seed: the same records on every run, so runs can be compared.
// Realistic enough for lists, filters, sorts and search to do the work they would do on a real one:
//
// - Titles: 1 to 6 words drawn from a Zipf-distributed vocabulary (s = 1, 50,000 words): the commonest
//   word is in about a quarter of titles, the next few in 10–15 %, tens of thousands in a handful.
//   Words are made of syllables (unique by construction); one in seven carries an accent, so that
//   fold() has work to do and a search must ignore it.
// - Authors: about 60,000 at 1,000,000 books, scaled with the book count (60 at 1,000), so the number
//   of books per author is the same at every size: Zipf s = 0.6 over the authors, from about 7 books
//   for the least prolific to about 5,000 (at 1,000,000) for the most.
// - Years: 5 % NULL; the others 1800–2026, density rising linearly towards today.

/** Bumped whenever the data changes, so that a seed cache made by an older generator is not used. */
export const generatorVersion = 1

export const vocabularySize = 50_000
const titleSeed = 0x5eed1
const wordSyllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'te', 'vi', 'do', 'pe', 'ga', 'bu', 'fo', 'li', 'ma', 'no', 'ri', 'se', 'tu', 'ze']
const nameSyllables = ['an', 'bel', 'cor', 'dan', 'el', 'fen', 'gar', 'hal', 'is', 'jor', 'kel', 'lam', 'mor', 'nor', 'ost', 'per', 'quin', 'ros', 'sten', 'tor', 'ul', 'ver', 'wick', 'yar']
const firstNames = ['Ada', 'Alan', 'Anaïs', 'Björn', 'Camille', 'Chiara', 'Dmitri', 'Elena', 'Émile', 'Farid', 'Grace', 'Hana', 'Ingrid',
  'José', 'Jürgen', 'Kenji', 'Lars', 'Łukasz', 'Maria', 'Mei', 'Nadia', 'Noël', 'Olga', 'Pedro', 'Priya', 'Rafael', 'Renée', 'Sara',
  'Søren', 'Tomás', 'Ursula', 'Victor', 'Wanda', 'Xavier', 'Yusuf', 'Zoë']

/** mulberry32: a small, fast PRNG with a 2^32 period, plenty for a few million draws. Returns [0, 1). */
export function prng (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Draws ranks 0..n-1 with probability proportional to (rank + 1)^-s. */
function zipf (n, s, random) {
  const cumulative = new Float64Array(n)
  let total = 0
  for (let i = 0; i < n; i++) cumulative[i] = (total += (i + 1) ** -s)
  return () => {
    const u = random() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cumulative[mid] < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** The digits of `n` in base `syllables.length`, each a syllable: distinct numbers give distinct words. */
function syllabic (n, syllables) {
  let word = ''
  do {
    word = syllables[n % syllables.length] + word
    n = Math.floor(n / syllables.length)
  } while (n > 0)
  return word
}

/**
 * A UUIDv7 for a record created at `ms`, its random bits from `random`: the same ids in every run, so
 * that each engine's seed (or seed cache) holds the same records. Unique while the instants are.
 */
export function uuidAt (ms, random) {
  const time = ms.toString(16).padStart(12, '0')
  const bits = n => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('')
  return `${time.slice(0, 8)}-${time.slice(8)}-7${bits(3)}-${(8 + Math.floor(random() * 4)).toString(16)}${bits(3)}-${bits(12)}`
}

export const idSeed = 0x1d5eed

// Seeded books were created 10 ms apart from this instant on (and never updated), the same in every
// run, so that updated_since has a range to cut and a seed cache stays valid.
export const seededFrom = Date.parse('2020-01-01T00:00:00.000Z')
/** The creation time of the book `fraction` of the way through a collection of `count`. */
export const seededAt = count => fraction => new Date(seededFrom + Math.floor(count * fraction) * 10).toISOString()

const capital = word => word[0].toUpperCase() + word.slice(1)

/** The vocabulary's word of `rank` (0 the commonest), as it appears in titles. */
export function word (rank) {
  const plain = syllabic(rank + wordSyllables.length, wordSyllables)
  return capital(rank % 7 === 3 ? plain.replace('e', 'é') : plain)
}

export const authorCount = books => Math.max(20, Math.round(60_000 * books / 1_000_000))

export function authorName (index) {
  return `${firstNames[index % firstNames.length]} ${capital(syllabic(Math.floor(index / firstNames.length) + nameSyllables.length, nameSyllables))}`
}

/**
 * The books' values, one at a time: `next()` returns { title, author, published_year, words, authorIndex }
 * (words: the distinct vocabulary ranks of the title).
 */
export function bookGenerator (books) {
  const random = prng(titleSeed)
  const nextWord = zipf(vocabularySize, 1, random)
  const nextAuthor = zipf(authorCount(books), 0.6, random)
  return () => {
    const length = 1 + Math.floor(random() * 6)
    const ranks = []
    for (let i = 0; i < length; i++) ranks.push(nextWord())
    const authorIndex = nextAuthor()
    const year = random() < 0.05 ? null : 1800 + Math.floor(227 * Math.sqrt(random()))
    return { title: ranks.map(word).join(' '), author: authorName(authorIndex), published_year: year, words: [...new Set(ranks)], authorIndex }
  }
}

/** Tallies what the scenarios pick their terms and authors from, as the books are generated. */
export class Tally {
  constructor (books) {
    this.books = books
    this.wordBooks = new Int32Array(vocabularySize)
    this.authorBooks = new Int32Array(authorCount(books))
  }

  add ({ words, authorIndex }) {
    for (const rank of words) this.wordBooks[rank]++
    this.authorBooks[authorIndex]++
  }

  /** Up to `most` items of `counts` whose count is in [low, high], spread over the list; else the one nearest `aim`. */
  static #within (counts, low, high, aim, most) {
    const inside = []
    for (let i = 0; i < counts.length; i++) if (counts[i] >= low && counts[i] <= high) inside.push(i)
    if (inside.length === 0) {
      let best = 0
      for (let i = 1; i < counts.length; i++) if (Math.abs(counts[i] - aim) < Math.abs(counts[best] - aim)) best = i
      return [best]
    }
    const step = Math.max(1, inside.length / most)
    const picked = []
    for (let at = 0; at < inside.length && picked.length < most; at += step) picked.push(inside[Math.floor(at)])
    return picked
  }

  /**
   * Rare terms: in 10–50 books at 1,000,000, the same share of a smaller collection (at least one
   * book); common terms: in 10–20 % of the books; authors with a few dozen books (24–48, which the
   * scaled author count keeps at every size). Each list gives the books it matches.
   */
  picks () {
    const scale = this.books / 1_000_000
    const rareLow = Math.max(1, Math.round(10 * scale))
    const rareHigh = Math.max(rareLow, Math.round(50 * scale))
    const terms = (low, high, aim, most) => Tally.#within(this.wordBooks, low, high, aim, most)
      .map(rank => ({ term: word(rank), books: this.wordBooks[rank] }))
    return {
      rare: terms(rareLow, rareHigh, (rareLow + rareHigh) / 2, 1000),
      common: terms(Math.ceil(this.books * 0.1), Math.floor(this.books * 0.2), this.books * 0.15, 10),
      authors: Tally.#within(this.authorBooks, 24, 48, 36, 1000).map(i => ({ author: authorName(i), books: this.authorBooks[i] }))
    }
  }
}
