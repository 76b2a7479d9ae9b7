// npm run backup: a consistent copy of the live database while the service serves writes, and a restore from it.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { type Book, post, start, stop } from './process.js'

t.setTimeout(60_000)

const script = new URL('../scripts/backup.mjs', import.meta.url).pathname

async function backup (args: string[], databasePath: string | undefined, cwd?: string): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const { DATABASE_PATH, ...env } = process.env
  const child = spawn(process.execPath, [script, ...args], { cwd, env: { ...env, ...(databasePath && { DATABASE_PATH: databasePath }) } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', chunk => { stdout += chunk })
  child.stderr.on('data', chunk => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}

t.test('npm run backup copies the live database while writes go on; the copy restores', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-backup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const live = join(dir, 'live.sqlite')
  const running = await start({ DATABASE_PATH: live })
  const before: Book[] = []
  for (let i = 0; i < 30; i++) before.push((await post(running.origin, `before ${i}`)).book!)

  const load = { writing: true, statuses: [] as number[] }
  const writes = (async () => {
    for (let i = 0; load.writing; i++) load.statuses.push((await post(running.origin, `during ${i}`)).status)
  })()
  const copy = join(dir, 'copy.sqlite')
  const result = await backup([copy], live)
  load.writing = false
  await writes
  t.ok(load.statuses.length > 0, `${load.statuses.length} writes went on during the backup`)
  t.same(new Set(load.statuses), new Set([201]), 'all of them succeeded')
  t.equal(result.code, 0, result.stderr)
  t.match(result.stdout, /^backup: \d+% \(\d+\/\d+ pages\)$/m, 'progress lines')
  t.match(result.stdout, new RegExp(`^backup: 100% \\((\\d+)/\\1 pages\\), ${live} copied to ${copy}$`, 'm'))
  t.equal(await stop(running, 'SIGTERM'), 0)

  const db = new Database(copy, { readonly: true })
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok')
  db.close()

  // Restore as the README says: the copy becomes the database file of a (stopped, then started) service.
  const restored = await start({ DATABASE_PATH: copy })
  t.teardown(() => stop(restored, 'SIGTERM'))
  for (const book of [before[0]!, before.at(-1)!]) {
    const res = await fetch(`${restored.origin}/books/${book.book_id}`)
    t.same(await res.json(), book, `${book.title} is in the copy`)
  }
})

t.test('npm run backup refuses a missing target argument, an existing target, a missing source and an unwritable target', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-backup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const source = join(dir, 'source.sqlite')
  new Database(source).close()

  const usage = await backup([], source)
  t.equal(usage.code, 2)
  t.match(usage.stderr, /^backup: usage: npm run backup -- <file>/)
  const existing = join(dir, 'existing.sqlite')
  writeFileSync(existing, 'keep me')
  t.match(await backup([existing], source), { code: 1, stderr: /already exists; choose a new file/ })
  t.match(await backup([join(dir, 'out.sqlite')], join(dir, 'absent.sqlite')), { code: 1, stderr: /cannot open .*absent\.sqlite/ })
  t.match(await backup([join(dir, 'no', 'such', 'dir.sqlite')], source), { code: 1, stderr: /^backup: failed: / })
  t.match(await backup(['out.sqlite'], undefined, dir), { code: 1, stderr: /cannot open \.\/data\/books-students\.sqlite/ }, 'the service’s default path')
})
