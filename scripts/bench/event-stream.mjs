// bench:events' readers: one SSE stream of book.created events, and when each event arrived on it.
import http from 'node:http'
import { now } from './clock.mjs'
import { apiKey } from './servers.mjs'

/**
 * Opens one SSE stream and parses its frames; each book.created event's delivery latency (the chunk's
 * arrival here minus the event's `time`) is kept by record id. Resolves once the stream's first frame (retry:) came.
 */
export function openStream (port, index) {
  const stream = { index, received: new Map(), duplicates: 0, other: 0, ended: false, request: null }
  return new Promise((resolve, reject) => {
    const request = http.get({
      host: '127.0.0.1',
      port,
      path: '/events/stream?types=book.created',
      agent: false,
      headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' }
    }, res => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream ${index} answered ${res.statusCode}`))
        res.resume()
        return
      }
      res.setEncoding('utf8')
      let buffer = ''
      res.on('data', chunk => {
        const at = now()
        buffer += chunk
        let end
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = frame.split('\n').find(line => line.startsWith('data: '))
          if (data === undefined) continue
          const event = JSON.parse(data.slice(6))
          if (event.type !== 'book.created') {
            stream.other++
            continue
          }
          if (stream.received.has(event.data.id)) stream.duplicates++
          stream.received.set(event.data.id, at - Date.parse(event.time))
        }
        resolve(stream)
      })
      res.on('end', () => { stream.ended = true })
      res.on('error', () => { stream.ended = true })
    })
    request.on('error', error => stream.request === null ? reject(error) : (stream.ended = true))
    stream.request = request
  })
}
