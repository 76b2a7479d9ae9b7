// The API's listener: where it binds, the URL clients know it by, and what a connection or request may cost it.
import { concern } from './concern.js'
import { ConfigError, integer, optional, text, trimmed, type Reader } from './parse.js'

/** An absolute http(s) URL with no query or fragment, kept without its trailing slash. */
const publicUrl: Reader<string> = {
  accepts: 'an `http://` or `https://` URL without credentials, query or fragment',
  read (raw, name) {
    const url = URL.canParse(trimmed(raw, name)) ? new URL(raw) : null
    if (url === null || !['http:', 'https:'].includes(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new ConfigError(`${name} must be an http:// or https:// URL without credentials, query or fragment, e.g. https://api.example.org (got ${JSON.stringify(raw)})`)
    }
    return url.href.replace(/\/+$/, '')
  }
}

/** HOST: an address or host name, without the port a URL would carry (`localhost:3000` is PORT's business). */
const hostName: Reader<string> = {
  accepts: 'an address or host name',
  read (raw, name) {
    const host = text('an address or host name').read(raw, name)
    const withPort = /^([^:[\]]+|\[[^\]]+\]):(\d+)$/.exec(host)
    if (withPort !== null) throw new ConfigError(`${name} takes no port (got ${JSON.stringify(host)}): set ${name}=${withPort[1]!.replace(/^\[(.*)\]$/, '$1')} and PORT=${withPort[2]!}`)
    return host
  }
}

export const server = concern({
  title: 'Server',
  about: 'The API\'s listener: where it binds, and how long and how many connections it keeps (in all, and from one address).',
  variables: {
    // Read by the entry points before the rest (src/config/env-file.ts); declared here to be checked and listed.
    envFile: { name: 'ENV_FILE', default: '', shown: '`.env`', reader: text('a file path, or `off`'), meaning: 'a dotenv file (`NAME=value` lines) whose settings apply beneath the environment, which wins over it; read at start by the service and the `keys` and `backup` commands, from their working directory. `.env` is read when it exists; a file named here must exist; `off` reads none. The start banner names the file and the settings it gave' },
    port: { name: 'PORT', default: '3000', reader: integer(0, 65535), meaning: 'TCP port to listen on; `0` picks a free one' },
    // Loopback by default, so that nothing is exposed by accident.
    host: { name: 'HOST', default: '127.0.0.1', reader: hostName, meaning: 'interface to bind; `0.0.0.0` to expose the service' },
    publicUrl: { name: 'PUBLIC_URL', default: '', reader: optional(publicUrl), meaning: 'the URL clients reach the service at (e.g. `https://api.example.org` behind a proxy): the served document (`/docs/json`) names it as its first server, which generated clients take as their base URL and Swagger UI sends "Try it out" to; unset, the address the service listens on (`http://<HOST>:<PORT>`, `localhost` for `0.0.0.0`)' },
    bodyLimit: { name: 'BODY_LIMIT', default: '65536', reader: integer(1024, 16 * 1024 * 1024), meaning: 'largest request body in bytes' },
    headersTimeout: { name: 'HEADERS_TIMEOUT', default: '10000', reader: integer(100, 600_000), meaning: 'ms a client has to send a request\'s headers, from the connection\'s opening or, after a response, from the end of `KEEP_ALIVE_TIMEOUT` (then 408 and disconnect, whatever else it sends meanwhile); at most `REQUEST_TIMEOUT`' },
    requestTimeout: { name: 'REQUEST_TIMEOUT', default: '30000', reader: integer(100, 3_600_000), meaning: 'ms a client has to send its whole request, body included' },
    keepAliveTimeout: { name: 'KEEP_ALIVE_TIMEOUT', default: '5000', reader: integer(100, 600_000), meaning: 'ms an idle keep-alive connection stays open' },
    maxConnections: { name: 'MAX_CONNECTIONS', default: '1024', reader: integer(1, 1_000_000), meaning: 'open connections at once; further ones are dropped' },
    // A quarter of MAX_CONNECTIONS: one client cannot hold them all, and a benchmark's 32 to 64
    // connections, or a proxy's pool for a node's requests in flight (a few milliseconds each), fit well within.
    maxConnectionsPerAddress: { name: 'MAX_CONNECTIONS_PER_ADDRESS', default: '256', reader: integer(1, 1_000_000), meaning: 'open connections from one client address at once (an IPv6 address on the internet counts by its /64); further ones are dropped at once. Behind a proxy every client has the proxy\'s address: set it to the proxy\'s largest pool of connections to a node (see [Operating](operating.md#behind-a-proxy))' }
  },
  check (part) {
    // Node refuses a server whose headers may take longer than the whole request.
    if (part.headersTimeout > part.requestTimeout) {
      throw new ConfigError(`HEADERS_TIMEOUT (${part.headersTimeout}) must not exceed REQUEST_TIMEOUT (${part.requestTimeout})`)
    }
  }
})
