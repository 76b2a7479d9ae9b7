// bench:events' writer: POST /books at a fixed rate, open-loop (each send on its tick, answered or not).
import http from 'node:http'
import { now } from './clock.mjs'
import { nextPostedIsbn } from './isbn.mjs'
import { apiKey } from './servers.mjs'

// Numbers the written books' titles across the warm-up and the measured window.
let written = 0

/**
 * POST /books at `rate` per second for `seconds`, open-loop; resolves to the created ids. The first
 * failed answer is told to `progress`.
 */
export async function write (port, rate, seconds, progress) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const created = new Set()
  let failed = 0
  const inFlight = new Set()
  const post = n => new Promise(resolve => {
    const body = JSON.stringify({ title: `Streamed book ${n}`, author: 'Bench Author', isbn: nextPostedIsbn(), published_year: 2001 })
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/books',
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) }
    }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { text += chunk })
      res.on('end', () => {
        if (res.statusCode === 201) created.add(JSON.parse(text).book_id)
        else if (failed++ === 0) progress(`a write answered ${res.statusCode}: ${text.slice(0, 200)}`)
        resolve()
      })
    })
    req.on('error', () => { failed++; resolve() })
    req.end(body)
  })
  const started = now()
  const total = Math.round(rate * seconds)
  let sent = 0
  while (sent < total) {
    const due = Math.min(total, Math.floor((now() - started) / 1000 * rate) + 1)
    while (sent < due) {
      sent++
      const p = post(written++)
      inFlight.add(p)
      p.then(() => inFlight.delete(p))
    }
    const next = started + sent / rate * 1000
    await new Promise(resolve => setTimeout(resolve, Math.max(0, next - now())))
  }
  const sending = (now() - started) / 1000
  await Promise.all(inFlight)
  const answered = (now() - started) / 1000
  agent.destroy()
  return { created, failed, sent, sending, answered }
}
