// A consumer process killed mid-stream while writers run, restarted from its last id: every event once, in order (two nodes on PostgreSQL).
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { settled } from './feed-contract.js'
import { adminKey, build, dune, eventually, openTestRepositories, tempDatabase, testEngine, testStorage } from './helper.js'

const consumerJs = new URL('./fixtures/feed-consumer.mjs', import.meta.url).pathname
const bearer = { authorization: `Bearer ${adminKey}` }

t.test('killed after k events and restarted with its last id, a consumer receives every event once, in order', async t => {
  // Two nodes on one PostgreSQL database, the consumer switching between them; one node on SQLite.
  const storage = await testStorage(t)
  const first = await openTestRepositories(t, storage)
  const second = testEngine === 'postgres' ? await openTestRepositories(t, storage) : null
  const nodes = await Promise.all([first, ...second === null ? [] : [second]].map(async repositories => {
    // The writes here far outrun the default quota of a key.
    const api = await build(t, { eventsPoll: 50, rateLimit: { requests: 1_000_000, seconds: 60 } }, { repositories })
    await api.app.listen({ port: 0, host: '127.0.0.1' })
    return { api, origin: `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}` }
  }))
  const file = join(tempDatabase(t), '..', 'consumed.txt')
  const start = await first.events.head()
  const lines = () => existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
  const consume = (origin: string) => {
    // A program of its own, as a consumer would be: not instrumented (it is killed mid-write).
    const child = spawn(process.execPath, [consumerJs, origin, adminKey, file, start], { stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH ?? '' } })
    t.teardown(() => { child.kill('SIGKILL') })
    return child
  }

  // Writers on every node, creates with every third book then replaced, running while the consumer is killed and
  // restarted: they write on until the kill and 300 creates past it, so the kill lands mid-stream however fast
  // either side is. Before the kill they pause at 1,000 creates: on PostgreSQL a transaction open elsewhere on the
  // server can hold the feed back for a while, and the consumer must still reach its 50th event first.
  let attempted = 0
  let accepted = 0
  let killed = false
  let consumerKilled = (): void => {}
  const kill = new Promise<void>(resolve => { consumerKilled = resolve })
  const writer = (async () => {
    const inFlight: Promise<unknown>[] = []
    for (let i = 0, afterKill = 0; afterKill < 300; i++) {
      if (i === 1_000) await kill
      if (killed) afterKill++
      const { api } = nodes[i % nodes.length]!
      const write = async (method: 'POST' | 'PUT', url: string, title: string) => {
        attempted++
        const res = await api.app.inject({ method, url, headers: bearer, payload: { ...dune, isbn: null, title } })
        if (res.statusCode < 300) accepted++
        return res
      }
      inFlight.push(write('POST', '/books', `Write ${i}`).then(async res => {
        if (i % 3 === 0) await write('PUT', `/books/${res.json().book_id}`, `Rewrite ${i}`)
      }))
      if (inFlight.length === 20) await Promise.all(inFlight.splice(0))
      await sleep(1)
    }
    await Promise.all(inFlight)
  })()

  const consumer = consume(nodes[0]!.origin)
  while (lines().length < 50) await sleep(10)
  consumer.kill('SIGKILL')
  await new Promise(resolve => consumer.once('exit', resolve))
  killed = true
  consumerKilled()
  t.comment(`killed after ${lines().length} events, ${accepted} writes done`)

  consume(nodes.at(-1)!.origin)
  await writer
  t.equal(accepted, attempted, 'every write is accepted')
  await settled(first.events, start, accepted)
  // Every event in the feed, as one reader pages through it.
  const all: string[] = []
  for (let after = start; ;) {
    const page = (await nodes[0]!.api.app.inject({ url: `/events?limit=500&after=${after}`, headers: bearer })).json() as { items: { id: string }[], next_cursor: string }
    all.push(...page.items.map(e => e.id))
    if (page.next_cursor === after) break
    after = page.next_cursor
  }
  t.equal(all.length, accepted, 'the feed holds one event per write')
  await eventually(async () => lines(), consumed => consumed.length >= all.length, `the consumer at all ${all.length} events`)
  const consumed = lines()
  t.equal(new Set(consumed).size, consumed.length, 'no event twice')
  t.same(consumed, all, 'the ids received are the ids in the feed, in its order')
})
