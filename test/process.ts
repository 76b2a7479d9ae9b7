// Runs the service as a real child process, built from the sources as they are, for tests of sockets, signals and files.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { delimiter, dirname } from 'node:path'
import { adminKey } from './helper.js'

let builtOnce = false

/**
 * The path of `entry` (say 'server.js', 'cli/keys.js') in dist/, built first if its sources changed
 * (scripts/build-if-stale.mjs: some 50 ms when fresh, one build at a time however many test files ask).
 * A child on the build starts on a third of the CPU a child on tap's TypeScript loader takes (some
 * 3 s against 8.5 s here), which dozens of starts per CI pass made minutes.
 */
export function built (entry: string): string {
  if (!builtOnce) {
    const build = spawnSync(process.execPath, [new URL('../scripts/build-if-stale.mjs', import.meta.url).pathname], { encoding: 'utf8', env: childEnv({ _TAPJS_PROCESSINFO_COVERAGE_: '0' }) })
    if (build.status !== 0) throw new Error(`building dist/ failed: ${build.stdout}${build.stderr}`)
    builtOnce = true
  }
  return new URL(`../dist/${entry}`, import.meta.url).pathname
}

export interface Running {
  child: ChildProcess
  origin: string
  /** The ops listener's origin (health, readiness, metrics), when it has one. */
  opsOrigin: string | undefined
  output: () => string
}

// What a child needs from this process's environment: the system's (PATH, HOME, TMPDIR, time zone,
// locale), Node's, and tap's loader and coverage. Nothing else: a setting of the service in the
// developer's shell (DATABASE_URL, REDIS_URL, OTEL_…) would point the test's server at their database.
const inherited = /^(PATH|HOME|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z]+|NODE_[A-Z_]+|TAP[A-Z_]*|_TAPJS_[A-Z_]+|TS_NODE_[A-Z_]+)$/

/** The environment for a process of the service a test starts: `settings` and what the process needs to run. */
export function childEnv (settings: Record<string, string> = {}, from: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(from)) if (inherited.test(name) && value !== undefined) env[name] = value
  // A .env in the checkout (a developer's own) is not read by the test's processes.
  return { ...env, ENV_FILE: 'off', ...settings }
}

export const serverEntry = built('server.js')

export function start (env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [serverEntry], {
    // A free ops port, so that processes started side by side do not meet on 9464; no drain period
    // unless a test asks for one, so that a SIGTERM stops the process at once.
    env: childEnv({ PORT: '0', OPS_PORT: '0', SHUTDOWN_DRAIN_MS: '0', LOG_LEVEL: 'warn', ADMIN_API_KEY: adminKey, ...env }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stderr!.on('data', chunk => { output += chunk })
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', chunk => {
      output += chunk
      const origin = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      const opsOrigin = /^Operations .* on (http:\/\/[^\s:]+:\d+)/m.exec(output)?.[1]
      // The operators' endpoints are announced after the API (on the API's port with OPS_PORT=public), unless off.
      if (origin !== undefined && (opsOrigin !== undefined || env.OPS_PORT === 'off')) resolve({ child, origin, opsOrigin, output: () => output })
    })
    child.on('exit', code => reject(new Error(`server exited with ${code}: ${output}`)))
  })
}

export async function stop (running: Running, signal: NodeJS.Signals): Promise<number | null> {
  const exited = once(running.child, 'exit')
  running.child.kill(signal)
  const [code] = await exited
  return code
}

export interface Book { book_id: string, title: string }

export async function post (origin: string, title: string): Promise<{ status: number, book?: Book, etag?: string }> {
  const res = await fetch(`${origin}/books`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
    body: JSON.stringify({ title, author: 'A', isbn: null, published_year: null })
  })
  return { status: res.status, ...(res.status === 201 && { book: await res.json() as Book, etag: res.headers.get('etag')! }) }
}

/** Every book of the list, following next_cursor. */
export async function allBooks (origin: string): Promise<Book[]> {
  const books: Book[] = []
  let url: string | null = '/books?limit=100'
  while (url !== null) {
    const page = await (await fetch(origin + url)).json() as { items: Book[], next_cursor: string | null }
    books.push(...page.items)
    url = page.next_cursor === null ? null : `/books?limit=100&cursor=${page.next_cursor}`
  }
  return books
}

/** Polls `condition` until it holds. */
export async function until (condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 5))
}

/**
 * Runs a third-party tool (a generator, tsc, a linter) as a consumer would: on this Node.js, with only PATH
 * and HOME, outside tap's coverage (it is not our code). Never rejects: the exit code and all it printed.
 */
export function runTool (command: string, args: string[], cwd: string): Promise<{ code: number, output: string }> {
  const env = { PATH: [dirname(process.execPath), process.env.PATH].join(delimiter), HOME: process.env.HOME, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  return new Promise(resolve => {
    execFile(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), output: stdout + stderr })
    })
  })
}

/** Whether any process of the process group `pgid` is still running. */
export function groupAlive (pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}
