// docs/configuration.md against the declarations in src/config/: the reference is what they generate, and they are all loadConfig reads.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { concerns, defaults, loadConfig } from '../src/config/index.js'
import { begin, end, firstDifference, withReference } from '../src/config/reference.js'

const document = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')
const declared = concerns.flatMap(concern => Object.values(concern.variables).map(variable => variable.name))

t.test('docs/configuration.md holds the reference the declarations make (else: npm run generate:config)', async t => {
  t.equal(firstDifference(document, withReference(document)), null)
  for (const name of declared) t.match(document, `| \`${name}\` |`, `${name} has its row`)
})

t.test('a stale reference is named by its first differing line, and the variable of that row', async t => {
  const fresh = ['# Configuration', '| `PORT` | `3000` |', '| `HOST` | `127.0.0.1` |'].join('\n')
  t.equal(firstDifference(fresh, fresh), null)
  t.equal(firstDifference(fresh.replace('3000', '8080'), fresh), 'line 2 (PORT): expected "| `PORT` | `3000` |", found "| `PORT` | `8080` |"')
  t.equal(firstDifference(fresh.replace('# Configuration', '# Settings'), fresh), 'line 1: expected "# Configuration", found "# Settings"')
  t.equal(firstDifference(fresh.replace('| `HOST` | `127.0.0.1` |', '| `OLD_NAME` | `1` |\n| `HOST` | `127.0.0.1` |'), fresh.replace('| `HOST` | `127.0.0.1` |', 'prose\n| `HOST` | `127.0.0.1` |')),
    'line 3 (OLD_NAME): expected "prose", found "| `OLD_NAME` | `1` |"', 'a row that should not be there is named too')
  t.equal(firstDifference(fresh.split('\n').slice(0, 2).join('\n'), fresh), 'line 3 (HOST): expected "| `HOST` | `127.0.0.1` |", found null')
  t.equal(firstDifference(`${fresh}\nmore`, fresh), 'line 4: unexpected "more"')
})

t.test('the generated part goes between its markers; prose around them stays', async t => {
  const page = `# Title\n\nprose\n\n${begin}\nold tables\n${end}\n\nafter\n`
  const made = withReference(page)
  t.ok(made.startsWith(`# Title\n\nprose\n\n${begin}\n\n## Server\n`))
  t.ok(made.endsWith(`|\n\n${end}\n\nafter\n`))
  t.notMatch(made, 'old tables')
  t.equal(withReference(made), made, 'generating again changes nothing')
  t.throws(() => withReference('# no markers'), /must hold the lines/)
  t.throws(() => withReference(`${end}\n${begin}`), /must hold the lines/)
})

t.test('loadConfig reads every declared variable, and no other', async t => {
  const read = new Set<string>()
  // Tracing on over OTLP with a ratio sampler: every variable then matters.
  const env = new Proxy<Record<string, string>>({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio' }, {
    get (target, key) {
      if (typeof key === 'string') read.add(key)
      return Reflect.get(target, key)
    }
  })
  loadConfig(env)
  t.same([...read].sort(), [...declared].sort())
})

t.test('each variable is declared once, and each concern makes keys of Config no other makes', async t => {
  t.equal(new Set(declared).size, declared.length)
  const keys = concerns.flatMap(concern => Object.keys(concern.load({})))
  t.same([...keys].sort(), Object.keys(defaults).sort())
})

t.test('the dotenv examples of docs/configuration.md are accepted by loadConfig', async t => {
  const blocks = [...document.matchAll(/^```dotenv\n([\s\S]*?)^```$/gm)].map(match => match[1]!)
  t.ok(blocks.length > 0, 'there is one')
  for (const block of blocks) {
    const env = Object.fromEntries(block.trim().split('\n').map(line => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
    const config = loadConfig(env)
    t.not(config, defaults)
    t.same(Object.keys(env).filter(name => !declared.includes(name)), [], 'names only declared variables')
  }
})
