// The export CLI (npm run export): a collection from a running service to a file or standard output, started again after a cut connection when it goes to a file.
import { createWriteStream } from 'node:fs'
import { rename } from 'node:fs/promises'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseCommandLine, UsageError } from './args.js'
import { connection, count, problemLine, reporter, target, type TransferEnvironment, wait } from './transfer.js'

const exportHelp = `Usage: npm run -s export -- <books|students> [--format csv|ndjson] [--bom] [--query 'author=…&sort=title'] [--output FILE] [--url URL] [--key KEY]

Streams every record the query selects (the list's parameters) from a running service. Without
--output the file goes to standard output: run it with npm's -s, or npm's own first lines go there
too. With --output, a cut connection starts the export again (the file is replaced once whole).
Progress goes to standard error.`

export async function runExport (args: string[], world: TransferEnvironment): Promise<number> {
  const { io } = world
  const now = world.now ?? Date.now
  let line
  try {
    line = parseCommandLine(args, { ...connection, format: { type: 'string' }, bom: { type: 'boolean' }, query: { type: 'string' }, output: { type: 'string' } })
  } catch (error) {
    io.err(`npm run export: ${(error as Error).message}`)
    return 2
  }
  if (line === 'help') {
    io.out(exportHelp)
    return 0
  }
  let settings
  try {
    const [collection, ...extra] = line.positionals
    if (extra.length > 0 || (collection !== 'books' && collection !== 'students')) throw new UsageError('give books or students')
    const format = line.values.format ?? 'csv'
    if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format must be csv or ndjson')
    const query = new URLSearchParams(line.values.query ?? '')
    if (line.values.bom === true && format !== 'csv') throw new UsageError('--bom applies to --format csv only (a byte order mark for Excel)')
    if (line.values.bom === true) query.set('bom', 'true')
    const path = collection === 'books' ? '/books' : '/api/students'
    settings = { path: `${path}/export.${format}${query.size === 0 ? '' : `?${query}`}`, output: line.values.output, ...target(line.values, world.env) }
  } catch (error) {
    io.err(`npm run export: ${(error as Error).message}`)
    return 2
  }
  const { path, output, origin, headers } = settings
  const show = reporter(world.progress, now)
  const started = now()
  // To a file, an export cut midway starts again (a snapshot cannot be resumed); to standard output it cannot.
  for (let attempt = 1; ; attempt++) {
    let bytes = 0
    let lines = 0
    try {
      const res = await world.fetch(origin + path, { headers })
      if (res.status !== 200) {
        show.done(`npm run export: ${await problemLine(res)}`)
        return 1
      }
      const counting = new Transform({
        transform (chunk: Buffer, _encoding, done) {
          bytes += chunk.length
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
          const seconds = Math.max(0.001, (now() - started) / 1000)
          show.show(`exporting ${path}: ${count(lines)} lines, ${count(bytes)} bytes · ${count(lines / seconds)} lines/s`)
          done(null, chunk)
        }
      })
      const partial = output === undefined ? null : `${output}.partial`
      await pipeline(Readable.fromWeb(res.body! as never), counting, partial === null ? world.stdout : createWriteStream(partial))
      if (partial !== null) await rename(partial, output!)
      show.done(`exported ${path}: ${count(lines)} lines, ${count(bytes)} bytes${output === undefined ? '' : ` to ${output}`}`)
      return 0
    } catch (error) {
      if (output === undefined || attempt >= 5) {
        show.done(`npm run export: ${origin}${path}: ${(error as Error).message}`)
        return 1
      }
      show.done(`npm run export: the connection was cut (${(error as Error).message}); starting again`)
      await wait(world.retryMs * attempt)
    }
  }
}
