// The hostile scenario's attacker, a process of its own: runs one attack of ./hostile-attacks.mjs until its stdin ends, then prints what it sent and got.
// Usage (by ./hostile-run.mjs): node hostile-attacker.mjs '{"attack":"h1","port":3000,"keys":{"reader":"…","writer":"…"}}'
import { setTimeout as sleep } from 'node:timers/promises'
import { word } from './data.mjs'
import { attacks } from './hostile-attacks.mjs'
import { chunked, closeAll, exchange, head } from './hostile-wire.mjs'

const { attack: id, port, keys } = JSON.parse(process.argv[2])
const { params } = attacks.find(a => a.id === id)

// `searches`: the answers to L3's keyed searches beside its bursts.
const tally = { sent: 0, answers: {}, notes: [], searches: null }
const attack = { stopped: false }

/** Sends `request` and counts its answer (an answer that has not come when the attack stops is not counted). */
async function send (request, options) {
  tally.sent++
  const answer = await exchange(port, request, options)
  if (!attack.stopped) tally.answers[answer.status] = (tally.answers[answer.status] ?? 0) + 1
  return answer
}

/** `attempt()` started every `everyMs`, whether or not the earlier ones were answered. */
async function paced (everyMs, attempt) {
  while (!attack.stopped) {
    attempt()
    await sleep(everyMs)
  }
}

/** `attempt()` one after another, each started `everyMs` at the soonest after the one before. */
async function oneAfterAnother (everyMs, attempt) {
  while (!attack.stopped) {
    const started = performance.now()
    await attempt()
    await sleep(Math.max(0, everyMs - (performance.now() - started)))
  }
}

const run = {
  h1 () {
    const body = '['.repeat(params.depth) + Array(params.loneSurrogates).fill('"\\ud800"').join(',') + ']'.repeat(params.depth)
    const request = head('POST', params.path, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }) + body
    return paced(params.everyMs, () => send(request))
  },
  h2 () {
    const body = chunked(`title\n${'a'.repeat(params.chunkBytes)}`, 'a'.repeat(params.recordChars), params.chunkBytes)
    const request = head('POST', params.path, { Authorization: `Bearer ${keys.writer}`, 'Content-Type': 'text/csv', 'Transfer-Encoding': 'chunked' }) + body
    return oneAfterAnother(params.everyMs, () => send(request))
  },
  async m1 () {
    const request = head('GET', params.path, { Accept: 'text/csv' })
    for (let i = 0; i < params.readers; i++) send(request, { readBytes: params.readBytes })
    await sleep(params.probeAfterMs)
    if (attack.stopped) return
    // Someone else's export, with a key: does it get a slot? Its first bytes tell, and it leaves at once.
    const probe = await exchange(port, head('GET', params.path, { Accept: 'text/csv', Authorization: `Bearer ${keys.reader}` }), { readBytes: 1 })
    probe.socket.destroy()
    tally.notes.push(`a keyed export meanwhile: ${probe.status}`)
  },
  m2 () {
    const request = head('GET', params.path, { Accept: 'text/csv' })
    return oneAfterAnother(params.everyMs, () => send(request))
  },
  l3 () {
    let n = 0
    tally.searches = {}
    // Someone else's search, with a key, while a burst is read: is it answered?
    const search = async () => {
      const q = encodeURIComponent(`${word(params.probeWordRank)} -zq${n++}`)
      const { status } = await exchange(port, head('GET', `/books?limit=20&q=${q}`, { Authorization: `Bearer ${keys.reader}` }))
      if (!attack.stopped) tally.searches[status] = (tally.searches[status] ?? 0) + 1
    }
    return paced(params.everyMs, () => {
      for (let i = 0; i < params.burst; i++) send(head('GET', `/books?limit=${params.limit}&q=${encodeURIComponent(`${params.query} -zq${n++}`)}`))
      sleep(params.probeAfterMs).then(search)
    })
  }
}

process.stdin.resume()
process.stdin.once('end', () => {
  attack.stopped = true
  closeAll()
  if (tally.searches !== null) {
    tally.notes.push(`keyed searches meanwhile: ${Object.entries(tally.searches).map(([status, n]) => `${n} × ${status}`).join(', ') || 'none answered'}`)
  }
  const cpu = process.cpuUsage()
  process.stdout.write(JSON.stringify({ ...tally, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + '\n', () => process.exit(0))
})
run[id]().catch(error => {
  console.error(`attacker ${id}: ${error.stack}`)
  process.exit(1)
})
