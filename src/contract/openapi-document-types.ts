// An OpenAPI document's types, as far as the service reads it.
// Their own module so that openapi-document.ts and deprecation.ts (which openapi-document.ts calls) both import them, and not each other.
export type SecurityRequirement = Record<string, string[]>

export interface Operation {
  operationId: string
  security?: SecurityRequirement[]
  deprecated?: boolean
  [key: string]: unknown
}

/** An OpenAPI 3.1 document, typed only as far as the service reads it. */
export interface OpenApiDocument {
  openapi: string
  info: { version: string, [key: string]: unknown }
  paths: Record<string, Record<string, Operation | unknown>>
  [key: string]: unknown
}
