// `npm run bench`'s command line: its usage, the options read once, and the settings and report labels they make.
import { commandLine } from '../cli.mjs'
import { benchDatabase, defaultPostgresUrl, postgresUrl } from './postgres.mjs'

const usage = `usage: npm run bench -- [options]
  --quick              short runs (under a minute): 1 run of 2 s per scenario after 0.5 s warm-up
  --scale              the scenarios at 1,000 / 100,000 / 1,000,000 books instead of one size
  --sizes N,N          book counts for --scale (default 1000,100000,1000000)
  --books N            books seeded for the normal run (default 10000; 1000 with --peers)
  --runs N             measured runs per scenario, the median is reported (default 3, quick 1)
  --duration S         seconds per measured run (default 8, quick 2)
  --connections N      concurrent connections (default 32)
  --write              also write the result into BENCHMARKS.md (between its bench markers)
  --no-build           use the existing dist/ instead of running npm run build
  --log FILE           keep the service's log there (default: written to /dev/null)
  --cache-size N       the service's RECORD_CACHE_SIZE (default: the service's own, 10000); 0 reads
                       every record and page from SQLite. Written to its own BENCHMARKS.md sections
  --only ID,ID         only these scenarios: get-book, list-first, list-deep, post-book, put-book,
                       get-student, mix, and the list queries (issue 12): list-filter, list-filter-years,
                       list-sorted-deep, list-filter-broad, list-walk-sparse, search-rare, search-common,
                       search-common-created; with --peers, of its five (below)
  --seed-cache DIR     keep each seeded database in DIR (per engine, size, schema version and data
                       generator) and start later runs from it instead of seeding; off unless given
  --profile DIR        run the service under node --cpu-prof and leave its .cpuprofile files in DIR
  --engine E           the storage engine: sqlite (default), postgres, or both (in turns, in one run;
                       not with --scale; the default with --peers). PostgreSQL gets a database bsa_bench_<pid>
                       of its own, dropped after
  --peers              the service beside the ceiling and the peers a user would pick instead, in turns in
                       one run: on SQLite, bare Fastify + better-sqlite3 and Platformatic DB 2; on PostgreSQL,
                       Platformatic DB 2 (a database bsa_bench_<pid>_platformatic); both engines unless
                       --engine says one. Scenarios get-book, list-first, post-book, put-book and mixed
                       (60 % GET one, 20 % list, 10 % POST, 10 % PUT). Installs Platformatic DB into
                       scripts/bench/peers/platformatic on first use (npm ci --prefix, a few minutes)
  --postgres-url URL   the PostgreSQL server for --engine postgres (default $BENCH_POSTGRES_URL or
                       postgres://postgres@127.0.0.1:5432/postgres); only its bsa_bench_* databases are touched
  --bulk               imports --books books (default 1000000 here) from CSV through HTTP with single POSTs
                       beside it, exports them as CSV, then sends the same books one POST each (issue 26)
  --hostile            GET one book (a books:read key) alone, then beside each attack of issue 38 in turn (H1 JSON
                       bodies, H2 chunked import, M1 stalled exports, M2 exports, L3 search bursts; parameters in
                       scripts/bench/hostile-attacks.mjs), a fresh service per attack, the attacker a process of its
                       own; both engines unless --engine says one; --books (default 200000 here), --duration (default
                       15 here, quick 4), --connections and --only (h1,h2,m1,m2,l3) apply; one run per attack
  --env KEY=VALUE      an environment variable for the service (repeatable), e.g. --env OTEL_TRACES_EXPORTER=otlp;
                       named in the report, and not with --write (the default's sections would hold another setup)`

export const { opts, badUsage, positive } = commandLine('npm run bench', usage, {
  quick: { type: 'boolean', default: false },
  scale: { type: 'boolean', default: false },
  sizes: { type: 'string', default: '1000,100000,1000000' },
  books: { type: 'string' },
  runs: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string', default: '32' },
  write: { type: 'boolean', default: false },
  'no-build': { type: 'boolean', default: false },
  log: { type: 'string', default: '/dev/null' },
  'cache-size': { type: 'string' },
  profile: { type: 'string' },
  only: { type: 'string' },
  'seed-cache': { type: 'string' },
  engine: { type: 'string' },
  peers: { type: 'boolean', default: false },
  'postgres-url': { type: 'string', default: defaultPostgresUrl },
  env: { type: 'string', multiple: true, default: [] },
  bulk: { type: 'boolean', default: false },
  hostile: { type: 'boolean', default: false }
})
export const settings = {
  // A hostile run measures the victim once alone and once beside each attack, on a service of its own.
  runs: opts.hostile ? 1 : positive('runs', opts.runs ?? (opts.quick || opts.scale ? 1 : 3)),
  // Long enough for an attack to bite: the research measured M2 over 15 s.
  duration: positive('duration', opts.duration ?? (opts.hostile ? (opts.quick ? 4 : 15) : opts.quick ? 2 : 8)),
  // Platformatic DB takes about 5 s of load to reach its steady state, and every target gets the same.
  warmup: opts.quick ? 0.5 : opts.peers ? 5 : 2,
  connections: positive('connections', opts.connections),
  // The peers were first compared at 1,000 books (issue 24); the hostile input was found at 200,000
  // (issue 38), where an export's scan costs about a second on SQLite and seeding takes well under two minutes.
  books: positive('books', opts.books ?? (opts.peers ? 1000 : opts.bulk ? 1_000_000 : opts.hostile ? 200_000 : 10000)),
  sizes: opts.sizes.split(',').map(s => positive('sizes', s)),
  students: 1000
}
// The peers and the hostile input are compared on both engines unless told otherwise.
const defaultEngine = opts.peers || opts.hostile ? 'both' : 'sqlite'
const engine = opts.engine ?? defaultEngine
if (!['sqlite', 'postgres', 'both'].includes(engine)) badUsage(`--engine must be sqlite, postgres or both (got ${engine})`)
if (opts.peers && opts.scale) badUsage('--peers measures one size: drop --scale or --peers')
const kinds = ['peers', 'scale', 'bulk'].filter(kind => opts[kind])
if (opts.hostile && kinds.length > 0) badUsage(`--hostile is a run of its own: drop --${kinds[0]} or --hostile`)
if (engine === 'both' && opts.scale) badUsage('--scale measures one engine: --engine sqlite or --engine postgres')
if (!URL.canParse(opts['postgres-url'])) badUsage(`--postgres-url is not a URL (got ${opts['postgres-url']})`)
export const engines = engine === 'both' ? ['sqlite', 'postgres'] : [engine]
export const serviceEnv = Object.fromEntries(opts.env.map(pair => {
  const match = /^([A-Za-z_]\w*)=(.*)$/s.exec(pair)
  if (match === null) badUsage(`--env must be KEY=VALUE (got ${pair})`)
  return [match[1], match[2]]
}))
if (opts.env.length > 0 && opts.write) badUsage('--env runs are not written to BENCHMARKS.md: drop --write or --env')
// A run with another cache size or engine goes to sections of its own, beside the default's.
export const sectionSuffix = (engine === defaultEngine ? '' : `-${engine}`) + (opts['cache-size'] === undefined ? '' : `-cache-${opts['cache-size']}`)
export const cacheNote = opts['cache-size'] === undefined ? '' : `, RECORD_CACHE_SIZE=${opts['cache-size']}`
export const engineNote = engine === 'sqlite' ? '' : engine === 'postgres' ? ', PostgreSQL' : ', SQLite and PostgreSQL'
export const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')
// The PostgreSQL server and this run's database on it.
export const postgresServer = opts['postgres-url']
export const benchDatabaseUrl = postgresUrl(postgresServer, benchDatabase)
