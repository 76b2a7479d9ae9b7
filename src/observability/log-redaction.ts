// What a request may carry that is a credential, masked before a URL (or text quoting one) reaches a log line, a span or a response.
import type { WorkMeter } from '../formats/work-meter.js'

// Query parameters whose name says they carry a credential (api_key, access_token, password, …); not
// the books' `author` filter, which problems echo in their instance.
const credentialName = /key|token|secret|passw|auth(?!ors?$)|signature|credential|session/i
// The prefix of the service's own API keys (src/access/api-keys.ts), in any letter case.
const keyPrefix = /bsk_/gi
const replacement = '[redacted]'

/**
 * Characters that can spell a character of an API key (`bsk_<hex>_<base64url>`): the key's own and
 * the `%` and hex digits of escapes, at any depth of encoding. A spelling of a key is a run of them,
 * so masking the whole run that holds a key's prefix masks every spelling of the key.
 */
function spellsKey (code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || code === 0x2d || code === 0x25
}

function hexValue (code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  if (code >= 0x41 && code <= 0x46) return code - 0x37
  if (code >= 0x61 && code <= 0x66) return code - 0x57
  return -1
}

/**
 * `text` percent-decoded until no escape is left, however many times it was encoded (`%2562` → `%62`
 * → `b`): escapes spell bytes, one character each; other characters stay as they are. `origin[i]` is
 * where in `text` the i-th character starts. Read from the end, so that each escape meets what follows
 * it already decoded: one pass, linear in the text.
 */
export function decodeFully (text: string, meter: WorkMeter = () => {}): { decoded: string, origin: number[] } {
  // The decoded text from the end, reversed: the last element is the next character.
  const codes: number[] = []
  const origin: number[] = []
  for (let at = text.length - 1; at >= 0; at--) {
    let code = text.charCodeAt(at)
    meter(1)
    // A '%' followed by two hex digits, once what follows is decoded, is the byte they spell, which may be a '%' again.
    while (code === 0x25 && codes.length >= 2) {
      const high = hexValue(codes[codes.length - 1]!)
      const low = hexValue(codes[codes.length - 2]!)
      if (high === -1 || low === -1) break
      codes.length -= 2
      origin.length -= 2
      code = high * 16 + low
      meter(1)
    }
    codes.push(code)
    origin.push(at)
  }
  codes.reverse()
  origin.reverse()
  let decoded = ''
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let start = 0; start < codes.length; start += 8192) decoded += String.fromCharCode(...codes.slice(start, start + 8192))
  meter(codes.length)
  return { decoded, origin }
}

/**
 * Marks `text[from..to]` as masked, and the rest of the runs of key characters it starts and ends in.
 * Every run it touches ends up masked whole, so a marked neighbour means the rest of its run is marked
 * already: nothing is marked twice over, however many prefixes a run holds.
 */
function maskRun (text: string, masked: Uint8Array, from: number, to: number, meter: WorkMeter): void {
  let start = from
  while (start > 0 && masked[start - 1] === 0 && spellsKey(text.charCodeAt(start - 1)) && spellsKey(text.charCodeAt(start))) start--
  let end = to
  while (end < text.length - 1 && masked[end + 1] === 0 && spellsKey(text.charCodeAt(end + 1)) && spellsKey(text.charCodeAt(end))) end++
  masked.fill(1, start, end + 1)
  meter(end - start + 1)
}

/** The values of credential-named query parameters masked; what is not a query is kept. */
function maskCredentialParameters (text: string, meter: WorkMeter): string {
  const query = text.indexOf('?')
  if (query === -1) return text
  let safe = text.slice(0, query + 1)
  meter(query + 1)
  // Parameters end at `&`; a `#` (a fragment, should a client send one) ends one too.
  for (let start = query + 1; start <= text.length;) {
    let end = start
    while (end < text.length && text[end] !== '&' && text[end] !== '#') end++
    const parameter = text.slice(start, end)
    const equals = parameter.indexOf('=')
    meter(end - start + 1)
    safe += equals !== -1 && credentialName.test(decodeFully(parameter.slice(0, equals), meter).decoded)
      ? `${parameter.slice(0, equals)}=${replacement}`
      : parameter
    if (end < text.length) safe += text[end]
    start = end + 1
  }
  return safe
}

/**
 * A redactor for request URLs, and for whatever else echoes one (a problem's detail, a span's path):
 * values of credential-named query parameters, anything holding the prefix of the service's API keys,
 * and the operator's own secrets (`secrets`: the admin key, the metrics token) are replaced by
 * `[redacted]`, however percent-encoded they were sent, in part or whole, once or many times (the server
 * decodes them, so the encoding hides nothing). What holds a key's prefix is masked with the whole run
 * of characters around it that could spell a key: the key's id and secret go with it, whatever
 * characters of theirs were escaped. Linear in the text; `meter` is told the work, for tests. A text
 * with no `%`, no `bsk_` and no secret in it, nearly every URL, costs a few substring checks.
 */
export function urlRedactor (secrets: readonly (string | null)[], { meter = () => {} }: { meter?: WorkMeter } = {}): (text: string) => string {
  const configured = secrets.filter((secret): secret is string => secret !== null && secret !== '')
  // Any spelling of a secret decodes to what the secret itself decodes to.
  const decodedSecrets = configured.map(secret => decodeFully(secret).decoded)
  return text => {
    meter(text.length * (2 + configured.length))
    keyPrefix.lastIndex = 0
    const spelt = text.includes('%') || keyPrefix.test(text) || configured.some(secret => text.includes(secret))
    return maskCredentialParameters(spelt ? maskCredentials(text) : text, meter)
  }

  function maskCredentials (text: string): string {
    const { decoded, origin } = decodeFully(text, meter)
    const masked = new Uint8Array(text.length)
    keyPrefix.lastIndex = 0
    for (let found = keyPrefix.exec(decoded); found !== null; found = keyPrefix.exec(decoded)) {
      meter(1)
      // Its run is masked already (by the prefix before it in the run, say).
      if (masked[origin[found.index]!] === 1) continue
      maskRun(text, masked, origin[found.index]!, origin[found.index + 3]!, meter)
    }
    meter(decoded.length)
    for (const secret of decodedSecrets) {
      meter(decoded.length)
      for (let found = decoded.indexOf(secret); found !== -1; found = decoded.indexOf(secret, found + 1)) {
        meter(secret.length)
        maskRun(text, masked, origin[found]!, origin[found + secret.length - 1]!, meter)
      }
    }
    let safe = ''
    for (let at = 0; at < text.length; at++) {
      if (masked[at] === 0) safe += text[at]
      else if (at === 0 || masked[at - 1] === 0) safe += replacement
    }
    meter(text.length)
    return safe
  }
}
