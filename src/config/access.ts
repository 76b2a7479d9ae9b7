// Who may call the API and how often: the admin key, public reads, browser origins, rate limits and the Redis that shares them.
import { concern } from './concern.js'
import { boolean, ConfigError, integer, list, optional, token, trimmed, url, type Reader } from './parse.js'

export interface RateLimit {
  requests: number
  seconds: number
}

const rateLimit: Reader<RateLimit> = {
  accepts: '`<requests>/<seconds>`, a window of 1 to 86400 seconds',
  read (raw, name) {
    const match = /^(\d{1,9})\/(\d{1,6})$/.exec(trimmed(raw, name))
    const [requests, seconds] = [Number(match?.[1]), Number(match?.[2])]
    if (!(requests >= 1 && seconds >= 1 && seconds <= 86_400)) {
      throw new ConfigError(`${name} must be <requests>/<seconds>, e.g. 600/60, with a window of 1 to 86400 seconds (got ${JSON.stringify(raw)})`)
    }
    return { requests, seconds }
  }
}

// An origin is scheme://host[:port] exactly; a path or a wildcard would widen the rule silently.
const origin = (entry: string) => /^https?:\/\/[\w.-]+(:\d{1,5})?$/.test(entry)

export const access = concern({
  title: 'Access',
  about: 'Who may call the API, from which browser origins, and how often (see [Security](security.md)).',
  variables: {
    // As long as a generated key's secret, so that the admin key is no easier to guess.
    adminApiKey: { name: 'ADMIN_API_KEY', default: '', reader: optional(token(32, 512, { secret: true })), meaning: 'an all-scopes API key set by the operator, for automation and containers; never stored, only compared' },
    publicBookReads: { name: 'PUBLIC_BOOK_READS', default: 'true', reader: boolean, meaning: '`false` requires a `books:read` key for book reads too (student reads always need a key)' },
    apiKeyCacheTtl: { name: 'API_KEY_CACHE_TTL_MS', default: '2000', reader: integer(0, 600_000), meaning: 'on PostgreSQL, how long a node trusts the API key it read: a revocation reaches every node within this time (usually at once, by NOTIFY)' },
    corsOrigins: { name: 'CORS_ORIGINS', default: '', shown: 'unset (CORS off)', reader: list('origins (`scheme://host[:port]`), comma-separated', 'origins such as https://app.example.org', origin), meaning: 'browser origins allowed to call the API, e.g. `https://app.example.org`' },
    // A real client rarely needs 10 requests a second; a flood meets 429 within a second.
    rateLimit: { name: 'RATE_LIMIT', default: '600/60', reader: rateLimit, meaning: 'requests per window for each API key' },
    rateLimitAnonymous: { name: 'RATE_LIMIT_ANONYMOUS', default: '120/60', reader: rateLimit, meaning: 'requests per window for each client address without a (valid) key' },
    // Checked here so that a typo stops the start with one line, not a reconnect loop in the log.
    redisUrl: { name: 'REDIS_URL', default: '', shown: 'unset (each process counts alone)', reader: optional(url(raw => /^rediss?:\/\//.test(raw) && URL.canParse(raw), '`redis://[:password@]host[:port][/db]` or `rediss://…`', 'a redis:// or rediss:// URL')), meaning: 'the Redis that holds the rate-limit counters every node shares (see [Running on PostgreSQL](postgresql.md), for several nodes)' },
    redisKeyPrefix: { name: 'REDIS_KEY_PREFIX', default: 'rl:', reader: token(1, 64, { secret: false }), meaning: 'prefix of those counters\' keys, so that several deployments can share one Redis' },
    // A local or same-zone Redis answers in well under a millisecond; this only bounds a dead or hung one.
    redisTimeout: { name: 'REDIS_TIMEOUT_MS', default: '250', reader: integer(10, 60_000), meaning: 'ms a request waits for Redis (connecting or counting) before it is counted by its node alone' }
  }
})
