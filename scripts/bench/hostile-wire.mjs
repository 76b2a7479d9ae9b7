// The hostile scenario's raw HTTP/1.1: requests written byte for byte on sockets of their own (chunk sizes, stalled readers), and the answers' status codes.
import net from 'node:net'

/** The request line and headers of `method` `path`, each request on a connection of its own. */
export function head (method, path, headers = {}) {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  return lines.join('\r\n') + '\r\n\r\n'
}

/** `text` as HTTP chunks of `size` bytes (the first chunk is `first`), then the last chunk: the client chooses every chunk's size. */
export function chunked (first, text, size) {
  const chunk = part => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`
  const parts = [chunk(first)]
  for (let at = 0; at < text.length; at += size) parts.push(chunk(text.slice(at, at + size)))
  parts.push('0\r\n\r\n')
  return parts.join('')
}

/** The sockets still open, destroyed at once by closeAll(). */
const open = new Set()

export function closeAll () {
  for (const socket of open) socket.destroy()
}

/**
 * Sends `request` (a string or Buffer, written at once) to 127.0.0.1:`port` on a new connection.
 * Resolves to { status, socket } once the answer has ended (status: its code, or 'closed' when the
 * server closed without one, 'error' on a socket error), or, with `readBytes`, once that many bytes of
 * it have come: the socket then stops reading and stays open, its kernel buffers filling, until
 * closeAll() or the caller destroys it.
 */
export function exchange (port, request, { readBytes = Infinity } = {}) {
  return new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1')
    open.add(socket)
    let text = ''
    let bytes = 0
    let status
    let settled = false
    const settle = outcome => {
      if (settled) return
      settled = true
      resolve({ status: outcome, socket })
    }
    socket.on('connect', () => socket.write(request))
    socket.on('data', chunk => {
      bytes += chunk.length
      if (status === undefined) {
        text += chunk.toString('latin1')
        const match = /^HTTP\/1\.1 (\d{3}) /.exec(text)
        if (match !== null) status = Number(match[1])
      }
      if (bytes >= readBytes) {
        socket.pause()
        settle(status ?? 'closed')
      }
    })
    socket.on('error', () => settle(status ?? 'error'))
    socket.on('close', () => {
      open.delete(socket)
      settle(status ?? 'closed')
    })
  })
}
