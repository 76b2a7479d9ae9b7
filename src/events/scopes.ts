// Which events an API key may receive: an event type needs the read scope of its resource.
import type { Scope } from '../domain/api-key-types.js'

export const readScopeOf = (type: string): Scope => type.startsWith('book.') ? 'books:read' : 'students:read'
