// The benchmark scripts' processes: a server started on core 0 and waited for, and its CPU time and memory from /proc.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { root } from './paths.mjs'

export const cores = os.availableParallelism()
/** Whether the server can be pinned to core 0 and the load generator to core 1. */
export const hasTaskset = process.platform === 'linux' && cores >= 2 &&
  spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0
const clockTicks = process.platform === 'linux' ? Number(execFileSync('getconf', ['CLK_TCK']).toString()) : NaN

async function freePort () {
  const server = createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise(resolve => server.close(resolve))
  return port
}

/**
 * Starts `script` on core 0 and waits until `check` (a path, asked with `apiKey`) answers 2xx, for
 * `patience` ms at most; `name` names it in errors. Resolves to its port, url, pid, exited, stderr() and stop().
 */
export async function startServer ({ name, script, env, check, apiKey, logTo = 'ignore', nodeOptions = [], patience = 15_000 }) {
  const port = await freePort()
  const node = [process.execPath, ...nodeOptions, script]
  const [file, ...args] = hasTaskset ? ['taskset', '-c', '0', ...node] : node
  // taskset execs node, so the pid is the server's own and /proc/<pid>/stat is its CPU time.
  const child = spawn(file, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', logTo, 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const exited = new Promise(resolve => child.once('exit', (code, signal) => resolve(code ?? signal)))
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  for (;;) {
    const code = await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 100))])
    if (code !== undefined) throw new Error(`${name} exited with ${code} before answering:\n${stderr}`)
    try {
      const res = await fetch(url + check, { headers: { authorization: `Bearer ${apiKey}` } })
      if (res.ok) break
      throw new Error(`${name} answered ${res.status} to GET ${check}`)
    } catch (error) {
      if (performance.now() - started > patience) {
        child.kill('SIGTERM')
        throw error
      }
    }
  }
  return {
    name,
    port,
    url,
    pid: child.pid,
    /** Resolves to the exit code (or the signal) once the server has ended, whoever ended it. */
    exited,
    /** What the server wrote on stderr so far (a crash's stack). */
    stderr: () => stderr,
    async stop () {
      child.kill('SIGTERM')
      await exited
    }
  }
}

/** CPU seconds (user + system) the process has used so far, or NaN where /proc is missing. */
export function cpuSeconds (pid) {
  if (!Number.isFinite(clockTicks)) return NaN
  // The command name (field 2) may hold spaces, so fields are counted after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / clockTicks
}

/** The process's resident memory now, in MB (NaN off Linux). */
export function rssMegabytes (pid) {
  if (process.platform !== 'linux') return NaN
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

/** The process's highest resident memory so far, in MB (Linux only). */
export const peakRss = pid => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

/** Pins this process (the load generator) to core 1, away from the server on core 0, where it can. */
export function pinLoadGenerator () {
  if (hasTaskset) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
}
