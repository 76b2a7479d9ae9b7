// The work a reader of client bytes does, counted: tests prove each reader linear by counting, never by timing.

/**
 * Told of the work a reader does, in units: a character scanned, a value visited, a pointer segment or
 * character built. Every reader of client bytes must cost time linear in them.
 */
export type WorkMeter = (units: number) => void

/** The meter of production, where nobody counts. */
export const unmetered: WorkMeter = () => {}
