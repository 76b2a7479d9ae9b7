// A consumer process killed mid-stream while writers run, restarted from its last id: every event once, in order (two nodes on PostgreSQL).
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { adminKey, build, dune, openTestRepositories, tempDatabase, testEngine, testStorage } from './helper.js'

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

  // Writers on every node: creates and replaces, 600 in all, while the consumer is killed and restarted.
  const total = 600
  let written = 0
  const writer = (async () => {
    const inFlight: Promise<unknown>[] = []
    for (let i = 0; i < total; i++) {
      const { api } = nodes[i % nodes.length]!
      inFlight.push(api.app.inject({ method: 'POST', url: '/books', headers: bearer, payload: { ...dune, isbn: null, title: `Write ${i}` } }).then(async res => {
        written++
        if (i % 3 === 0) await api.app.inject({ method: 'PUT', url: `/books/${res.json().book_id}`, headers: bearer, payload: { ...dune, isbn: null, title: `Rewrite ${i}` } })
      }))
      if (inFlight.length === 20) await Promise.all(inFlight.splice(0))
      await sleep(1)
    }
    await Promise.all(inFlight)
  })()

  const killed = consume(nodes[0]!.origin)
  while (lines().length < 50) await sleep(10)
  killed.kill('SIGKILL')
  await new Promise(resolve => killed.once('exit', resolve))
  const beforeKill = lines().length
  t.ok(written < total, `killed after ${beforeKill} events, with writers still running (${written} of ${total} creates done)`)

  consume(nodes.at(-1)!.origin)
  await writer
  // Every event in the feed, as one reader pages through it.
  const all: string[] = []
  for (let after = start; ;) {
    const page = (await nodes[0]!.api.app.inject({ url: `/events?limit=500&after=${after}`, headers: bearer })).json() as { items: { id: string }[], next_cursor: string }
    all.push(...page.items.map(e => e.id))
    if (page.next_cursor === after) break
    after = page.next_cursor
  }
  t.equal(all.length, total + total / 3, 'the feed holds one event per write')
  const deadline = Date.now() + 30_000
  while (lines().length < all.length && Date.now() < deadline) await sleep(20)
  const consumed = lines()
  t.equal(new Set(consumed).size, consumed.length, 'no event twice')
  t.same(consumed, all, 'the ids received are the ids in the feed, in its order')
})
