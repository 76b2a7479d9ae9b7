// ISBN parsing: accepts ISBN-10 or ISBN-13 with hyphens or spaces, verifies the check digit.

function isbn13CheckDigit (first12: string): number {
  let sum = 0
  for (let i = 0; i < 12; i++) sum += Number(first12[i]) * (i % 2 === 0 ? 1 : 3)
  return (10 - (sum % 10)) % 10
}

/** The 13-digit form of `raw`, or null when it is not a valid ISBN. */
export function toIsbn13 (raw: string): string | null {
  const compact = raw.replace(/[- ]/g, '').toUpperCase()
  if (/^\d{9}[\dX]$/.test(compact)) {
    let sum = 0
    for (let i = 0; i < 10; i++) sum += (compact[i] === 'X' ? 10 : Number(compact[i])) * (10 - i)
    if (sum % 11 !== 0) return null
    const first12 = '978' + compact.slice(0, 9)
    return first12 + isbn13CheckDigit(first12)
  }
  if (/^97[89]\d{10}$/.test(compact)) {
    return isbn13CheckDigit(compact.slice(0, 12)) === Number(compact[12]) ? compact : null
  }
  return null
}

/** Whether `raw` is an ISBN-10 or ISBN-13 with a right check digit: openapi.yaml's `format: isbn`. */
export const isIsbn = (raw: string): boolean => toIsbn13(raw) !== null
