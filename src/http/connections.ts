// How the API's and the ops listener's HTTP servers treat connections: deadlines, a cap, Expect: 100-continue, and closing after an early answer.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config/index.js'

export type ConnectionLimits = Pick<Config, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout'>

/** Fastify's options for the deadlines: slow clients (slowloris) are cut off on headers, whole request and idle keep-alive. */
export function deadlines ({ headersTimeout, requestTimeout, keepAliveTimeout }: ConnectionLimits) {
  return {
    requestTimeout,
    keepAliveTimeout,
    http: {
      headersTimeout,
      requestTimeout,
      // Node checks the deadlines only this often (30 s by default), so short timeouts need short checks.
      connectionsCheckingInterval: Math.min(1000, headersTimeout)
    }
  }
}

/**
 * Caps the open connections and answers requests whose body will not be read without reading it:
 * - Beyond `maxConnections` open connections Node drops new ones at once instead of letting them queue.
 * - `Expect: 100-continue`: Node would invite every such client to send its body before the request is
 *   even looked at. The invitation goes out only when the body is read, after the key, the quota, the
 *   media type and the declared length passed; a request refused before gets its final status alone
 *   (RFC 9110 §10.1.1).
 * - An answer sent before the request's body has arrived (401, 413, 415…) says `Connection: close`, and
 *   the connection closes in stages (RFC 9112 §9.6): the answer and a FIN first, then the body is read
 *   and dropped until it ends or REQUEST_TIMEOUT (counted from the request's start) cuts it off. Closing
 *   at once would reset the connection under a client still writing, which then never reads its answer.
 */
export function guardConnections (app: FastifyInstance, maxConnections: number): void {
  const server: Server = app.server
  server.maxConnections = maxConnections
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
 * Whether the request declares a body that has not all arrived. `=== false`: light-my-request's injected
 * requests have no such flag (nor a connection). The declaration matters: a bodiless request is complete
 * only once its headers' handler returned, and an answer may be written before.
 */
function bodyPending (request: IncomingMessage): boolean {
  return request.complete === false && (request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0)
}

/**
 * Node ends a `Connection: close` response by `socket.destroySoon()`, which closes the socket once the
 * answer is written, whatever the client is still sending: this connection's instead only half-closes,
 * and closes once the unread body has been read and dropped (or the request timeout ends it).
 */
function lingerBeforeClosing (socket: Socket, request: IncomingMessage): void {
  socket.destroySoon = () => {
    socket.end()
    // Called back at once should the body have ended meanwhile.
    finished(request, () => socket.destroy())
    // Node drops a body nobody reads (req._dump); resumed here too, whoever paused it.
    request.resume()
  }
}
