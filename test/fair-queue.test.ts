// The fair queue of costly list pages: every interleaving of callers queuing, taking turns, finishing and giving up keeps the turns fair.
import fc from 'fast-check'
import t from 'tap'
import { anonymousBurstMs, anonymousDuty, anonymousSlots, FairGate, FairQueue, keyedTurns, TooManyWaitingError } from '../src/storage/fair-queue.js'
import { ListTimeoutError } from '../src/storage/list-sql.js'
import type { ListCaller } from '../src/storage/types.js'

const callers: ListCaller[] = [
  { id: 'k0', anonymous: false }, { id: 'k1', anonymous: false }, { id: 'k2', anonymous: false },
  // An address may look like a key's id: the kinds never share a queue.
  { id: 'k0', anonymous: true }, { id: '192.0.2.1', anonymous: true }, { id: '192.0.2.2', anonymous: true }, { id: '2001:db8::1', anonymous: true }
]
const nameOf = (caller: ListCaller) => `${caller.anonymous ? 'anonymous' : 'keyed'} ${caller.id}`

type Op = { op: 'push', caller: number } | { op: 'next' } | { op: 'finish', pick: number } | { op: 'remove', pick: number }
const op: fc.Arbitrary<Op> = fc.oneof(
  // Pushes weigh most, so that queues fill up to their bound.
  { weight: 4, arbitrary: fc.record({ op: fc.constant('push' as const), caller: fc.nat(callers.length - 1) }) },
  { weight: 3, arbitrary: fc.constant({ op: 'next' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('finish' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), pick: fc.nat() }) }
)

t.test('generated interleavings: FIFO within a caller, each caller in turn, the shares between keyed and anonymous callers, the bound per caller, nothing lost', async t => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 300 }), (slots, perCaller, ops) => {
    // Jobs take no time on this clock: the anonymous callers' share of the time is tested below.
    const queue = new FairQueue<number>({ slots, perCaller, clock: () => 0, wake: () => {} })
    // The model: each caller's waiting jobs in the order queued, the jobs handed out and not finished.
    const waiting = new Map<string, number[]>(callers.map(caller => [nameOf(caller), []]))
    const running: { caller: ListCaller, job: number }[] = []
    /** Per waiting caller, the callers of its kind that had a turn since it began to wait or had its own. */
    const passedBy = new Map<string, Set<string>>()
    let keyedSinceAnonymous = 0
    let nextJob = 0
    let pushed = 0
    let refused = 0
    let handedOut = 0
    let removed = 0
    const waits = (anonymous: boolean) => callers.some(caller => caller.anonymous === anonymous && waiting.get(nameOf(caller))!.length > 0)

    /** Asks for the next job with a slot free; whether one was handed out. */
    const take = (): boolean => {
      const [keyed, anonymous] = [waits(false), waits(true)]
      const runningAnonymous = running.filter(r => r.caller.anonymous).length
      const turn = queue.next()
      if (!keyed && !anonymous) {
        if (turn !== undefined) throw new Error('a job handed out while none waits')
        return false
      }
      if (!keyed && runningAnonymous >= anonymousSlots(slots)) {
        // Anonymous callers, even alone, hold no more than their share.
        if (turn !== undefined) throw new Error(`an anonymous turn with ${runningAnonymous} of ${slots} slots held by anonymous callers`)
        return false
      }
      if (turn === undefined) throw new Error('no job handed out while some wait')
      const name = nameOf(turn.caller)
      const jobs = waiting.get(name)!
      if (turn.job !== jobs[0]) throw new Error(`${name} got job ${turn.job} before ${jobs[0]}: not first come, first served`)
      if (keyed && anonymous) {
        const anonymousDue = keyedSinceAnonymous >= keyedTurns && runningAnonymous < anonymousSlots(slots)
        if (turn.caller.anonymous && !anonymousDue) throw new Error(`an anonymous turn after ${keyedSinceAnonymous} keyed ones with ${runningAnonymous} running, while keyed callers wait`)
        if (!turn.caller.anonymous && anonymousDue) throw new Error(`a keyed turn after ${keyedSinceAnonymous} in a row, while anonymous callers wait with ${runningAnonymous} running`)
      } else if (turn.caller.anonymous !== anonymous) throw new Error('a kind with nothing waiting had the turn')
      // Within a kind, in turn: no caller has two turns while another waits.
      for (const [other, passed] of passedBy) {
        if (other === name || !other.startsWith(turn.caller.anonymous ? 'anonymous' : 'keyed')) continue
        if (passed.has(name)) throw new Error(`${name} had two turns while ${other} waited`)
        passed.add(name)
      }
      keyedSinceAnonymous = turn.caller.anonymous ? 0 : keyedSinceAnonymous + 1
      jobs.shift()
      if (jobs.length === 0) passedBy.delete(name)
      else passedBy.set(name, new Set())
      running.push(turn)
      handedOut++
      return true
    }

    for (const step of ops) {
      if (step.op === 'push') {
        const caller = callers[step.caller]!
        const jobs = waiting.get(nameOf(caller))!
        const job = nextJob++
        pushed++
        try {
          queue.push(caller, job)
        } catch (error) {
          if (!(error instanceof TooManyWaitingError) || error.perCaller !== perCaller) throw error
          if (jobs.length < perCaller) throw new Error(`refused with ${jobs.length} of ${perCaller} waiting`)
          refused++
          continue
        }
        if (jobs.length >= perCaller) throw new Error(`queued beyond the bound: ${jobs.length + 1} of ${perCaller}`)
        if (jobs.length === 0) passedBy.set(nameOf(caller), new Set())
        jobs.push(job)
      } else if (step.op === 'next') {
        // A slot frees only for one job: the engines never ask with none free.
        if (running.length < slots) take()
      } else if (step.op === 'finish') {
        if (running.length === 0) continue
        const [done] = running.splice(step.pick % running.length, 1)
        queue.finished(done!.caller, done!.job)
      } else {
        const all = callers.flatMap(caller => waiting.get(nameOf(caller))!.map(job => ({ caller, job })))
        if (all.length === 0) {
          // A job not waiting (running, or never queued) is not taken out.
          if (queue.remove(callers[step.pick % callers.length]!, -1)) throw new Error('removed a job that was not waiting')
          continue
        }
        const { caller, job } = all[step.pick % all.length]!
        if (!queue.remove(caller, job)) throw new Error(`job ${job} of ${nameOf(caller)} was waiting but not removed`)
        const jobs = waiting.get(nameOf(caller))!
        jobs.splice(jobs.indexOf(job), 1)
        if (jobs.length === 0) passedBy.delete(nameOf(caller))
        removed++
      }
      if (queue.size !== callers.reduce((sum, caller) => sum + waiting.get(nameOf(caller))!.length, 0)) throw new Error('size is not the jobs waiting')
    }
    // No caller starves: with slots freed as jobs finish, every job still waiting is handed out.
    while (waits(false) || waits(true)) {
      if (running.length === slots || !take()) queue.finished(running[0]!.caller, running.shift()!.job)
    }
    if (queue.next() !== undefined || queue.size !== 0) throw new Error('jobs left once every one was handed out')
    if (handedOut + removed + refused !== pushed) throw new Error(`${pushed} pushed, ${handedOut} handed out, ${removed} removed, ${refused} refused`)
  }), { numRuns: 500 })
  t.pass('500 generated interleavings held every property')
})

t.test('anonymous callers hold at most a quarter of the slots (at least one), whether keyed callers wait or not', async t => {
  t.same([1, 2, 3, 4, 7, 8, 12, 64].map(anonymousSlots), [1, 1, 1, 1, 1, 2, 3, 16])
  const keyed = { id: 'key', anonymous: false }
  const queue = new FairQueue<string>({ slots: 8, perCaller: 100, wake: () => {} })
  for (let i = 0; i < 20; i++) queue.push({ id: `192.0.2.${i}`, anonymous: true }, `anonymous ${i}`)
  const first = Array.from({ length: 2 }, () => queue.next()!.job)
  t.same(first, ['anonymous 0', 'anonymous 1'], 'alone, anonymous callers take two slots of eight')
  t.equal(queue.next(), undefined, 'and leave the others free')
  queue.push(keyed, 'keyed first')
  t.same(queue.next(), { caller: keyed, job: 'keyed first' }, 'for a keyed caller that comes')
  queue.finished(keyed, 'keyed first')
  for (let i = 1; i < 20; i++) queue.push(keyed, `keyed ${i}`)
  for (let i = 0; i < 2; i++) queue.finished({ id: `192.0.2.${i}`, anonymous: true }, `anonymous ${i}`)
  const turns = Array.from({ length: 8 }, () => queue.next()!.job)
  t.same(turns, ['keyed 1', 'keyed 2', 'anonymous 2', 'keyed 3', 'keyed 4', 'keyed 5', 'anonymous 3', 'keyed 6'], 'three keyed turns to one anonymous one, up to two anonymous slots of eight')
  queue.finished(keyed, 'keyed 6')
  t.same(Array.from({ length: 4 }, () => { const turn = queue.next()!; queue.finished(turn.caller, turn.job); return turn.job }), ['keyed 7', 'keyed 8', 'keyed 9', 'keyed 10'],
    'with two anonymous pages running, keyed callers take the turns that free up')
})

t.test('anonymous callers spend at most a quarter of their slots\' time reading, after a burst of a second; keyed callers are not held back, and the queue wakes once the credit is back', async t => {
  let now = 0
  const queue = new FairQueue<number>({ slots: 1, perCaller: 1_000_000, clock: () => now, wake: () => {} })
  const anonymous = { id: '192.0.2.1', anonymous: true }
  for (let i = 0; i < 1_000_000; i++) queue.push(anonymous, i)
  // Pages of 100 ms one after another whenever one is handed out, for 100 s.
  let busy = 0
  while (now < 100_000) {
    const turn = queue.next()
    if (turn === undefined) {
      now += 10
      continue
    }
    now += 100
    busy += 100
    queue.finished(turn.caller, turn.job)
  }
  t.ok(busy >= 0.25 * 100_000 - 1000 && busy <= 0.25 * 100_000 + anonymousBurstMs + 100, `${busy} ms of 100 s read for anonymous callers (a quarter, and a burst of ${anonymousBurstMs} ms)`)
  t.equal(anonymousDuty, 0.25)
  const keyed = { id: 'key', anonymous: false }
  queue.push(keyed, -1)
  t.same(queue.next(), { caller: keyed, job: -1 }, 'a keyed page is handed out while anonymous callers wait for their credit')
  queue.finished(keyed, -1)
  // Spent: told once the credit is back (a timer of its own, on the real clock, from the debt owed).
  let woken = 0
  let told = (): void => {}
  const wake = new Promise<void>(resolve => { told = resolve })
  const wait = new FairQueue<number>({ slots: 1, perCaller: 10, clock: () => now, wake: () => { woken++; told() } })
  wait.push(anonymous, 1)
  wait.push(anonymous, 2)
  const first = wait.next()!
  now += anonymousBurstMs + 1
  wait.finished(first.caller, first.job)
  t.equal(wait.next(), undefined, 'none while the credit is spent')
  // Its timer keeps no process alive (the jobs' own budgets do): this one does, while the test waits.
  const alive = setTimeout(() => {}, 60_000)
  t.teardown(() => clearTimeout(alive))
  await wake
  clearTimeout(alive)
  t.equal(woken, 1, 'woken once')
  now += 100
  t.same(wait.next(), { caller: anonymous, job: 2 }, 'and handed out once the credit is back')
})

t.test('a job put back after its slot failed comes first, its caller first in turn, whatever the bound; drain() empties the queue', async t => {
  const queue = new FairQueue<string>({ slots: 1, perCaller: 1, wake: () => {} })
  const [a, b] = [{ id: 'a', anonymous: false }, { id: 'b', anonymous: false }]
  queue.push(a, 'a1')
  queue.push(b, 'b1')
  const turn = queue.next()!
  t.same(turn, { caller: a, job: 'a1' })
  queue.push(a, 'a2')
  t.throws(() => queue.push(a, 'a3'), TooManyWaitingError, 'the bound holds for new jobs')
  queue.finished(a, 'a1')
  queue.retry(a, 'a1')
  t.equal(queue.size, 3, 'the job put back waits beyond the bound')
  t.same(queue.next(), { caller: a, job: 'a1' }, 'and comes first, ahead of the caller whose turn it was')
  queue.finished(a, 'a1')
  t.same(queue.next(), { caller: b, job: 'b1' }, 'then the other caller')
  queue.finished(b, 'b1')
  queue.push(b, 'b2')
  t.same(queue.drain().sort(), ['a2', 'b2'])
  t.equal(queue.size, 0)
  t.equal(queue.next(), undefined)
  t.notOk(queue.remove(a, 'a2'), 'a drained job is no longer waiting')
})

t.test('FairGate: reads run at most `slots` at once, in fair turns; a read waiting beyond its budget or beyond its caller\'s bound is refused, a running one never', async t => {
  const gate = new FairGate({ slots: 1, perCaller: 2, budgetMs: 5 })
  const order: string[] = []
  let release!: () => void
  const held = new Promise<void>(resolve => { release = resolve })
  const anonymous = { id: '192.0.2.7', anonymous: true }
  const running = gate.run(anonymous, async () => { order.push('first'); await held; return 'first read' })
  t.equal(gate.free, 0, 'the read took the slot')
  const late = gate.run({ id: 'key', anonymous: false }, async () => 'never read')
  await t.rejects(late, ListTimeoutError, 'a read still waiting when its budget ran out is refused')
  t.equal(gate.waiting, 0, 'and is no longer waiting')
  release()
  t.equal(await running, 'first read', 'the running read outlived the budget and was answered')
  t.equal(gate.free, 1)

  const roomy = new FairGate({ slots: 1, perCaller: 2, budgetMs: 600_000 })
  let open!: () => void
  const blocker = new Promise<void>(resolve => { open = resolve })
  const reads = [roomy.run(anonymous, async () => { await blocker; order.push('anonymous 1') })]
  reads.push(roomy.run(anonymous, async () => { order.push('anonymous 2') }), roomy.run(anonymous, async () => { order.push('anonymous 3') }))
  await t.rejects(roomy.run(anonymous, async () => { order.push('never') }), TooManyWaitingError, 'a third waiting read of one caller is refused at once')
  reads.push(roomy.run({ id: 'key', anonymous: false }, async () => { order.push('keyed') }))
  t.equal(roomy.waiting, 3)
  open()
  await Promise.all(reads)
  t.same(order, ['first', 'anonymous 1', 'keyed', 'anonymous 2', 'anonymous 3'], 'the keyed read went ahead of the anonymous ones that waited before it')
  const failing = roomy.run(anonymous, async () => { throw new Error('statement failed') })
  await t.rejects(failing, /statement failed/, 'a read\'s failure is its caller\'s')
  t.equal(roomy.free, 1, 'and its slot is free again')
})

t.test('FairGate: an anonymous read beyond its callers\' share of the time waits for the credit, then runs; a keyed one does not wait', async t => {
  let now = 0
  const gate = new FairGate({ slots: 1, perCaller: 4, budgetMs: 600_000, clock: () => now })
  const anonymous = { id: '192.0.2.9', anonymous: true }
  // The first read takes a little more than the whole credit of this clock.
  t.equal(await gate.run(anonymous, async () => { now += anonymousBurstMs + 2; return 'long' }), 'long')
  let second = false
  const waiting = gate.run(anonymous, async () => { second = true; return 'second' })
  t.equal(await gate.run({ id: 'key', anonymous: false }, async () => 'keyed'), 'keyed', 'a keyed read goes ahead')
  // Time stands still on this clock: however often the gate is woken, the credit is not back.
  const alive = setTimeout(() => {}, 60_000)
  // Cleared however the test ends: a failure must not keep the file running for a minute.
  t.teardown(() => clearTimeout(alive))
  await new Promise(resolve => setTimeout(resolve, 0))
  t.notOk(second, 'the anonymous read waits')
  now += 100
  t.equal(await waiting, 'second', 'and runs once the credit is back, woken by the gate\'s own timer')
})
