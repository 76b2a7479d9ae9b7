// The docs harness: runs or checks every code block of a Markdown file as its kind says (issue 27); test/docs-*.test.ts use it.
//
// What the test provides and substitutes (docs-conventions, "Code blocks"):
// - One bash session per Markdown file (set -euo pipefail and allexport, so that a `sh background` block sees the
//   variables of earlier blocks), cwd the repository root, TMPDIR a folder of the test; PORT and OPS_PORT (free
//   ports) and DATABASE_PATH (a temp SQLite file) in its environment; 127.0.0.1:3000 and 127.0.0.1:9464 in blocks and
//   in expected output become the test service's addresses. Always SQLite: TEST_ENGINE does not apply here.
// - Guides in docs/ get the prelude: the built service (dist/server.js) on those ports and that database, and API and
//   API_KEY (an admin key made with the keys CLI) exported, and the book the README's quick start creates (its
//   database as the quick start leaves it, where the guides start). A `sh background` block stops the service started before it
//   (the prelude's or an earlier block's) with SIGTERM, requiring exit 0, and then serves on the same ports and database.
// - PostgreSQL: each database named in a postgres:// URL of a file's sh blocks is replaced, in URLs and in createdb,
//   dropdb, CREATE/DROP DATABASE, by one of the test's own (bsa_test_<pid>_docs<n>: test/postgres.ts drops those of
//   crashed runs), created empty unless the file creates it itself, dropped afterwards. No other database is touched.
//   Redis URLs are left as documented (CI runs Redis on 127.0.0.1:6379); a guide's counters there live a window long.
// - A file with a block of no known kind runs none of its commands (a README still in the making could say npm install).
// - Each sh block has 240 s; a `sh background` block runs as its own process group and must answer /health/live (ops
//   port or API port) within 240 s, and exit 0 on SIGTERM leaving no process of its group behind.
// - ts blocks are compiled (tsc --strict, the client package from client/src), not run: running them would need the
//   client package built and a TypeScript loader per block, seconds each on a loaded CI, for what the sh blocks already
//   check against the service with curl; what drifts in a snippet is its types (operations, fields, options).
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { Test } from 'tap'
import { parseAllDocuments } from 'yaml'
// The paths of the service's modules that this test names, each on one line: they move with src/'s reorganisation.
import { allScopes } from '../src/domain/api-key-types.js'
import { loadConfig } from '../src/config/index.js'
import { spec, validatorAt } from './contract.js'
import { type Block, createsDatabase, missingFromCi, parseDotenv, postgresDatabases, readBlocks, substituteAddresses, substituteDatabases, unmatchedLine } from './docs-rules.js'
import { serverUrl } from './postgres.js'
import { groupAlive } from './process.js'
import { freePort, needService } from './services.js'

const keysEntry = 'dist/cli/keys.js'
export const serverEntry = 'dist/server.js'

export const root = fileURLToPath(new URL('..', import.meta.url))
// A loaded 2-core CI runs three test files beside this one: generous bounds, each tied to an event.
const blockTimeout = 240_000
const stopTimeout = 30_000

/** Markdown files under `dir` (relative to the root), sorted. */
function markdownUnder (dir: string, name = /\.md$/): string[] {
  if (!existsSync(join(root, dir))) return []
  return (readdirSync(join(root, dir), { recursive: true }) as string[])
    .map(path => `${dir}/${path}`)
    .filter(path => name.test(path) && !path.includes('node_modules'))
    .sort()
}

export const runnable = ['README.md', ...markdownUnder('docs')]
export const linked = [...runnable, 'BENCHMARKS.md', 'CHANGELOG.md', ...markdownUnder('src', /(^|\/)README\.md$/)]

/** The text of every file under .ci/, where `sh ci` commands must appear. */
function ciFiles (): string[] {
  return (readdirSync(join(root, '.ci'), { recursive: true }) as string[])
    .map(path => join(root, '.ci', path))
    .filter(path => statSync(path).isFile())
    .map(path => readFileSync(path, 'utf8'))
}

interface Ports { port: number, opsPort: number }

/** The next 'change' of `events`, or `ms` gone: whichever comes first. */
function changeOf (events: EventEmitter, ms: number): Promise<void> {
  return new Promise(resolve => {
    const done = (): void => {
      clearTimeout(timer)
      events.off('change', done)
      resolve()
    }
    const timer = setTimeout(done, Math.max(ms, 0))
    events.on('change', done)
  })
}

/** The one bash session of a file: blocks are sourced into it; it reports on fd 3 ("done L", "started L pid", "stopped L code"). */
class Session {
  readonly child: ChildProcess
  readonly lines: string[] = []
  readonly events = new EventEmitter()
  exitCode: number | null | undefined = undefined
  output = ''

  constructor (env: Record<string, string>) {
    // Its own process group: whatever the blocks leave running goes with it.
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd: root, env, detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] })
    this.child.stdout!.on('data', chunk => { this.output += chunk })
    this.child.stderr!.on('data', chunk => { this.output += chunk })
    createInterface({ input: this.child.stdio[3] as NodeJS.ReadableStream }).on('line', line => {
      this.lines.push(line)
      this.events.emit('change')
    })
    this.child.on('exit', code => {
      this.exitCode = code
      this.events.emit('change')
    })
    // tap hands every child its coverage hooks (NODE_OPTIONS, _TAPJS_…): the commands run as a reader's would, without them.
    this.send('unset NODE_OPTIONS $(compgen -v _TAPJS_); set -euo pipefail -o allexport')
  }

  send (line: string): void {
    if (this.exitCode === undefined) this.child.stdin!.write(line + '\n')
  }

  /** A change, or `ms` gone: whichever comes first. */
  changed (ms: number): Promise<void> {
    return changeOf(this.events, ms)
  }

  /** The first fd-3 report matching `pattern`; 'exited' when the session ended first, 'timeout' after `ms`. */
  async report (pattern: RegExp, ms: number): Promise<RegExpExecArray | 'exited' | 'timeout'> {
    const deadline = Date.now() + ms
    for (;;) {
      for (const line of this.lines) {
        const match = pattern.exec(line)
        if (match !== null) return match
      }
      if (this.exitCode !== undefined) return 'exited'
      if (Date.now() >= deadline) return 'timeout'
      await this.changed(deadline - Date.now())
    }
  }

  kill (): void {
    try { process.kill(-this.child.pid!, 'SIGKILL') } catch {}
  }
}

/** Whether the service answers /health/live on its ops port or its API port (OPS_PORT=public). */
async function answers ({ port, opsPort }: Ports): Promise<boolean> {
  for (const each of [opsPort, port]) {
    try {
      if ((await fetch(`http://127.0.0.1:${each}/health/live`, { signal: AbortSignal.timeout(2000) })).ok) return true
    } catch {}
  }
  return false
}

/** Polls until the service answers: true, or false once `gone()` holds or the deadline passes. */
async function untilAnswers (ports: Ports, gone: () => boolean, wait: (ms: number) => Promise<void>): Promise<boolean> {
  const deadline = Date.now() + blockTimeout
  while (!gone() && Date.now() < deadline) {
    if (await answers(ports)) return true
    await wait(100)
  }
  return false
}

const tail = (text: string): string => text.length > 4000 ? '…' + text.slice(-4000) : text
const readOr = (path: string): string => existsSync(path) ? readFileSync(path, 'utf8') : ''

/** The prelude's service: dist/server.js on the file's ports and database. */
async function startService (t: Test, env: Record<string, string>, ports: Ports): Promise<{ child: ChildProcess, output: () => string }> {
  const child = spawn(process.execPath, [join(root, serverEntry)], { cwd: root, env: { ...env, LOG_LEVEL: 'warn' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { try { process.kill(-child.pid!, 'SIGKILL') } catch {} })
  let output = ''
  child.stdout!.on('data', chunk => { output += chunk })
  child.stderr!.on('data', chunk => { output += chunk })
  const events = new EventEmitter()
  child.on('exit', () => events.emit('change'))
  if (!await untilAnswers(ports, () => child.exitCode !== null || child.signalCode !== null, ms => changeOf(events, ms))) {
    throw new Error(`the prelude's service (node ${serverEntry}) did not answer within ${blockTimeout / 1000} s: ${output}`)
  }
  return { child, output: () => output }
}

/**
 * The book the README's quick start creates, as it writes it: the guides start from the database the
 * quick start leaves, so their printed outputs must hold with it there.
 */
export function quickStartBook (readme = readFileSync(join(root, 'README.md'), 'utf8')): string {
  const body = /curl -s -X POST "\$API\/books" [^\n]*\\\n\s*-d '(\{[^']*\})'/.exec(readme)?.[1]
  if (body === undefined) throw new Error('README.md\'s quick start no longer creates a book as `curl -s -X POST "$API/books" … -d \'{…}\'`: make the prelude of test/docs-harness.ts seed what it leaves')
  return body
}

async function seedQuickStart (api: string, key: string): Promise<void> {
  const res = await fetch(`${api}/books`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: quickStartBook() })
  if (res.status !== 201) throw new Error(`the prelude could not create the quick start's book: ${res.status} ${await res.text()}`)
}

function createKey (env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(root, keysEntry), 'create', '--scopes', allScopes.join(','), '--name', 'docs', '--quiet'], { cwd: root, env, timeout: blockTimeout }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout.trim())
      else reject(new Error(`node ${keysEntry} create failed: ${stderr}`))
    })
  })
}

/** One finding per block: passed (problem undefined), failed, or not run because an earlier block failed. */
export interface Result { line: number, kind: string, problem?: string, skip?: string }

/** Compiles a file's ts blocks at once with tsc --strict; a problem per block that does not compile. */
async function compileTs (blocks: Block[], dir: string): Promise<Map<number, string>> {
  const problems = new Map<number, string>()
  if (blocks.length === 0) return problems
  const ts = join(dir, 'ts')
  mkdirSync(ts)
  symlinkSync(join(root, 'node_modules'), join(ts, 'node_modules'))
  writeFileSync(join(ts, 'package.json'), '{ "type": "module" }\n')
  const files = blocks.map(block => {
    const name = `block-${block.line}.ts`
    // A snippet without import or export is still a module, where top-level await is allowed.
    writeFileSync(join(ts, name), block.code + (/^\s*(import|export)\b/m.test(block.code) ? '\n' : '\nexport {}\n'))
    return name
  })
  writeFileSync(join(ts, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2023',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      paths: { 'books-students-api-client': [join(root, 'client/src/index.ts')] }
    },
    files
  }))
  const output = await new Promise<string>(resolve => {
    execFile(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', ts], { cwd: ts, timeout: 180_000 }, (error, stdout, stderr) => {
      resolve(error === null ? '' : stdout + stderr + (stdout + stderr === '' ? String(error) : ''))
    })
  })
  for (const block of blocks) {
    const errors = output.split('\n').filter(line => line.startsWith(`block-${block.line}.ts(`))
      // The block's code starts on the line after its fence: tsc's line n is the Markdown file's fence + n.
      .map(line => line.replace(/^block-\d+\.ts\((\d+),(\d+)\)/, (_, row: string, column: string) => `line ${block.line + Number(row)}:${column}`))
    if (errors.length > 0) problems.set(block.line, errors.join('\n'))
  }
  if (output !== '' && problems.size === 0) problems.set(blocks[0]!.line, `tsc failed: ${output}`)
  return problems
}

let databases = 0

/**
 * Runs the blocks of one Markdown file (`rel`, for messages) in document order and says how each fared.
 * `guide` gives it the prelude. The caller turns the results into assertions.
 */
export async function runDoc (t: Test, rel: string, markdown: string, guide: boolean): Promise<Result[]> {
  const { blocks, problems } = readBlocks(markdown)
  const results: Result[] = problems.map(p => ({ line: p.line, kind: 'unknown', problem: `${rel}:${p.line}: ${p.message}` }))
  const dir = mkdtempSync(join(tmpdir(), 'bsa-docs-'))
  const shells = blocks.filter(b => b.kind === 'sh' || b.kind === 'sh background')
  const ports = { port: await freePort(), opsPort: await freePort() }
  const env: Record<string, string> = {
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: process.env.HOME ?? dir,
    LANG: 'C.UTF-8',
    TMPDIR: dir,
    PORT: String(ports.port),
    OPS_PORT: String(ports.opsPort),
    DATABASE_PATH: join(dir, 'data.sqlite'),
    // The guides run in the checkout: a developer's own .env there is not theirs.
    ENV_FILE: 'off',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    // A guide's npm install (docs/client.md) takes what npm's cache holds instead of asking the registry
    // about each package again: on a loaded CI those round trips alone outlasted a block's bound.
    npm_config_prefer_offline: 'true'
  }
  let session: Session | undefined
  let service: { child: ChildProcess, output: () => string } | undefined
  // The `sh background` block serving now: its line, the pid of its command, its output files.
  let background: { line: number, pid: number, out: string, err: string } | undefined
  t.teardown(() => {
    session?.kill()
    rmSync(dir, { recursive: true, force: true })
  })

  // PostgreSQL databases of the test's own in place of the documented ones.
  const names = new Map<string, string>()
  const shText = shells.map(b => b.code).join('\n')
  const documentedDatabases = postgresDatabases(shText)
  if (documentedDatabases.length > 0) {
    const { skip } = await needService(t, {
      name: `PostgreSQL at ${serverUrl}`,
      check: () => admin('SELECT 1'),
      howToRun: `start PostgreSQL or set TEST_POSTGRES_URL (${rel} runs on it)`
    })
    if (skip !== undefined) return [...results, { line: shells[0]!.line, kind: 'sh', skip }]
    for (const name of documentedDatabases) {
      const test = `bsa_test_${process.pid}_docs${++databases}`
      names.set(name, test)
      if (!createsDatabase(shText, name)) await admin(`CREATE DATABASE ${test}`)
      t.teardown(() => admin(`DROP DATABASE IF EXISTS ${test} WITH (FORCE)`))
    }
  }
  const substitute = (text: string): string => substituteDatabases(substituteAddresses(text, ports), names)

  /** Stops the service running now (the prelude's or a background block's): SIGTERM, and it must exit 0. */
  async function stopRunning (): Promise<string | undefined> {
    if (service !== undefined) {
      const { child } = service
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const [code] = await exited
      const output = service.output()
      service = undefined
      return code === 0 ? undefined : `the prelude's service exited ${code} on SIGTERM: ${output}`
    }
    if (background !== undefined) {
      const { line, pid, out, err } = background
      background = undefined
      try { process.kill(pid, 'SIGTERM') } catch {}
      const stopped = await session!.report(new RegExp(`^stopped ${line} (\\d+)$`), stopTimeout)
      if (typeof stopped === 'string') return `the sh background block of line ${line} did not stop within ${stopTimeout / 1000} s of SIGTERM`
      if (groupAlive(pid)) {
        try { process.kill(-pid, 'SIGKILL') } catch {}
        return `the sh background block of line ${line} exited on SIGTERM but left processes of its group running`
      }
      if (stopped[1] !== '0') return `the sh background block of line ${line} exited ${stopped[1]} on SIGTERM (0 expected; write it as one command, which bash runs in its place)\n--- its stdout\n${tail(readOr(out))}\n--- its stderr\n${tail(readOr(err))}`
    }
    return undefined
  }

  // A file still in the making (a block of no known kind) runs nothing: its commands may not be meant for a test.
  const runs = shells.length > 0 && problems.length === 0
  if (guide && runs) {
    service = await startService(t, env, ports)
    env.API = `http://127.0.0.1:${ports.port}`
    env.API_KEY = await createKey(env)
    await seedQuickStart(env.API, env.API_KEY)
  }
  if (runs) session = new Session(env)

  const ci = blocks.some(b => b.kind === 'sh ci') ? ciFiles() : []
  const tsProblems = await compileTs(blocks.filter(b => b.kind === 'ts'), dir)
  // What the last run block printed: a `text` block is matched against it.
  let lastStdout: string | undefined
  // Why the sh and text blocks from here on are not run: an earlier block failed, or the file is not all in known kinds.
  let notRun = problems.length === 0 ? undefined : `the file has a block of no known kind at line ${problems[0]!.line}`

  for (const block of blocks) {
    const { kind, line } = block
    const found = (problem?: string): void => { results.push({ line, kind, ...(problem !== undefined && { problem }) }) }
    if ((kind === 'sh' || kind === 'sh background' || kind === 'text') && notRun !== undefined) {
      results.push({ line, kind: `${kind} (not run: ${notRun})` })
      continue
    }
    const file = join(dir, `block-${line}.sh`)
    const out = join(dir, `out-${line}`)
    const err = join(dir, `err-${line}`)
    const quoted = (path: string): string => `'${path}'`
    const code = substitute(block.code)
    const failure = (what: string): string =>
      `${rel}:${line}: the ${kind} block ${what}\n--- the block\n${code}\n--- stdout\n${tail(readOr(out))}\n--- stderr\n${tail(readOr(err))}${session!.output === '' ? '' : `\n--- the session\n${tail(session!.output)}`}`
    switch (kind) {
      case 'sh': {
        writeFileSync(file, code + '\n')
        session!.send(`source ${quoted(file)} </dev/null >${quoted(out)} 2>${quoted(err)} 3>&-; echo "done ${line}" >&3`)
        const done = await session!.report(new RegExp(`^done ${line}$`), blockTimeout)
        if (typeof done === 'string') {
          notRun = `the block of line ${line} failed`
          found(failure(done === 'exited' ? `failed (exit code ${session!.exitCode})` : `did not finish within ${blockTimeout / 1000} s`))
        } else {
          lastStdout = readOr(out)
          found()
        }
        break
      }
      case 'sh background': {
        const stopped = await stopRunning()
        if (stopped !== undefined) {
          notRun = `the block of line ${line} failed`
          found(`${rel}:${line}: before this block, ${stopped}`)
          break
        }
        writeFileSync(file, `set -euo pipefail\n${code}\n`)
        // A subshell reports the command's pid and, when it ends, its exit code; the command leads a process group of
        // its own (setsid execs in place: the subshell's child leads no group), so that what it leaves behind is seen.
        session!.send(`( setsid bash -c "$(< ${quoted(file)})" </dev/null >${quoted(out)} 2>${quoted(err)} 3>&- & echo "started ${line} $!" >&3; wait $! && s=0 || s=$?; echo "stopped ${line} $s" >&3 ) & echo "done ${line}" >&3`)
        const started = await session!.report(new RegExp(`^started ${line} (\\d+)$`), blockTimeout)
        const ended = (): boolean => session!.lines.some(l => l.startsWith(`stopped ${line} `))
        if (typeof started === 'string' || !await untilAnswers(ports, ended, ms => session!.changed(ms))) {
          notRun = `the block of line ${line} failed`
          found(failure(ended() ? 'exited before the service answered on /health/live' : `did not answer on /health/live (port ${ports.port} or ${ports.opsPort}) within ${blockTimeout / 1000} s`))
        } else {
          background = { line, pid: Number(started[1]), out, err }
          const group = background.pid
          t.teardown(() => { try { process.kill(-group, 'SIGKILL') } catch {} })
          lastStdout = readOr(out)
          found()
        }
        break
      }
      case 'text': {
        if (lastStdout === undefined) {
          found(`${rel}:${line}: a text block must follow the sh block whose output it shows`)
        } else {
          const missing = unmatchedLine(code, lastStdout)
          found(missing === undefined ? undefined : `${rel}:${line}: the output of the block before has no line matching ${JSON.stringify(missing)} (in order)\n--- expected\n${code}\n--- its stdout\n${tail(lastStdout)}`)
        }
        lastStdout = undefined
        break
      }
      case 'sh ci': {
        const missing = missingFromCi(block.code, ci)
        found(missing.length === 0 ? undefined : `${rel}:${line}: not in .ci/ (an sh ci command must appear there verbatim): ${missing.join(' | ')}`)
        break
      }
      case 'json': {
        let document: unknown
        try {
          document = JSON.parse(block.code)
        } catch (error) {
          found(`${rel}:${line}: not JSON: ${(error as Error).message}`)
          break
        }
        if (block.schema === undefined) found()
        else if (spec['components']['schemas'][block.schema] === undefined) found(`${rel}:${line}: openapi.yaml has no component schema ${block.schema}`)
        else {
          const validate = validatorAt(`#/components/schemas/${block.schema}`)
          found(validate(document) ? undefined : `${rel}:${line}: not a valid ${block.schema}: ${JSON.stringify(validate.errors)}`)
        }
        break
      }
      case 'yaml': {
        const errors = parseAllDocuments(block.code).flatMap(document => 'errors' in document ? document.errors : [])
        found(errors.length === 0 ? undefined : `${rel}:${line}: not YAML: ${errors.map(e => e.message).join('; ')}`)
        break
      }
      case 'dotenv': {
        const { env: settings, problems } = parseDotenv(block.code)
        if (problems.length > 0) {
          found(`${rel}:${line}: not KEY=value: ${problems.join(' | ')}`)
          break
        }
        try {
          loadConfig(settings)
          found()
        } catch (error) {
          found(`${rel}:${line}: loadConfig refuses it: ${(error as Error).message}`)
        }
        break
      }
      case 'ts': {
        const problem = tsProblems.get(line)
        found(problem === undefined ? undefined : `${rel}:${line}: does not compile (tsc --strict):\n${problem}`)
        break
      }
    }
  }

  // After a failure the session is gone, and the process group goes with the teardown: only a clean run must stop cleanly.
  const last = background?.line ?? 0
  const stopped = await stopRunning()
  if (stopped !== undefined && notRun === undefined) results.push({ line: last, kind: 'stop', problem: `${rel}: at its end, ${stopped}` })
  if (session !== undefined) {
    const exited = once(session.child, 'exit')
    // A session whose block failed may still be inside it (a block that timed out): it ends now, whole.
    if (notRun === undefined) session.child.stdin!.end()
    else session.kill()
    if (session.exitCode === undefined) await exited
  }
  return results
}

async function admin (sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

export function assertResults (t: Test, rel: string, results: Result[]): void {
  for (const { line, kind, problem, skip } of results.sort((a, b) => a.line - b.line)) {
    if (skip !== undefined) t.pass(`${rel}:${line}: skipped: ${skip}`, { skip })
    else if (problem === undefined) t.pass(`${rel}:${line} ${kind}`)
    else {
      // The first line names the place; the block and its output follow as diagnostics, where tap keeps their lines.
      const [head, ...details] = problem.split('\n')
      t.fail(head!, details.length === 0 ? {} : { details: details.join('\n') })
    }
  }
}
