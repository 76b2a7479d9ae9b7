// A peer of `npm run bench -- --peers`: Platformatic DB 2 serving the tables ../seed.mjs made, as its users run it with zero code.
// Started by the bench with DATABASE_URL (sqlite://FILE or a PostgreSQL URL), PORT and HOST, from the
// packages of this folder (npm ci --prefix scripts/bench/peers/platformatic), never the service's.
// It listens itself on HOST: its own start() moves the host to 0.0.0.0 when it believes it runs in a container.
import { buildServer } from '@platformatic/db'

const app = await buildServer({
  server: { hostname: process.env.HOST, port: Number(process.env.PORT), logger: { level: 'warn' } },
  db: { connectionString: process.env.DATABASE_URL, graphql: false, openapi: true },
  watch: false
})
await app.listen({ host: process.env.HOST, port: Number(process.env.PORT) })
process.on('SIGTERM', async () => {
  await app.close()
  process.exit(0)
})
