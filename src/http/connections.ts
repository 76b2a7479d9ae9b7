// How the API's and the ops listener's HTTP servers treat connections: deadlines, caps, Expect: 100-continue, and closing after an early answer.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import ipaddr from 'ipaddr.js'
import type { Config } from '../config/index.js'

export type ConnectionLimits = Pick<Config, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout'>
/** A listener's caps: MAX_CONNECTIONS and MAX_CONNECTIONS_PER_ADDRESS, or the ops listener's. */
export interface ConnectionCaps {
  maxConnections: number
  maxConnectionsPerAddress: number
}

/** How often the deadlines are checked: Node's default (30 s) would let short timeouts run on for half a minute. */
const checkEvery = (headersTimeout: number): number => Math.min(1000, headersTimeout)

/** Fastify's options for the deadlines: slow clients (slowloris) are cut off on headers, whole request and idle keep-alive. */
export function deadlines ({ headersTimeout, requestTimeout, keepAliveTimeout }: ConnectionLimits) {
  return {
    requestTimeout,
    keepAliveTimeout,
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: checkEvery(headersTimeout) }
  }
}

/**
 * Caps the open connections and answers requests whose body will not be read without reading it:
 * - Beyond `maxConnections` open connections Node drops new ones at once instead of letting them queue;
 *   beyond `maxConnectionsPerAddress` from one address (see `addressOf`), this does.
 * - A connection must send each request head in time (see `watchHeads`).
 * - `Expect: 100-continue`: Node would invite every such client to send its body before the request is
 *   even looked at. The invitation goes out only when the body is read, after the key, the quota, the
 *   media type and the declared length passed; a request refused before gets its final status alone
 *   (RFC 9110 §10.1.1).
 * - An answer sent before the request's body has arrived (401, 413, 415…) says `Connection: close`, and
 *   the connection closes in stages (RFC 9112 §9.6): the answer and a FIN first, then the body is read
 *   and dropped until it ends or REQUEST_TIMEOUT (counted from the request's start) cuts it off. Closing
 *   at once would reset the connection under a client still writing, which then never reads its answer.
 */
export function guardConnections (app: FastifyInstance, limits: ConnectionLimits & ConnectionCaps): void {
  const server: Server = app.server
  server.maxConnections = limits.maxConnections
  watchHeads(server, limits, app.log)
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    // Fastify reads a body by resuming the request's stream; an answer sent first settles the request.
    request.once('resume', () => { if (!response.headersSent) response.writeContinue() })
    server.emit('request', request, response)
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (bodyPending(request.raw)) {
      reply.header('connection', 'close')
      lingerBeforeClosing(request.raw.socket, request.raw)
    }
    done(null, payload)
  })
}

/**
 * What a connection's cap counts it against: its IPv4 address (an IPv4-mapped IPv6 one read as such);
 * for a global IPv6 address its /64, since one subscriber is given a whole /64 and could otherwise
 * open each connection from another address of it; any other IPv6 address (loopback, link-local,
 * a private network's) as it is. A socket whose peer is already gone has none: `unknown`, until it closes.
 */
export function addressOf (remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown'
  const address = ipaddr.process(remoteAddress)
  if (address.kind() === 'ipv4' || !address.match(globalUnicast)) return address.toString()
  return `${(address as ipaddr.IPv6).parts.slice(0, 4).map(part => part.toString(16)).join(':')}::/64`
}

const globalUnicast = ipaddr.parseCIDR('2000::/3')

/** A connection as watchHeads follows it. */
interface Connection {
  /** Requests whose heads arrived and that have not ended (their answer sent and their body all come). */
  inFlight: number
  /** While no request is in flight: when (performance.now()) its next request head must have arrived; Infinity otherwise. */
  deadline: number
  /** socket.bytesRead when the wait began; -1 for a new connection, which is answered 408 in any case, as Node does. */
  readBefore: number
}

/**
 * One deadline per connection for each request head: HEADERS_TIMEOUT from its opening, and after a
 * response KEEP_ALIVE_TIMEOUT (the idle wait a client is promised) plus HEADERS_TIMEOUT. Node has a
 * deadline of its own for a head once its first byte has come, and an idle timer after a response,
 * but its idle timer starts again on every byte, and the CR and LF a client may send between requests
 * start no head: a keep-alive connection that sends one every few seconds was held for ever. Requests
 * in flight (an event stream, an export, an upload being received) are never cut off by this: their
 * heads have come. A connection that sent something is answered 408 (as Node answers a late head),
 * one silent since its last response is closed as an idle one is. The same listener keeps each
 * address to `maxConnectionsPerAddress`: a connection beyond it is closed at once, without an answer,
 * as Node closes one beyond MAX_CONNECTIONS.
 */
function watchHeads (server: Server, { headersTimeout, keepAliveTimeout, maxConnectionsPerAddress }: ConnectionLimits & ConnectionCaps, log: FastifyBaseLogger): void {
  const connections = new Map<Socket, Connection>()
  const perAddress = new Map<string, number>()
  const refusals = new RefusalLog(log, maxConnectionsPerAddress)

  server.on('connection', (socket: Socket) => {
    const address = addressOf(socket.remoteAddress)
    const open = perAddress.get(address) ?? 0
    if (open >= maxConnectionsPerAddress) {
      socket.destroy()
      refusals.refused(address)
      return
    }
    perAddress.set(address, open + 1)
    connections.set(socket, { inFlight: 0, deadline: performance.now() + headersTimeout, readBefore: -1 })
    socket.once('close', () => {
      connections.delete(socket)
      const left = perAddress.get(address)! - 1
      if (left === 0) perAddress.delete(address)
      else perAddress.set(address, left)
    })
  })

  // First, before Fastify's listener, so that a response can never end before it is counted. Every
  // connection that can carry a request came through the listener above, as Node's own is one too.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    const connection = connections.get(socket)!
    connection.inFlight++
    connection.deadline = Infinity
    // In flight until its answer is sent and its body has all come: an answer sent before the body
    // (a 413, say) leaves the body to be read and dropped, within REQUEST_TIMEOUT.
    let halves = 2
    const ended = (): void => {
      if (--halves > 0 || --connection.inFlight > 0 || socket.destroyed) return
      connection.deadline = performance.now() + keepAliveTimeout + headersTimeout
      connection.readBefore = socket.bytesRead
    }
    request.once('close', ended)
    response.once('close', ended)
  })

  let sweep: NodeJS.Timeout | undefined
  server.on('listening', () => {
    clearInterval(sweep)
    sweep = setInterval(() => {
      const now = performance.now()
      for (const [socket, connection] of connections) {
        if (connection.deadline > now) continue
        connection.deadline = Infinity
        if (socket.bytesRead > connection.readBefore) server.emit('clientError', lateHead(), socket)
        else socket.destroy()
      }
    }, checkEvery(headersTimeout)).unref()
  })
  server.on('close', () => clearInterval(sweep))
}

/** The error Node raises for a late head, so that clientErrorHandler answers it alike (408). */
const lateHead = (): Error => Object.assign(new Error('No request head arrived in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })

/**
 * Says, at warn and at most once a minute, that addresses at their cap were refused connections: a
 * proxy in front that reaches it refuses its own clients, which the operator must learn of; an
 * attacker's refused connections must not flood the log.
 */
class RefusalLog {
  readonly #log: FastifyBaseLogger
  readonly #limit: number
  #count = 0
  #next = 0

  constructor (log: FastifyBaseLogger, limit: number) {
    this.#log = log
    this.#limit = limit
  }

  refused (address: string): void {
    this.#count++
    const now = performance.now()
    if (now < this.#next) return
    this.#log.warn({ remoteAddress: address, refused: this.#count, limit: this.#limit },
      'connections refused: their address already had as many open as MAX_CONNECTIONS_PER_ADDRESS (or OPS_MAX_CONNECTIONS_PER_ADDRESS) allows; behind a proxy, raise it to the proxy\'s pool')
    this.#count = 0
    this.#next = now + 60_000
  }
}

/**
 * Whether the request declares a body that has not all arrived. `=== false`: light-my-request's injected
 * requests have no such flag (nor a connection). The declaration matters: a bodiless request is complete
 * only once its headers' handler returned, and an answer may be written before.
 */
function bodyPending (request: IncomingMessage): boolean {
  return request.complete === false && (request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0)
}

/** Pieces of a refused body dropped at most before its connection is closed anyway. */
export const lingerPiecesMax = 1024

/**
 * Node ends a `Connection: close` response by `socket.destroySoon()`, which closes the socket once the
 * answer is written, whatever the client is still sending: this connection's instead only half-closes,
 * and closes once the unread body has been read and dropped, the request timeout ended it, or it came
 * in more than lingerPiecesMax pieces. Each piece (an HTTP chunk) costs the parser about 2 µs whatever
 * its size, and an honest client's are large (a 10 MB file is 160 pieces of 64 KiB): a client sending a
 * refused body in 20-byte chunks is cut off at the bound. The body is read and dropped here, not left
 * to Node (which drops a body nobody reads without a word), so that its pieces are counted.
 */
function lingerBeforeClosing (socket: Socket, request: IncomingMessage): void {
  let dropped = 0
  let answered = false
  // Once the answer is out and the body has come in more pieces than the bound, whichever is last.
  const closeIfTooMany = (): void => {
    if (answered && dropped >= lingerPiecesMax) setImmediate(() => socket.destroy())
  }
  request.on('data', () => {
    if (++dropped === lingerPiecesMax) closeIfTooMany()
  })
  socket.destroySoon = () => {
    answered = true
    socket.end()
    closeIfTooMany()
    // Called back at once should the body have ended meanwhile.
    finished(request, () => socket.destroy())
    // Flowing already, unless paused again by whoever read it before.
    request.resume()
  }
}
