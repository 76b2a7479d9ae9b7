// Opaque list cursors: a list's keyset position, signed so that a forged or foreign cursor is refused.
import { createHmac, timingSafeEqual } from 'node:crypto'

export class CursorCodec {
  readonly #secret: Buffer

  constructor (secret: Buffer) {
    this.#secret = secret
  }

  #mac (list: string, position: string): Buffer {
    // 16 bytes of HMAC-SHA256 are plenty against forgery and keep URLs short.
    return createHmac('sha256', this.#secret).update(`${list}\n${position}`).digest().subarray(0, 16)
  }

  encode (list: string, position: string): string {
    return `${Buffer.from(position).toString('base64url')}.${this.#mac(list, position).toString('base64url')}`
  }

  /** The position `cursor` stands for, or null when it was not issued for `list` by this service. */
  decode (list: string, cursor: string): string | null {
    const parts = /^([\w-]+)\.([\w-]+)$/.exec(cursor)
    if (parts === null) return null
    const position = Buffer.from(parts[1]!, 'base64url').toString()
    const given = Buffer.from(parts[2]!, 'base64url')
    const expected = this.#mac(list, position)
    return given.length === expected.length && timingSafeEqual(given, expected) ? position : null
  }
}
