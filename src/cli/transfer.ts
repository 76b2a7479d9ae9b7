// What the import and export CLIs share (npm run import, npm run export): their world, the service they talk to, progress shown, problems in one line.
import { setTimeout as sleep } from 'node:timers/promises'
import { type Io, UsageError } from './args.js'

/** Where progress goes: a line rewritten in place on a terminal, plain lines (at most every few seconds) elsewhere. */
export interface Progress {
  tty: boolean
  write (text: string): void
}

/** What the CLIs need from the world besides their arguments; tests give their own. */
export interface TransferEnvironment {
  io: Io
  progress: Progress
  env: Readonly<Record<string, string | undefined>>
  /** Where an export goes without --output. */
  stdout: NodeJS.WritableStream
  fetch: typeof fetch
  /** Milliseconds to wait before a retry (tests wait less). */
  retryMs: number
  /** How long an import is followed while the service does not answer (a restart): 2 min unless told. */
  followPatienceMs?: number
  /** Aborted on Ctrl-C (SIGINT). */
  interrupted?: AbortSignal
  now?: () => number
}

/** A count as both commands print it: "1,200". */
export const count = (n: number): string => Math.round(n).toLocaleString('en-US')

/** The options both commands take: where the service is, and the key to send. */
export const connection = {
  url: { type: 'string' },
  key: { type: 'string' }
} as const

/** The service's origin and the key to send. */
export function target (values: { url?: string | undefined, key?: string | undefined }, env: TransferEnvironment['env']): { origin: string, headers: Record<string, string> } {
  const origin = (values.url ?? env['BSA_URL'] ?? 'http://127.0.0.1:3000').replace(/\/$/, '')
  if (!URL.canParse(origin)) throw new UsageError(`--url ${origin} is not a URL`)
  const key = values.key ?? env['API_KEY']
  return { origin, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } }
}

/** Shows progress: in place on a terminal, else a line every 5 s (and the last one). */
export function reporter (progress: Progress, now: () => number): { show (text: string): void, done (text: string): void } {
  let shownAt = -Infinity
  return {
    show (text) {
      if (progress.tty) progress.write(`\r\u001b[K${text}`)
      else if (now() - shownAt >= 5000) {
        shownAt = now()
        progress.write(`${text}\n`)
      }
    },
    done (text) {
      progress.write(progress.tty ? `\r\u001b[K${text}\n` : `${text}\n`)
    }
  }
}

/** A problem answer in one line. */
export async function problemLine (res: Response): Promise<string> {
  const text = await res.text()
  try {
    const problem = JSON.parse(text) as { detail?: string, title?: string, errors?: { detail: string, parameter?: string, pointer?: string }[] }
    // Each error as "where: what" ("limit: must be at most 100"), or just what when it names no place.
    const errors = (problem.errors ?? []).map(e => [...[e.parameter, e.pointer].filter(Boolean).map(where => `${where}:`), e.detail].join(' '))
    return `${res.status} ${problem.detail ?? problem.title ?? ''}${errors.length === 0 ? '' : ` (${errors.join('; ')})`}`
  } catch {
    return `${res.status} ${text.slice(0, 200)}`
  }
}

/** Waits `ms`, or until Ctrl-C (the only way sleep rejects). */
export const wait = async (ms: number, signal?: AbortSignal): Promise<void> => sleep(ms, undefined, { signal }).catch(() => {})
