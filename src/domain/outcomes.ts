// What a write that storage refuses comes to, in the domain's words; the HTTP edge says each as a problem (src/http/errors.ts).

/** A write refused before anything was written (or with what it wrote undone): the caller learns why, no one else is touched. */
export class Refusal extends Error {}

/** A value that must be unique is already held by another record. */
export class ValueTakenError extends Refusal {
  override name = 'ValueTakenError'
  readonly kind: string
  readonly field: string

  constructor (kind: string, field: string) {
    super(`Another ${kind} already has this ${field}`)
    this.kind = kind
    this.field = field
  }
}

/**
 * The write named revisions (If-Match) of which none is the record's current one. `changedSince`: it
 * named an earlier revision, so someone changed the record since the caller read it; otherwise the
 * tags are not the record's at all (another record's, a weak one, one this service never issues),
 * and saying "changed" would mislead.
 */
export class RevisionNotCurrentError extends Refusal {
  override name = 'RevisionNotCurrentError'
  readonly kind: string
  readonly changedSince: boolean

  constructor (kind: string, changedSince: boolean) {
    super(changedSince
      ? `The ${kind} has changed since the ETag in If-Match was issued`
      : `The ETag in If-Match does not match the ${kind}'s current one, nor any it had before: GET the ${kind} for its current ETag`)
    this.kind = kind
    this.changedSince = changedSince
  }

  /** The refusal of `expected` (the revisions the write named) by a record at revision `current`. */
  static of (kind: string, expected: readonly number[], current: number): RevisionNotCurrentError {
    return new RevisionNotCurrentError(kind, expected.some(revision => revision < current))
  }
}

/**
 * A create whose idempotency key another request stored first (on this node or another) while this
 * one was on its way: nothing was written, and the caller replays what the other stored.
 */
export class IdempotencyKeyTakenError extends Refusal {
  override name = 'IdempotencyKeyTakenError'
}

/** A create whose idempotency key another request, still being handled, holds: nothing was written. */
export class IdempotencyKeyBusyError extends Refusal {
  override name = 'IdempotencyKeyBusyError'
}
