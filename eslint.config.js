// Lint rules: neostandard (the Fastify family's style) with TypeScript support.
import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', '.dist-build-*/**', '.dist-old-*/**', 'client/dist/**', 'client/.dist-build-*/**', 'client/.dist-old-*/**', 'generated/**', 'coverage/**', '.tap/**', 'prof/**', 'artifacts/**'] })
]
