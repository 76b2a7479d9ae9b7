// The key CLI and the first-start admin key, as an operator uses them.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t, { type Test } from 'tap'
import { parseKey } from '../src/access/api-keys.js'
import { runKeys } from '../src/cli/key-commands.js'
import { openSqliteRepositories } from '../src/storage/sqlite/index.js'
import { build, tempDatabase } from './helper.js'
import { built, childEnv, serverEntry } from './process.js'

/** A database as the service's first start leaves it, which the CLI may open. */
function serviceDatabase (t: Test): string {
  const databasePath = tempDatabase(t)
  // SQLite closes synchronously: the file is whole once close() returns.
  openSqliteRepositories(databasePath).close().catch(() => {})
  return databasePath
}

async function keys (databasePath: string, ...args: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await runKeys(args, { DATABASE_PATH: databasePath }, { out: line => { out += line + '\n' }, err: line => { err += line + '\n' } })
  return { code, out, err }
}

t.test('create --quiet prints the key alone; the key works against the service with its scopes only', async t => {
  const databasePath = serviceDatabase(t)
  const created = await keys(databasePath, 'create', '--scopes', 'books:read,students:read', '--name', 'reporting', '--quiet')
  t.equal(created.code, 0)
  t.match(created.out, /^bsk_[0-9a-f]{16}_[\w-]{43}\n$/)
  const key = created.out.trim()

  const { app, request } = await build(t, { databasePath })
  t.equal((await request({ method: 'GET', url: '/api/students', key })).statusCode, 200)
  t.equal((await request({ method: 'POST', url: '/api/students', key, payload: { name: 'A', email: 'a@example.org' } })).statusCode, 403)

  const listed = await keys(databasePath, 'list')
  t.equal(listed.code, 0)
  t.match(listed.out, /^key_id\tstatus\tscopes\tcreated_at\tname\n[0-9a-f]{16}\tactive\tbooks:read,students:read\t\S+\treporting\n$/, 'a header row, then one key a line')
  const { keyId, secret } = parseKey(key)!
  t.notOk(listed.out.includes(secret), 'list never shows a secret')

  const revoked = await keys(databasePath, 'revoke', keyId)
  t.equal(revoked.code, 0)
  t.match(revoked.out, `Revoked key ${keyId}`)
  // Over a real socket, as the next client after an operator's revocation arrives.
  const served = await app.listen({ port: 0, host: '127.0.0.1' })
  const next = await fetch(`${served}/api/students`, { headers: { authorization: `Bearer ${key}` } })
  t.equal(next.status, 401, 'the running service refuses it at once')
  t.match((await keys(databasePath, 'list')).out, /\trevoked \S+\t/)
  t.match(await keys(databasePath, 'revoke', keyId), { code: 1, err: `keys: no active key has the id ${keyId}\n` })
})

t.test('create without --quiet explains, and duplicates in --scopes collapse', async t => {
  const databasePath = serviceDatabase(t)
  t.equal((await keys(databasePath, 'list')).out, 'No keys stored.\n')
  const created = await keys(databasePath, 'create', '--scopes', 'books:write, books:write', '--name', 'importer')
  t.equal(created.code, 0)
  t.match(created.out, /^Created key [0-9a-f]{16} "importer" with scopes books:write\.\nThe key is shown this once.*\nbsk_\S+\n$/)
})

t.test('--help, -h and help print the usage on stdout and exit 0, whatever else is given', async t => {
  for (const args of [['--help'], ['-h'], ['revoke', '--help'], ['create', '--colour', '-h'], ['list', '--name', 'x', '--help']]) {
    const result = await keys('/nonexistent/never-opened.sqlite', ...args)
    t.match(result, { code: 0, err: '' }, args.join(' '))
    t.match(result.out, /^Usage: npm run keys -- <command> \[options\]\n[^]*revoke <key_id>[^]*Exit status: 0 done, 1 failed, 2 bad usage\.\n$/)
  }
})

t.test('bad usage exits 2 with one line naming the argument or option at fault, then the usage', async t => {
  const databasePath = serviceDatabase(t)
  for (const [args, message] of [
    [[], 'a command is needed: create, list or revoke'],
    [['rotate'], 'unknown command "rotate" (the commands are create, list and revoke)'],
    [['revoke'], 'revoke needs the <key_id> of the key (npm run keys -- list shows them)'],
    [['revoke', 'a', 'b'], 'revoke takes one <key_id>, not "a" "b"'],
    [['list', 'extra'], 'list takes no arguments, not "extra"'],
    [['list', '--colour'], 'unknown option --colour'],
    [['list', '-x'], 'unknown option -x'],
    [['list', '--name', 'x'], 'list takes no option --name'],
    [['create', 'x', '--name', 'x', '--scopes', 'books:read'], 'create takes only options, not "x"'],
    [['create', '--name', 'x'], 'create needs --scopes, one or more of books:read, books:write, students:read, students:write, webhooks:manage'],
    [['create', '--name', 'x', '--scopes', 'books:read,admin'], 'unknown scope admin in --scopes (the scopes are books:read, books:write, students:read, students:write, webhooks:manage)'],
    [['create', '--scopes', 'books:read'], 'create needs --name <name>, what the key is for (1 to 100 characters)'],
    [['create', '--scopes', 'books:read', '--name'], 'option --name needs a value'],
    [['create', '--scopes', 'books:read', '--name', '--quiet'], 'option --name needs a value'],
    [['create', '--scopes', 'books:read', '--name', 'x', '--quiet=yes'], 'option --quiet takes no value'],
    [['create', '--scopes', 'books:read', '--name', 'x'.repeat(101)], '--name must be 1 to 100 characters'],
    [['create', '--scopes', 'books:read', '--name', ' '], '--name must be 1 to 100 characters']
  ] as const) {
    const result = await keys(databasePath, ...args)
    t.equal(result.code, 2, args.join(' '))
    t.equal(result.err.split('\n')[0], `keys: ${message}`)
    t.equal(result.err.split('\n').slice(1).join('\n'), 'For the usage: npm run keys -- --help\n', 'then where the usage is')
    t.equal(result.out, '')
  }
  t.equal((await keys(databasePath, 'list')).out, 'No keys stored.\n', 'nothing was written')
  t.match(await runKeys(['list'], { LOG_LEVEL: 'loud' }, { out: () => {}, err: line => t.match(line, /^keys: LOG_LEVEL must be/) }), 1)
})

t.test('the CLI never creates a database: a mistyped DATABASE_PATH is one line naming it, exit 1', async t => {
  const dir = dirname(tempDatabase(t))
  const typo = join(dir, 'nope', 'typo.sqlite')
  t.same(await keys(typo, 'create', '--scopes', 'books:read', '--name', 'x'), {
    code: 1,
    out: '',
    err: `keys: no database at ${typo} (DATABASE_PATH): start the service once to create it, or correct the path\n`
  })
  t.notOk(existsSync(dirname(typo)), 'neither the file nor its folder was made')
  t.match(await keys(':memory:', 'list'), { code: 1, err: /^keys: no database at :memory: / })

  const empty = join(dir, 'empty.sqlite')
  writeFileSync(empty, '')
  t.same(await keys(empty, 'list'), {
    code: 1,
    out: '',
    err: `keys: ${empty} is not a database of this service (DATABASE_PATH): start the service once to create it, or correct the path\n`
  })
  t.equal(readFileSync(empty, 'utf8'), '', 'another file is left as it was, not migrated')
  const text = join(dir, 'notes.txt')
  writeFileSync(text, 'not sqlite at all, but long enough for SQLite to read a header and refuse it: '.repeat(4))
  t.same(await keys(text, 'list'), { code: 1, out: '', err: `keys: cannot open ${text}: file is not a database\n` })
})

t.test('the server prints the first admin key once, and npm run keys manages the same database', async t => {
  const databasePath = tempDatabase(t)
  const run = async (env: Record<string, string>): Promise<string> => {
    const child = spawn(process.execPath, [serverEntry], {
      env: childEnv({ PORT: '0', OPS_PORT: '0', SHUTDOWN_DRAIN_MS: '0', LOG_LEVEL: 'warn', DATABASE_PATH: databasePath, ...env }),
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let out = ''
    child.stdout.on('data', chunk => { out += chunk })
    while (!out.includes('Swagger UI')) await once(child.stdout, 'data')
    // Anything printed after the listening lines arrives before the streams close.
    child.kill('SIGTERM')
    await once(child, 'close')
    return out
  }
  const first = await run({})
  const key = /^(bsk_\S+)$/m.exec(first)?.[1]
  t.ok(key, 'the first start printed a key')
  t.match(first, /Copy it now, it is not shown again/)
  const second = await run({})
  t.notMatch(second, /bsk_/, 'the second start prints none')

  const listed = await keys(databasePath, 'list')
  t.match(listed.out, /\tactive\tbooks:read,books:write,students:read,students:write,webhooks:manage\t\S+\tfirst admin key\n/)
})

t.test('the keys entry point runs as a process and sets the exit code', async t => {
  const databasePath = serviceDatabase(t)
  const child = spawn(process.execPath, [built('cli/keys.js'), 'create', '--scopes', 'books:read', '--name', 'cli', '--quiet'], {
    env: childEnv({ DATABASE_PATH: databasePath }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.on('data', chunk => { out += chunk })
  child.stderr.on('data', chunk => { err += chunk })
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
  t.match(out, /^bsk_\S+\n$/)
  const bad = spawn(process.execPath, [built('cli/keys.js'), 'nope'], {
    env: childEnv({ DATABASE_PATH: databasePath }),
    stdio: ['ignore', 'ignore', 'pipe']
  })
  bad.stderr.on('data', chunk => { err += chunk })
  t.equal((await once(bad, 'exit'))[0], 2)
  t.match(err, /^keys: unknown command "nope"/)
  const noEnvFile = spawn(process.execPath, [built('cli/keys.js'), 'list'], { env: childEnv({ ENV_FILE: 'missing.env' }), stdio: ['ignore', 'ignore', 'pipe'] })
  let said = ''
  noEnvFile.stderr.on('data', chunk => { said += chunk })
  t.equal((await once(noEnvFile, 'exit'))[0], 1)
  t.match(said, /^npm run keys: ENV_FILE: cannot read .*missing\.env \(ENOENT\)\n$/, 'a named file that is not there: one line')
})
