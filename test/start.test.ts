// The commands docs/operating.md tells a supervisor to run stop on SIGTERM, leaving no process behind and the port closed.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { groupAlive } from './process.js'

// `npm start` builds first (prestart): two tsc runs on a busy machine.
t.setTimeout(300_000)

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * A checkout without dist/ or data/, as after a fresh clone and `npm install`: npm start's build
 * writes there, not into the dist/ other tests load, and the database is the default one.
 */
function checkout (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-start-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'openapi.yaml', 'src', 'generated', 'scripts/build-if-stale.mjs']) {
    cpSync(join(root, entry), join(dir, entry), { recursive: true })
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

interface Started { child: ChildProcess, port: number, output: () => string }

/** Runs argv as a supervisor would: its own process group, a plain environment (no tap coverage hooks). */
async function run (t: Test, cwd: string, argv: string[]): Promise<Started> {
  const { PATH, HOME } = process.env
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd,
    detached: true,
    env: { PATH, HOME, PORT: '0', OPS_PORT: '0', SHUTDOWN_DRAIN_MS: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  // Whatever happens to the test, nothing it started outlives it.
  t.teardown(() => { try { process.kill(-child.pid!, 'SIGKILL') } catch {} })
  let output = ''
  child.stderr!.on('data', chunk => { output += chunk })
  child.stdout!.on('data', chunk => { output += chunk })
  while (!/listening on http:\/\/\S+:\d+/.test(output)) {
    const [event] = await Promise.race([once(child.stdout!, 'data').then(() => ['data']), once(child, 'exit').then(() => ['exit'])])
    if (event === 'exit') throw new Error(`${argv.join(' ')} exited: ${output}`)
  }
  const port = Number(/listening on http:\/\/\S+:(\d+)/.exec(output)![1])
  return { child, port, output: () => output }
}

async function refused (port: number): Promise<boolean> {
  const socket = connect(port, '127.0.0.1')
  const [event] = await Promise.race([once(socket, 'error').then(() => ['error']), once(socket, 'connect').then(() => ['connect'])])
  socket.destroy()
  return event === 'error'
}

async function terminate (t: Test, { child, port }: Started, name: string): Promise<void> {
  t.notOk(await refused(port), `${name} serves on port ${port}`)
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  t.same(await exited, [0, null], `${name} exits 0 on SIGTERM`)
  t.notOk(groupAlive(child.pid!), 'and no process of it is left (no orphaned node still serving)')
  t.ok(await refused(port), 'the port is closed')
}

t.test('npm start on a fresh checkout builds, creates the database, serves, and stops whole on SIGTERM', async t => {
  const dir = checkout(t)
  const started = await run(t, dir, ['npm', 'start'])
  // Printed right after the listening lines, maybe in a later chunk.
  while (!started.output().includes('Manage keys with')) await once(started.child.stdout!, 'data')
  t.match(started.output(), /First start: created an admin API key/)
  t.match(started.output(), `Database: SQLite ${join(dir, 'data', 'books-students.sqlite')}\n`, 'the banner names the database')
  t.notMatch(started.output(), /Settings from/, 'no .env, none said')
  t.ok(existsSync(join(dir, 'data', 'books-students.sqlite')), 'the first start created ./data/books-students.sqlite')
  await terminate(t, started, 'npm start')

  t.test('a .env file in the working directory applies beneath the environment, and the banner says what it set', async t => {
    // PORT is set by the supervisor's environment (0), which wins over the file's.
    writeFileSync(join(dir, '.env'), '# as docs/postgresql.md shows settings\nDATABASE_PATH=./data/from-env-file.sqlite\nPORT=1\nRATE_LIMIT_ANONYMOUS="50/60"\n')
    t.teardown(() => rmSync(join(dir, '.env')))
    const fromFile = await run(t, dir, ['node', 'dist/server.js'])
    // Printed right after the listening lines, maybe in a later chunk.
    while (!/Settings from .*\n/.test(fromFile.output())) await once(fromFile.child.stdout!, 'data')
    t.match(fromFile.output(), `Database: SQLite ${join(dir, 'data', 'from-env-file.sqlite')}\n`)
    t.match(fromFile.output(), `Settings from ${join(dir, '.env')}: DATABASE_PATH, RATE_LIMIT_ANONYMOUS (variables set in the environment win over the file)\n`)
    const limited = await fetch(`http://127.0.0.1:${fromFile.port}/books`)
    t.match(limited.headers.get('ratelimit-policy'), /;q=50;w=60$/, 'the file\'s RATE_LIMIT_ANONYMOUS applies')
    await terminate(t, fromFile, 'node dist/server.js with a .env')
  })

  t.test('node dist/server.js, the command for a supervisor, stops whole on SIGTERM too', async t => {
    const direct = await run(t, dir, ['node', 'dist/server.js'])
    t.notMatch(direct.output(), /First start/, 'the same database, its key already made')
    await terminate(t, direct, 'node dist/server.js')
  })
})
