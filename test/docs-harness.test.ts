// The docs harness itself (test/docs-harness.ts): its rules, and that it fails what it must, on synthetic Markdown.
import t from 'tap'
import { quickStartBook, type Result, runDoc, serverEntry } from './docs-harness.js'
import { anchorsOf, createsDatabase, linkProblems, missingFromCi, parseDotenv, postgresDatabases, readBlocks, substituteAddresses, substituteDatabases, unmatchedLine } from './docs-rules.js'

// Services and bash sessions one after the other: more than tap's default for a file on a loaded CI.
t.setTimeout(600_000)

t.test('the rules of the harness (synthetic Markdown)', async t => {
  t.same(readBlocks('```\nbare\n```\n\n    indented\n\n- item\n\n  ```sh   ci\n  npm ci\n  ```\n').problems.map(p => p.line), [1, 5], 'a bare fence and an indented block have no kind')
  t.same(readBlocks('- item\n\n  ```sh   ci\n  npm ci\n  ```\n').blocks, [{ kind: 'sh ci', line: 3, code: 'npm ci' }], 'a block inside a list is found, its info string read by words')
  t.same(readBlocks('```json Book Author\n{}\n```\n').problems.length, 1, 'json takes one schema name at most')

  t.equal(unmatchedLine('a\n\nc …', 'a\nb\nc d  '), undefined, 'lines match in order, … as a wildcard, blank expected lines skipped')
  t.equal(unmatchedLine('c\na', 'a\nc'), 'a', 'out of order fails')
  t.equal(unmatchedLine('a.c', 'abc'), 'a.c', 'only … is a wildcard')

  t.same(missingFromCi('# install\nnpm ci\n\napt-get install -y jq', ['x npm ci y']), ['apt-get install -y jq'], 'each command line of an sh ci block must appear in .ci')
  t.same(missingFromCi('npm test', ['# CI runs npm test\nnpm ci']), ['npm test'], 'a command that .ci names only in a comment is missing')

  t.same(parseDotenv('# c\n\nA=1\nB="two words"\nC=\'q\'\nnot a pair'), { env: { A: '1', B: 'two words', C: 'q' }, problems: ['not a pair'] })

  t.equal(substituteAddresses('curl 127.0.0.1:3000/x 127.0.0.1:9464/y', { port: 1, opsPort: 2 }), 'curl 127.0.0.1:1/x 127.0.0.1:2/y')
  const text = 'createdb books\nDATABASE_URL=postgres://postgres@127.0.0.1:5432/books npm start\npsql postgresql://localhost/other -c "DROP DATABASE IF EXISTS other"\nredis://127.0.0.1:6379/0'
  t.same(postgresDatabases(text), ['books', 'other'])
  t.ok(createsDatabase(text, 'books'))
  t.notOk(createsDatabase(text, 'other'))
  t.equal(substituteDatabases(text, new Map([['books', 't1'], ['other', 't2']])),
    'createdb t1\nDATABASE_URL=postgres://postgres@127.0.0.1:5432/t1 npm start\npsql postgresql://localhost/t2 -c "DROP DATABASE IF EXISTS t2"\nredis://127.0.0.1:6379/0')
  t.equal(substituteDatabases('postgres://127.0.0.1/kept', new Map()), 'postgres://127.0.0.1/kept', 'a database not in the map stays')

  t.same([...anchorsOf('# Run on PostgreSQL\n## `npm test` & CI: phases\n# Run on PostgreSQL\n<a id="custom"></a>\n')], ['run-on-postgresql', 'npm-test--ci-phases', 'run-on-postgresql-1', 'custom'], 'GitHub\'s slugs')
  const files = new Map([
    ['README.md', '# Quick start\n[guide](docs/a.md#finding-books) [self](#quick-start) [web](https://example.org/x#y) [mail](mailto:a@b.c)\n[ref]: docs/a.md\n![img](docs/missing.png)'],
    ['docs/a.md', '## Finding books\n[back](../README.md#nope) [again](../README.md#quick-start) [up](/README.md) [dir](../docs/) [code](../src/x.ts#L1) [out](../../etc/passwd) [enc](b%20c.md?plain=1)'],
    ['docs', ''],
    ['src/x.ts', ''],
    ['docs/b c.md', '']
  ])
  const fs = { exists: (path: string) => files.has(path), read: (path: string) => files.get(path)! }
  t.same(linkProblems('README.md', files.get('README.md')!, fs), [{ line: 4, message: 'link docs/missing.png: docs/missing.png does not exist' }], 'a missing file fails; external links are not checked')
  t.same(linkProblems('docs/a.md', files.get('docs/a.md')!, fs), [
    { line: 2, message: 'link ../README.md#nope: README.md has no heading with the anchor #nope' },
    { line: 2, message: 'link ../../etc/passwd: ../etc/passwd does not exist' }
  ], 'a broken anchor fails; a link out of the repository fails')
})

t.test('the harness fails what it must (synthetic Markdown)', async t => {
  t.setTimeout(240_000)
  const fence = '```'
  const doc = [
    '# Synthetic',
    `${fence}sh`, 'greeting=hello', 'echo "$greeting world"', 'echo "port $PORT"', fence,
    `${fence}text`, 'hello world', 'port …', fence,
    `${fence}text`, 'nothing before', fence,
    `${fence}sh`, 'echo "still $greeting"', fence,
    `${fence}text`, 'goodbye', fence,
    `${fence}sh`, 'echo about to fail; false', fence,
    `${fence}sh`, 'echo never', fence,
    `${fence}sh ci`, 'npm ci --no-audit', 'this-command-is-not-in-ci', fence,
    `${fence}json Book`, '{ "title": 1 }', fence,
    `${fence}json`, '{ nope', fence,
    `${fence}yaml`, 'a: [', fence,
    `${fence}dotenv`, 'PORT=not-a-port', fence,
    `${fence}ts`, "import { createClient } from 'books-students-api-client'", "const api = createClient({ baseUrl: 'http://127.0.0.1:3000' })", "const { data } = await api.GET('/books', {})", 'console.log(data?.items.length)', fence,
    `${fence}ts`, 'const year: number = "1965"', 'console.log(year)', fence,
    ''
  ].join('\n')
  const results = await runDoc(t, 'synthetic.md', doc, false)
  const at = (line: number): Result | undefined => results.find(r => r.line === line)
  const lineOf = (text: string): number => doc.split('\n').indexOf(text) + 1
  t.equal(at(2)?.problem, undefined, 'an sh block runs in bash')
  t.equal(at(7)?.problem, undefined, 'its output matches the text block, … as a wildcard')
  t.match(at(11)?.problem, /synthetic\.md:11: a text block must follow the sh block/, 'a text block follows an sh block')
  t.equal(at(14)?.problem, undefined, 'variables carry over between the blocks of a file')
  t.match(at(17)?.problem, /synthetic\.md:17: .*no line matching "goodbye"/, 'a text block the output does not match fails')
  t.match(at(20)?.problem, /synthetic\.md:20: the sh block failed \(exit code 1\)[\s\S]*--- the block\necho about to fail; false[\s\S]*--- stdout\nabout to fail/, 'a failing sh block fails with file:line, the block and its output')
  t.match(at(23)?.kind, /not run: the block of line 20 failed/, 'the blocks after it are not run')
  t.match(at(lineOf('```sh ci'))?.problem, /not in \.ci\/.*this-command-is-not-in-ci/, 'an sh ci command missing from .ci fails')
  t.notMatch(at(lineOf('```sh ci'))?.problem, /npm ci --no-audit/, 'one that is there passes')
  t.match(at(lineOf('```json Book'))?.problem, /not a valid Book/, 'a json block is validated against its schema')
  t.match(at(lineOf('```json'))?.problem, /not JSON/, 'a json block must parse')
  t.match(at(lineOf('```yaml'))?.problem, /not YAML/, 'a yaml block must parse')
  t.match(at(lineOf('```dotenv'))?.problem, /loadConfig refuses it: .*PORT/, 'a dotenv block must satisfy loadConfig')
  const unknown = await runDoc(t, 'unknown.md', `${fence}console\nx\n${fence}\n${fence}sh\necho hi\n${fence}\n`, false)
  t.match(unknown[0]?.problem, /^unknown\.md:1: a code block of unknown kind "console"/, 'an unknown kind fails')
  t.match(unknown[1]?.kind, /sh \(not run: the file has a block of no known kind at line 1\)/, 'and the file\'s commands are not run')
  const ts = results.filter(r => r.kind === 'ts')
  t.equal(ts[0]?.problem, undefined, 'a ts block using the client package compiles')
  t.match(ts[1]?.problem, new RegExp(`synthetic\\.md:${ts[1]?.line}: does not compile \\(tsc --strict\\):\\nline ${ts[1]!.line + 1}:7: error TS2322`), 'one that does not fails, with the line in the Markdown file')
})

t.test('a background block serves until the next one or the end, and must stop cleanly', async t => {
  t.setTimeout(240_000)
  const fence = '```'
  const doc = [
    `${fence}sh background`, `node ${serverEntry}`, fence,
    `${fence}sh`, 'curl -sf http://127.0.0.1:9464/health/live >/dev/null && curl -s -o /dev/null http://127.0.0.1:3000/books && echo live', fence,
    `${fence}text`, 'live', fence,
    `${fence}sh background`, 'echo starting; exit 3', fence,
    ''
  ].join('\n')
  const results = await runDoc(t, 'background.md', doc, false)
  t.same(results.slice(0, 3).map(r => r.problem), [undefined, undefined, undefined], 'the service answers at the test\'s address')
  t.match(results[3]?.problem, /background\.md:10: the sh background block exited before the service answered[\s\S]*starting/, 'one that exits first fails with its output')
  // A service that exits 3 on SIGTERM: at the file's end, and before the next background block.
  const stubborn = `${fence}sh background\nnode -e "require('http').createServer((q, s) => s.end('ok')).listen(process.env.OPS_PORT); process.on('SIGTERM', () => process.exit(3))"\n${fence}\n`
  const atEnd = await runDoc(t, 'stubborn.md', stubborn, false)
  t.match(atEnd[1]?.problem, /^stubborn\.md: at its end, the sh background block of line 1 exited 3 on SIGTERM \(0 expected/, 'a service must exit 0 on SIGTERM at the end of the file')
  const next = await runDoc(t, 'next.md', `${stubborn}${fence}sh background\nnode ${serverEntry}\n${fence}\n${fence}sh\necho unreached\n${fence}\n`, false)
  t.match(next[1]?.problem, /^next\.md:4: before this block, the sh background block of line 1 exited 3/, 'and before the next background block, which then does not start')
  t.match(next[2]?.kind, /not run: the block of line 4 failed/)
  const leaving = `${fence}sh background\nsleep 300 & exec node -e "require('http').createServer((q, s) => s.end('ok')).listen(process.env.OPS_PORT); process.on('SIGTERM', () => process.exit(0))"\n${fence}\n`
  const left = await runDoc(t, 'leaving.md', leaving, false)
  t.match(left[1]?.problem, /^leaving\.md: at its end, the sh background block of line 1 exited on SIGTERM but left processes of its group running/, 'and leave no process of its group behind')
})

t.test('a documented PostgreSQL database becomes one of the test\'s own', async t => {
  t.setTimeout(240_000)
  const fence = '```'
  const doc = [
    `${fence}sh background`, `DATABASE_URL=postgres://postgres@127.0.0.1:5432/books node ${serverEntry}`, fence,
    `${fence}sh`, "psql postgres://postgres@127.0.0.1:5432/books -Atc 'SELECT current_database()'", fence,
    `${fence}text`, `bsa_test_${process.pid}_docs…`, fence,
    ''
  ].join('\n')
  const results = await runDoc(t, 'postgres.md', doc, false)
  // Without PostgreSQL (outside CI) the file is skipped, as the other PostgreSQL tests are.
  if (results.some(r => r.skip !== undefined)) return
  t.same(results.map(r => r.problem), [undefined, undefined, undefined], 'the service and psql use the test\'s database')
})

t.test('guides get the prelude: a service, an admin key, and the quick start\'s book', async t => {
  t.setTimeout(240_000)
  const doc = '```sh\ncurl -sf "$API/books" -H "authorization: Bearer $API_KEY" | jq -r \'.items[].title\'\n```\n```text\nDune\n```\n'
  const results = await runDoc(t, 'docs/prelude.md', doc, true)
  t.same(results.map(r => r.problem), [undefined, undefined])
})

t.test('the prelude seeds the book the README\'s quick start creates, read from the README itself', async t => {
  t.same(JSON.parse(quickStartBook()), { title: 'Dune', author: 'Frank Herbert', isbn: '0-441-01359-7', published_year: 1965 })
  t.throws(() => quickStartBook('# Quick start\n\nnpm start\n'), { message: /^README\.md's quick start no longer creates a book/ })
})
