// npm run backup: a consistent copy of the live database while the service serves writes, and a restore from it.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { runBackup } from '../src/cli/backup-command.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { type Book, built, childEnv, post, start, stop } from './process.js'

/** runBackup as `npm run backup -- …args` with DATABASE_PATH set to databasePath (or unset). */
async function backup (args: string[], databasePath: string | undefined): Promise<{ code: number, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  const env = databasePath === undefined ? {} : { DATABASE_PATH: databasePath }
  const code = await runBackup(args, env, { out: line => { stdout += line + '\n' }, err: line => { stderr += line + '\n' } })
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

  // Restore as docs/operating.md says: the copy becomes the database file of a (stopped, then started) service.
  const restored = await start({ DATABASE_PATH: copy })
  t.teardown(() => stop(restored, 'SIGTERM'))
  for (const book of [before[0]!, before.at(-1)!]) {
    const res = await fetch(`${restored.origin}/books/${book.book_id}`)
    t.same(await res.json(), book, `${book.title} is in the copy`)
  }
})

t.test('npm run backup refuses a missing or extra argument, an existing target, a missing source and an unwritable target', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-backup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const source = join(dir, 'source.sqlite')
  await openSqliteRepositories(source).close()

  for (const [args, message] of [
    [[], 'the <file> to write the copy to is needed'],
    [['a.sqlite', 'b.sqlite'], 'one <file> only, not also "b.sqlite"'],
    [['--to', 'a.sqlite'], 'unknown option --to']
  ] as const) {
    const usage = await backup([...args], source)
    t.equal(usage.code, 2, args.join(' '))
    t.equal(usage.stderr.split('\n')[0], `backup: ${message}`)
    t.equal(usage.stderr.split('\n').slice(1).join('\n'), 'For the usage: npm run backup -- --help\n', 'then where the usage is')
  }
  const existing = join(dir, 'existing.sqlite')
  writeFileSync(existing, 'keep me')
  t.match(await backup([existing], source), { code: 1, stderr: /already exists; choose a new file/ })
  const absent = join(dir, 'absent', 'typo.sqlite')
  t.same(await backup([join(dir, 'out.sqlite')], absent), {
    code: 1,
    stdout: '',
    stderr: `backup: no database at ${absent} (DATABASE_PATH): start the service once to create it, or correct the path\n`
  })
  t.notOk(existsSync(join(dir, 'absent')), 'nothing is created at the mistyped path')
  t.notOk(existsSync(join(dir, 'out.sqlite')), 'nor a target')
  t.match(await backup([join(dir, 'no', 'such', 'dir.sqlite')], source), { code: 1, stderr: /^backup: failed: / })
  t.match(await backup([join(dir, 'out.sqlite')], ' spaced'), { code: 1, stderr: /^backup: DATABASE_PATH must not start or end with spaces/ }, 'the service’s own config checks')
})

t.test('npm run backup -- --help prints the usage and copies nothing', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'bsa-backup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const args of [['--help'], ['-h'], [join(dir, 'copy.sqlite'), '--help']]) {
    const result = await backup(args, join(dir, 'absent.sqlite'))
    t.match(result, { code: 0, stderr: '' }, args.join(' '))
    t.match(result.stdout, /^Usage: npm run backup -- <file>\n[^]*never overwrites[^]*Exit status: 0 copied, 1 failed, 2 bad usage\.\n$/)
  }
  t.notOk(existsSync(join(dir, '--help')), 'no file named --help')
  t.notOk(existsSync(join(dir, 'copy.sqlite')))
})

t.test('the backup entry point runs as a process and sets the exit code', async t => {
  const entry = built('cli/backup.js')
  // In a folder of its own: the repository's ./data may hold the database of the developer's `npm start`.
  const cwd = mkdtempSync(join(tmpdir(), 'bsa-backup-'))
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }))
  const run = async (...args: string[]) => {
    const child = spawn(process.execPath, [entry, ...args], { cwd, env: childEnv({ ENV_FILE: '' }), stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', chunk => { out += chunk })
    child.stderr.on('data', chunk => { out += chunk })
    const [code] = await once(child, 'exit')
    return { code, out }
  }
  t.match(await run('--help'), { code: 0, out: /^Usage: npm run backup/ })
  t.match(await run(), { code: 2, out: /^backup: the <file> to write the copy to is needed/ })
  t.match(await run('out.sqlite'), { code: 1, out: /^backup: no database at \.\/data\/books-students\.sqlite / }, 'the service’s default path')
  t.notOk(existsSync(join(cwd, 'out.sqlite')), 'and no copy')
  // The service's .env applies to the command too: the database it names is the one copied from.
  writeFileSync(join(cwd, '.env'), 'DATABASE_PATH=./named-in-env-file.sqlite\n')
  t.match(await run('out.sqlite'), { code: 1, out: /^backup: no database at \.\/named-in-env-file\.sqlite / }, 'the path .env names')
  rmSync(join(cwd, '.env'))
  mkdirSync(join(cwd, '.env'))
  t.match(await run('out.sqlite'), { code: 1, out: /^npm run backup: ENV_FILE: cannot read .*\.env \(EISDIR\)\n$/ }, 'a .env that cannot be read: one line')
})
