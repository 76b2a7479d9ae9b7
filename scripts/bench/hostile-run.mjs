// The hostile run (`npm run bench -- --hostile`): per engine and attack, a fresh service, GET one book measured alone and then beside the attack; returns its report and section.
import { spawn, spawnSync } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { closeSync, openSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { int } from './format.mjs'
import { attacks, leadSeconds, victimScopes, writerScopes } from './hostile-attacks.mjs'
import { hostileTable } from './hostile-table.mjs'
import { load } from './load.mjs'
import { benchDatabaseUrl, cacheNote, engineNote, engines, opts, sectionSuffix, serviceEnv, settings } from './options.mjs'
import { root } from './paths.mjs'
import { peakRss } from './processes.mjs'
import { progress } from './progress.mjs'
import { report } from './report.mjs'
import { sqlitePath } from './seed.mjs'
import { startService } from './servers.mjs'

const engineNames = { sqlite: 'SQLite', postgres: 'PostgreSQL' }
// A service whose event loop an attack froze cannot answer SIGTERM: it is killed after this.
const stopPatienceMs = 10_000

/** The engine's database as the service and the keys CLI are told it. */
const databaseEnv = (engine, dir) => engine === 'sqlite' ? { DATABASE_PATH: sqlitePath(dir, settings.books) } : { DATABASE_URL: benchDatabaseUrl }

/** A key with `scopes`, stored in the engine's database by the service's own CLI (the service is not running). */
function createKey (engine, dir, scopes) {
  const created = spawnSync(process.execPath, [join(root, 'dist/cli/keys.js'), 'create', '--scopes', scopes, '--name', `bench hostile ${scopes}`, '--quiet'],
    { cwd: root, env: { ...process.env, ...databaseEnv(engine, dir) }, encoding: 'utf8' })
  if (created.status !== 0) throw new Error(`keys create --scopes ${scopes} failed on ${engine}: ${created.stderr}`)
  return created.stdout.trim()
}

/** GET one book of the seeded sample, with the victim's own key (not the admin's): a caller the attacks are not. */
const victim = (sample, key) => ({
  setup: req => ({ ...req, method: 'GET', path: `/books/${sample.books[randomInt(sample.books.length)].book_id}`, body: undefined, headers: { authorization: `Bearer ${key}`, accept: 'application/json' } })
})

/**
 * The attack `id` in a process of its own (it inherits this process's core, 1, away from the service's
 * core 0); stop() ends it and resolves to what it sent and got, and the CPU it used.
 */
function startAttacker (id, port, keys) {
  const child = spawn(process.execPath, [join(root, 'scripts/bench/hostile-attacker.mjs'), JSON.stringify({ attack: id, port, keys })], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', chunk => { out += chunk })
  const exited = new Promise(resolve => child.once('exit', code => resolve(code)))
  return {
    async stop () {
      child.stdin.end()
      const code = await exited
      if (code !== 0) throw new Error(`the attacker ${id} exited with ${code}`)
      return JSON.parse(out)
    }
  }
}

async function stopService (service) {
  const kill = setTimeout(() => {
    try {
      process.kill(service.pid, 'SIGKILL')
    } catch {} // it ended meanwhile
  }, stopPatienceMs)
  try {
    await service.stop()
  } finally {
    clearTimeout(kill)
  }
}

/** One attack on `engine`: a fresh service, warm-up, the victim alone, then beside the attack. */
async function attackRun (engine, dir, attack, keys, target) {
  const log = openSync(opts.log, 'a')
  const service = await startService({
    name: engine,
    engine,
    sqlitePath: sqlitePath(dir, settings.books),
    databaseUrl: benchDatabaseUrl,
    // Stopped after each attack: without the drain a load balancer needs, the next starts sooner.
    env: { SHUTDOWN_DRAIN_MS: '0', ...(opts['cache-size'] !== undefined && { RECORD_CACHE_SIZE: opts['cache-size'] }), ...serviceEnv },
    logTo: log
  })
  closeSync(log)
  // An attack may crash the service: the row says so, and the run goes on with the next.
  let ended = null
  service.exited.then(code => { ended = code })
  try {
    const check = target.setup({})
    const res = await fetch(service.url + check.path, { headers: check.headers })
    if (res.status !== 200) throw new Error(`the victim's GET ${check.path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`)
    const options = { connections: settings.connections }
    await load(service, target, engine, settings.warmup, options)
    const alone = await load(service, target, engine, settings.duration, options)
    progress(`    alone: ${summary(alone)}`)
    const attacker = startAttacker(attack.id, service.port, keys)
    await sleep((attack.leadSeconds ?? leadSeconds) * 1000)
    const beside = await load(service, target, engine, settings.duration, options)
    const got = await attacker.stop()
    if (ended !== null) got.notes.push(`**the service exited** (${ended}) during the attack${crash(service.stderr())}`)
    progress(`    beside: ${summary(beside)}; the attacker sent ${got.sent}, answers ${JSON.stringify(got.answers)}${got.notes.map(note => `; ${note}`).join('')}`)
    // Alone again once the attacker has gone: this machine's rate drifts by half from one window to
    // the next (other work on the host), so beside is compared with the mean of the windows around it.
    const after = ended === null ? await load(service, target, engine, settings.duration, options) : null
    if (after !== null) progress(`    alone after: ${summary(after)}`)
    return { attack, alone, beside, after, attacker: got, peak: ended === null ? peakRss(service.pid) : NaN }
  } finally {
    await stopService(service)
  }
}

/** A crash's message from what the service wrote on stderr: its lines but the stack's frames. */
function crash (stderr) {
  const lines = stderr.split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('at ') && line !== '^')
  return lines.length === 0 ? '' : `: ${lines.slice(0, 4).join(' ').slice(0, 300)}`
}

const summary = s => `${int(s.rps)} req/s, p50 ${s.p50} / p99 ${s.p99} / max ${s.max} ms, ${s.errors} errors, ${s.non2xx} non-2xx`

/** Every chosen attack (--only) on each engine of the run, on the `seeded` databases in `dir`: the report and its section. */
export async function hostileRun (dir, seeded) {
  const only = opts.only?.split(',')
  const chosen = attacks.filter(a => only === undefined || only.includes(a.id))
  if (chosen.length === 0) throw new Error(`--only names no attack (got ${opts.only}; the attacks are ${attacks.map(a => a.id).join(', ')})`)
  const loadBefore = os.loadavg()[0]
  const tables = []
  let peak = 0
  let step = 0
  for (const engine of engines) {
    const keys = { reader: createKey(engine, dir, victimScopes), writer: createKey(engine, dir, writerScopes) }
    const target = victim(seeded.sample, keys.reader)
    const rows = []
    for (const attack of chosen) {
      progress(`[${++step}/${chosen.length * engines.length}] ${engine}: ${attack.name}`)
      const row = await attackRun(engine, dir, attack, keys, target)
      if (Number.isFinite(row.peak)) peak = Math.max(peak, row.peak)
      rows.push(row)
    }
    tables.push([engines.length > 1 ? engineNames[engine] : null, hostileTable(rows, engine)])
  }
  const ownLeads = chosen.filter(a => a.leadSeconds !== undefined).map(a => `${a.id.toUpperCase()}: ${a.leadSeconds} s`)
  const leads = `${leadSeconds} s${ownLeads.length > 0 ? ` (${ownLeads.join(', ')})` : ''}`
  const setup = [
    `Victim: GET /books/{id} of a random book among ${int(seeded.sample.books.length)} spread over the collection, with a ${victimScopes} key of its own (the ` +
      'attacks are anonymous or another key\'s, and every attack comes from 127.0.0.1: an anonymous victim would share the attacker\'s quota), autocannon in the bench ' +
      'process on core 1; p50, p99 and max over the answers received in the window (a request unanswered within 10 s is an error)',
    `Attacker: scripts/bench/hostile-attacker.mjs, a process of its own on core 1 beside the victim's load generator (its CPU is in the table), started ${leads} ` +
      'before the window and stopped at its end; raw sockets, one connection a request; the parameters are in scripts/bench/hostile-attacks.mjs',
    'Service: the settings\' defaults (RATE_LIMIT_ANONYMOUS=120/60 for the attacks), but RATE_LIMIT=999999999/60 for keys (the victim is never refused; the keyed ' +
      'attacker keeps to the default 600/60 itself) and SHUTDOWN_DRAIN_MS=0; killed when an attack left it unable to stop within 10 s',
    `Targets (issue 38): beside each attack, the victim's p99 < 50 ms and ≥ 70 % of its requests/s alone; machine load average (1 min) ${loadBefore.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end`
  ]
  const text = await report(`Hostile input${engineNote}${cacheNote}: ${int(seeded.count)} books`, tables, peak, setup)
  return { text, section: 'hostile' + sectionSuffix }
}
