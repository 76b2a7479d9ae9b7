// --seed-cache DIR: seeded databases kept between runs (per engine, size, schema version and data generator) and restored instead of seeding.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { generatorVersion, seededAt } from './data.mjs'
import { benchDatabaseUrl, engines, opts, postgresServer } from './options.mjs'
import { fromDist } from './paths.mjs'
import { benchDatabase, createBenchDatabase, onPostgres } from './postgres.mjs'
import { progress } from './progress.mjs'

/**
 * One seeded database per engine, size, schema version and data generator, kept in --seed-cache's
 * DIR (a copy of the SQLite file; pg_dump's custom format for PostgreSQL, restored with pg_restore)
 * beside a JSON file of what the scenarios pick from. Never used unless asked for.
 */
export async function seedCache (count) {
  const { latestVersion } = await fromDist('storage/schema.js')
  const dir = opts['seed-cache']
  mkdirSync(dir, { recursive: true })
  const name = engine => join(dir, `${engine}-${count}-schema${latestVersion}-data${generatorVersion}`)
  const dumpArgs = ['--no-owner', '--no-privileges', '-d', benchDatabaseUrl]
  return {
    async restore (sqlitePath) {
      if (!engines.every(engine => existsSync(`${name(engine)}.json`))) return null
      const started = performance.now()
      const metas = engines.map(engine => JSON.parse(readFileSync(`${name(engine)}.json`, 'utf8')))
      const secrets = {}
      for (const engine of engines) {
        if (engine === 'sqlite') {
          copyFileSync(`${name(engine)}.sqlite`, sqlitePath)
          const db = new Database(sqlitePath, { fileMustExist: true })
          secrets.sqlite = db.prepare("SELECT value FROM settings WHERE name = 'cursor_secret'").pluck().get()
          db.close()
        } else {
          await createBenchDatabase(postgresServer)
          execFileSync('pg_restore', ['--jobs', '2', ...dumpArgs, `${name(engine)}.dump`], { stdio: ['ignore', 'ignore', 'inherit'] })
          await onPostgres(postgresServer, benchDatabase, async client => {
            await client.query('VACUUM ANALYZE books')
            await client.query('VACUUM ANALYZE students')
            secrets.postgres = (await client.query("SELECT value FROM settings WHERE name = 'cursor_secret'")).rows[0].value
          })
        }
      }
      // The same generator, so the same records (ids included); seq is each engine's own and both must agree.
      if (metas.some(m => JSON.stringify([m.titleMiddle, m.sample]) !== JSON.stringify([metas[0].titleMiddle, metas[0].sample]))) {
        throw new Error(`the seed caches of ${engines.join(' and ')} in ${dir} hold different books: delete them`)
      }
      const { sample, picks, titleMiddle } = metas[0]
      progress(`restored ${count.toLocaleString('en')} books from the seed cache in ${((performance.now() - started) / 1000).toFixed(0)} s`)
      return { count, sample, picks, titleMiddle, updatedAt: seededAt(count), secrets, seconds: NaN }
    },
    async save (sqlitePath, seeded) {
      for (const engine of engines) {
        if (engine === 'sqlite') copyFileSync(sqlitePath, `${name(engine)}.sqlite`)
        else execFileSync('pg_dump', ['--format', 'custom', '--compress', '1', ...dumpArgs, '--file', `${name(engine)}.dump`], { stdio: ['ignore', 'ignore', 'inherit'] })
        const { sample, picks, titleMiddle } = seeded
        writeFileSync(`${name(engine)}.json`, JSON.stringify({ sample, picks, titleMiddle }))
      }
      progress(`kept the seeded ${count.toLocaleString('en')} books in ${opts['seed-cache']}`)
    }
  }
}
