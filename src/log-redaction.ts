// What a request may carry that is a credential, masked before a URL reaches a log line.

// Query parameters whose name says they carry a credential (api_key, access_token, password, …).
const credentialParameter = /([?&][^=&#]*(?:key|token|secret|passw|auth|signature|credential|session)[^=&#]*=)[^&#]*/gi
// The shape of the service's own API keys (src/api-keys.ts), wherever in the URL one was pasted.
const apiKeyShape = /bsk_[\w-]+/g

/**
 * A redactor for request URLs: values of credential-named query parameters, anything shaped like one
 * of the service's API keys, and the operator's own secrets (`secrets`: the admin key, the metrics
 * token) are replaced by `[redacted]`. A URL with no query, no `bsk_` and no secret in it, nearly
 * every one, is returned as is after a few substring checks.
 */
export function urlRedactor (secrets: readonly (string | null)[]): (url: string) => string {
  const configured = secrets.filter((secret): secret is string => secret !== null && secret !== '')
  return url => {
    let safe = url
    for (const secret of configured) if (safe.includes(secret)) safe = safe.replaceAll(secret, '[redacted]')
    if (safe.includes('bsk_')) safe = safe.replace(apiKeyShape, '[redacted]')
    if (safe.includes('?')) safe = safe.replace(credentialParameter, '$1[redacted]')
    return safe
  }
}
