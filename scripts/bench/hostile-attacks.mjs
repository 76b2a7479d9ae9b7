// `npm run bench -- --hostile`: the attacks of issue 38 as the research of 2026-11-28 sent them, every parameter in this one place.
// A rerun after the fixes (which add limits of their own, e.g. on exports) changes them here and nowhere else.

// The anonymous quota (RATE_LIMIT_ANONYMOUS, 120/60 by default, per address) paces the anonymous
// attacks, as it would a real attacker's: at most 2 requests a second, or 120 spent at once and again
// at the next window. Keyed attacks are paced by the default keyed quota (RATE_LIMIT, 600/60): the
// bench raises that quota for every key, so that the victim is never refused, and the attacker keeps
// to the default itself.
const anonymousEveryMs = 500
const keyedEveryMs = 100

/** Seconds an attack runs before the victim's measured window opens, so that it bites from the window's first request (an attack's own `leadSeconds` wins). */
export const leadSeconds = 1

/** The scopes of the keys the bench creates: the victim's (GET one book) and the keyed attacker's (H2). */
export const victimScopes = 'books:read'
export const writerScopes = 'books:write'

/**
 * Each attack: `id` (for --only), `name` (the table's), whether it applies to each engine and how,
 * where that differs (`applies`), and `params`, read by ./hostile-attacker.mjs.
 */
export const attacks = [
  {
    id: 'h1',
    name: 'H1: 62.5 KB JSON bodies (20,000-deep arrays, 2,500 lone surrogates) to POST /nope, anonymous, 2 a second',
    applies: { sqlite: 'yes', postgres: 'yes (the HTTP layer, the same on both)' },
    // Research: depth 20,000 with 2,500 lone surrogates, 62.5 KB (under BODY_LIMIT's 64 KiB), 75 s of event loop.
    params: { path: '/nope', depth: 20_000, loneSurrogates: 2_500, everyMs: anonymousEveryMs }
  },
  {
    id: 'h2',
    name: 'H2: CSV import of one 300,000-character record in 20-byte HTTP chunks, sent at once, books:write key, one after another as its quota allows (16 requests each)',
    applies: { sqlite: 'yes', postgres: 'yes (the import\'s readers, the same on both)' },
    // Research: 15,000 chunks of 20 bytes (390 KB on the wire): 202 after 15.7 s, a GET beside waited 14.1 s.
    // Since the fixes an import counts one request more per 1,000 pieces its body arrives in (as per
    // 1,000 rows): 15,001 pieces are 16 requests of the quota, which paces the attacker to one import
    // every 1.6 s. Before them it counted as one: one import every 100 ms.
    params: { path: '/imports?collection=books&mode=valid', recordChars: 300_000, chunkBytes: 20, everyMs: keyedEveryMs * (1 + Math.floor((1 + 300_000 / 20) / 1000)) }
  },
  {
    id: 'm1',
    name: 'M1: 4 anonymous CSV exports whose readers read 300 bytes and stop (EXPORTS_MAX is 4)',
    applies: { sqlite: 'yes', postgres: 'yes (each export holds a connection and a snapshot)' },
    // Research: four stalled readers held every export slot for 150 s; the admin's export got 503.
    // `probeAfterMs`: then a keyed export asks for a slot, and its answer is reported. The readers stall
    // within a second or two and are held from 5 s before the window, so that the window sees them held
    // longer than PostgreSQL lets a transaction idle (idle_in_transaction_session_timeout, 10 s by default).
    leadSeconds: 5,
    params: { path: '/books', readers: 4, readBytes: 300, probeAfterMs: 2000 }
  },
  {
    id: 'm2',
    name: 'M2: anonymous CSV exports that select nothing (updated_since=2099, sort=title), one after another, at most 2 a second',
    applies: { sqlite: 'yes', postgres: 'yes (but the scan runs in PostgreSQL, not on the event loop)' },
    // Research: 0.98 s each at 200,000 books; repeated for 15 s, a keyed GET's median went 1.4 → 574 ms.
    params: { path: '/books?updated_since=2099-01-01T00:00:00Z&sort=title', everyMs: anonymousEveryMs }
  },
  {
    id: 'l3',
    name: 'L3: bursts of 40 anonymous prefix searches (limit=100, each query distinct), one every 5 s',
    applies: { sqlite: 'yes (a reader thread)', postgres: 'yes (the pool\'s connections)' },
    // Research: `ja* au* OR fr* he* OR le* to* -zq<i>`; the bench's titles are made of two-letter
    // syllables, so the same shape on them. 40 every 5 s spends the minute's quota (120) in the run's
    // first 15 s; the limiter answers the rest 429, as it would the research's attacker.
    // `probeAfterMs` into each burst, a keyed search for a word of middling frequency (the research's
    // victim searched) reports its answer.
    params: { query: 'ka* lo* OR mi* ne* OR ru* sa*', limit: 100, burst: 40, everyMs: 5000, probeAfterMs: 200, probeWordRank: 500 }
  }
]
