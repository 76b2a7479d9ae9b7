// Liveness and readiness in the health-check format (draft-inadarei-api-health-check, application/health+json).
import { performance } from 'node:perf_hooks'
import { SchemaVersionError } from '../storage/schema.js'

export type HealthStatus = 'pass' | 'warn' | 'fail'

export interface CheckResult {
  componentType: 'datastore' | 'component' | 'system'
  observedValue?: number | boolean
  observedUnit?: string
  status: HealthStatus
  time: string
  /** Why a check did not pass, in the service's words (never a driver's message). */
  output?: string
}

export interface HealthBody {
  status: HealthStatus
  version: string
  description: string
  checks?: Record<string, CheckResult[]>
}

/** A dependency readiness depends on: it answers a trivial request, or says why not. */
export interface Dependency {
  /** The check's key, "component:measurement". */
  key: string
  componentType: CheckResult['componentType']
  probe: () => Promise<void>
  /** What it means for the node when the dependency fails: `warn` for one the service can do without. */
  whenFailing: HealthStatus
}

export interface Health {
  live (): HealthBody
  ready (): Promise<HealthBody>
  /** From now on the node reports not-ready (on SIGTERM, so that load balancers stop sending). */
  drain (): void
  readonly draining: boolean
}

const worst = (statuses: HealthStatus[]): HealthStatus => statuses.includes('fail') ? 'fail' : statuses.includes('warn') ? 'warn' : 'pass'

class ProbeTimeout extends Error {
  override name = 'ProbeTimeout'
}

/** A probe's answer within `timeout` ms, or a rejection saying it did not come. */
async function within<T> (timeout: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${timeout} ms`)), timeout)
    })])
  } finally {
    clearTimeout(timer)
  }
}

export function health ({ version, dependencies, timeout }: { version: string, dependencies: Dependency[], timeout: number }): Health {
  let draining = false
  // Probes asked for while one is running share it: a flood of probes (or a hung database) never
  // piles up queries or timers.
  let running: Promise<HealthBody> | null = null
  const description = 'books-students-api'

  async function check (dependency: Dependency): Promise<[string, CheckResult[]]> {
    const started = performance.now()
    let result: Pick<CheckResult, 'status' | 'output'>
    try {
      await within(timeout, dependency.probe())
      result = { status: 'pass' }
    } catch (error) {
      result = { status: dependency.whenFailing, output: reason(error) }
    }
    const observedValue = Math.round((performance.now() - started) * 1000) / 1000
    return [dependency.key, [{ componentType: dependency.componentType, observedValue, observedUnit: 'ms', ...result, time: new Date().toISOString() }]]
  }

  async function ready (): Promise<HealthBody> {
    const checks = Object.fromEntries(await Promise.all(dependencies.map(check)))
    checks['shutdown:draining'] = [{ componentType: 'system', observedValue: draining, status: draining ? 'fail' : 'pass', time: new Date().toISOString() }]
    const status = worst(Object.values(checks).map(([result]) => result!.status))
    return { status, version, description, checks }
  }

  return {
    live: () => ({ status: 'pass', version, description }),
    ready: () => (running ??= ready().finally(() => { running = null })),
    drain: () => { draining = true },
    get draining () { return draining }
  }
}

/**
 * A probe's failure in words an operator can act on. The service's own findings (a schema at the
 * wrong version, a timeout) are its own sentences; a driver's error is named by its code only,
 * since its message may carry a host, a user or SQL.
 */
function reason (error: unknown): string {
  if (error instanceof SchemaVersionError || error instanceof ProbeTimeout) return error.message
  const code = (error as { code?: unknown }).code
  return `did not answer${typeof code === 'string' && /^[\w.-]{1,40}$/.test(code) ? ` (${code})` : ''}`
}
