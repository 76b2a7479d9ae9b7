// The client package as a user gets it: packed from client/, installed in a new project outside the repository
// with the commands of docs/client.md, its snippet compiled by that project's tsc and run against the service.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { adminKey } from './helper.js'
import { needNpmRegistry } from './services.js'

// npm install may have to download TypeScript and @types/node from the registry: minutes on a slow link.
t.setTimeout(600_000)

const root = fileURLToPath(new URL('..', import.meta.url))
const guide = readFileSync(join(root, 'docs/client.md'), 'utf8')
const section = guide.slice(guide.indexOf('\n## Set up a project\n'))
const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? ''

// A user's shell. tap gives its child processes NODE_OPTIONS (its loader) and variables of its own, and
// `npm test` puts the repository's node_modules/.bin on PATH; `env -i` starts every command without
// them, with PATH minus any node_modules folder. HOME keeps npm's cache and settings; proxy and
// registry settings pass through so the registry stays reachable.
const env: Record<string, string> = {
  PATH: (process.env.PATH ?? '').split(':').filter(dir => !dir.includes('node_modules')).join(':')
}
for (const name of ['HOME', 'npm_config_registry', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']) {
  const value = process.env[name]
  if (value !== undefined) env[name] = value
}

interface Run { code: number, stdout: string, output: string }
function sh (cwd: string, command: string, extra: Record<string, string> = {}): Promise<Run> {
  const vars = Object.entries({ ...env, ...extra }).map(([name, value]) => `${name}=${value}`)
  return new Promise(resolve => {
    execFile('env', ['-i', ...vars, 'sh', '-c', command], { cwd, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, output: stdout + stderr })
    })
  })
}

/** The JSON document that ends a command's stdout, after any lines that lifecycle scripts printed. */
function lastJson (stdout: string, opening: '[' | '{'): unknown {
  return JSON.parse(stdout.slice(stdout.search(new RegExp(`^\\${opening}`, 'm'))))
}

const quiet = '--no-audit --no-fund --prefer-offline'
const version = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8')).version
// The package is not on the registry yet: the guide and the package's README lead with the tarball
// `npm pack ./client` makes (the guide in a temporary folder of its own, the package's README in /tmp).
const tarballName = `books-students-api-client-${version}.tgz`
const tarball = `/tmp/${tarballName}`
const guideInstall = `npm install "$dir/${tarballName}"`
// The guide's setup, in its order; the tarball is taken from where this test packed it.
const setup = [
  'npm init -y',
  'npm pkg set type=module',
  guideInstall,
  'npm install --save-dev typescript @types/node',
  'npx tsc --init --types node --lib esnext'
]
/** The first shell block of a section: what a reader runs first. */
const firstShell = (text: string): string => /```sh\n([\s\S]*?)```/.exec(text)?.[1] ?? ''

t.test('the packed client installs, compiles and runs in a new project, as docs/client.md says', await needNpmRegistry(t, env), async t => {
  t.match(snippet, "from 'books-students-api-client'", 'the guide shows a snippet that imports the package')
  const clientReadme = readFileSync(join(root, 'client/README.md'), 'utf8')
  t.ok(clientReadme.includes(snippet), "the package's own README shows the same one")
  for (const command of setup) t.ok(firstShell(section).includes(command), `the guide's first commands say: ${command}`)
  t.match(firstShell(section), /^dir=\$\(mktemp -d\)\nnpm pack \.\/client --pack-destination "\$dir" /, 'the guide starts with packing the client')
  t.match(firstShell(clientReadme), /^npm pack \.\/client --pack-destination \/tmp /, 'client/README.md starts with packing the client')
  t.match(firstShell(clientReadme), `npm install ${tarball}`, 'client/README.md installs the tarball of this version')
  for (const [file, text] of [['docs/client.md', section], ['client/README.md', clientReadme]] as const) {
    t.notMatch(firstShell(text), 'npm install books-students-api-client', `${file} does not start with the registry, where it is not yet`)
  }

  const work = realpathSync(mkdtempSync(join(tmpdir(), 'bsa-client-')))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  t.ok(relative(root, work).startsWith('..'), 'the project is outside the repository')

  // The guide's `npm pack ./client`: the package's prepack builds client/dist with the repository's TypeScript.
  const packed = await sh(root, `npm pack ./client --json --pack-destination '${work}'`)
  t.equal(packed.code, 0, 'npm pack', { output: packed.output })
  const [info] = lastJson(packed.stdout, '[') as Array<{ filename: string, files: Array<{ path: string }> }>
  t.same(info!.files.map(f => f.path).sort(), ['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/openapi.d.ts', 'package.json'])
  t.equal(info!.filename, tarballName, 'npm pack makes the file the guide and the README install')

  const project = join(work, 'books-app')
  t.equal((await sh(work, 'mkdir books-app')).code, 0)
  for (const command of setup) {
    const run = command === guideInstall
      ? `npm install ${quiet} '${join(work, info!.filename)}'`
      : command.startsWith('npm install') ? `${command} ${quiet}` : command
    const result = await sh(project, run)
    t.equal(result.code, 0, run, { output: result.output })
  }

  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'))
  t.same(Object.keys(manifest.dependencies), ['books-students-api-client'])
  const config = await sh(project, 'npx tsc --showConfig')
  t.match((lastJson(config.stdout, '{') as { compilerOptions: object }).compilerOptions, { strict: true, exactOptionalPropertyTypes: true },
    'tsc --init writes a strict config with exactOptionalPropertyTypes')
  const server = await sh(project, "node --input-type=module -e \"await import('fastify')\"")
  t.not(server.code, 0, 'the server (Fastify, better-sqlite3) is not installed and nothing of the repository resolves')
  t.match(server.output, 'ERR_MODULE_NOT_FOUND')

  writeFileSync(join(project, 'index.ts'), snippet)
  const compiled = await sh(project, 'npx tsc')
  t.equal(compiled.code, 0, "the guide's index.ts compiles", { output: compiled.output })

  // The same program with a misspelt required field of the body must not compile.
  t.ok(snippet.includes("author: 'Frank Herbert'"))
  writeFileSync(join(project, 'misspelt.ts'), snippet.replace("author: 'Frank Herbert'", "autor: 'Frank Herbert'"))
  const misspelt = await sh(project, 'npx tsc')
  t.not(misspelt.code, 0, 'a misspelt field is a compile error')
  t.match(misspelt.output, /misspelt\.ts\(\d+,\d+\): error TS\d+: [^\n]*'autor'/, 'tsc names the misspelt field')
  t.notMatch(misspelt.output, 'index.ts(', 'and only in the misspelt file')
  unlinkSync(join(project, 'misspelt.ts'))

  const app = await buildApp(loadConfig({}, { databasePath: ':memory:', logLevel: 'silent', adminApiKey: adminKey }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const ran = await sh(project, `"${process.execPath}" index.js`, { API: origin, API_KEY: adminKey })
  t.equal(ran.code, 0, 'node index.js', { output: ran.output })
  const [, bookId] = /^created ([0-9a-f-]{36})$/m.exec(ran.stdout) ?? []
  t.ok(bookId, 'it created a book', { output: ran.output })
  t.match(ran.stdout, /^read Dune by Frank Herbert$/m, 'read it back')
  t.match(ran.stdout, /^listed Dune$/m, 'and found it in the list')
  const stored = await app.inject({ url: `/books/${bookId}` })
  t.match(stored.json(), { book_id: bookId, title: 'Dune', author: 'Frank Herbert' }, 'the service stored what the client sent')
})

t.test('the package depends on openapi-fetch alone, in the range the repository builds it with', async t => {
  const client = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8'))
  const server = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const range = server.dependencies?.['openapi-fetch'] ?? server.devDependencies?.['openapi-fetch']
  t.same(client.dependencies, { 'openapi-fetch': range })
  t.equal(server.exports?.['./client'], undefined, 'the server package no longer exports a client')
})
