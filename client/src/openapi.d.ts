// The types generated from openapi.yaml, under the name the client imports them by. In the package,
// scripts/build-if-stale.mjs --client puts generated/openapi.d.ts itself in this place (dist/openapi.d.ts).
export type * from '../../generated/openapi.js'
