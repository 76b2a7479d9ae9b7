// What a request may carry that is a credential, masked before a URL reaches a log line or a response.

// Query parameters whose name says they carry a credential (api_key, access_token, password, …); not
// the books' `author` filter, which problems echo in their instance.
const credentialName = /key|token|secret|passw|auth(?!ors?$)|signature|credential|session/i
const queryParameter = /([?&])([^=&#]*)=[^&#]*/g
// The shape of the service's own API keys (src/access/api-keys.ts), wherever in the URL one was pasted.
const apiKeyShape = /bsk_[\w-]+/g
// The same shape with any of its characters percent-encoded, as the server decodes it: `bsk%5F…`, `%62sk_…`.
const encodedApiKeyShape = new RegExp(`${anySpelling('bsk_')}(?:[\\w-]|%(?:2d|3[0-9]|4[1-9a-f]|5[0-9af]|6[1-9a-f]|7[0-9a]))+`, 'gi')

/** A pattern for `text` with any of its characters written as itself or percent-encoded (UTF-8, hex in either case). */
function anySpelling (text: string): string {
  return [...text].map(char => {
    const encoded = [...Buffer.from(char)].map(byte => '%' + byte.toString(16).padStart(2, '0')).join('')
    return `(?:${char.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}|${encoded})`
  }).join('')
}

/** A name as the server decodes it; a malformed escape leaves it as sent. */
function decoded (name: string): string {
  try {
    return decodeURIComponent(name)
  } catch {
    return name
  }
}

/**
 * A redactor for request URLs, and for whatever else echoes one: values of credential-named query
 * parameters, anything shaped like one of the service's API keys, and the operator's own secrets
 * (`secrets`: the admin key, the metrics token) are replaced by `[redacted]`, however percent-encoded
 * they were sent (the server decodes them, so the encoding hides nothing). A URL with no query, no `%`,
 * no `bsk_` and no secret in it, nearly every one, is returned as is after a few substring checks.
 */
export function urlRedactor (secrets: readonly (string | null)[]): (url: string) => string {
  const configured = secrets.filter((secret): secret is string => secret !== null && secret !== '')
  const encodedSecrets = configured.map(secret => new RegExp(anySpelling(secret), 'gi'))
  return url => {
    let safe = url
    for (const secret of configured) if (safe.includes(secret)) safe = safe.replaceAll(secret, '[redacted]')
    if (safe.includes('bsk_')) safe = safe.replace(apiKeyShape, '[redacted]')
    if (safe.includes('%')) {
      for (const secret of encodedSecrets) safe = safe.replace(secret, '[redacted]')
      safe = safe.replace(encodedApiKeyShape, '[redacted]')
    }
    if (safe.includes('?')) {
      safe = safe.replace(queryParameter, (parameter, separator: string, name: string) =>
        credentialName.test(decoded(name)) ? `${separator}${name}=[redacted]` : parameter)
    }
    return safe
  }
}
