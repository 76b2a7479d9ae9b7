// ISBN-13s unique within a run: seeded books take 978 prefixes and posted books 979, so no write is refused as a duplicate.

function isbn13 (first12) {
  let sum = 0
  for (let i = 0; i < 12; i++) sum += Number(first12[i]) * (i % 2 === 0 ? 1 : 3)
  return first12 + ((10 - (sum % 10)) % 10)
}

/** The ISBN of the `i`th seeded book. */
export const seededIsbn = i => isbn13('978' + String(i).padStart(9, '0'))

let posted = 0
/** The next ISBN for a book the run posts. */
export const nextPostedIsbn = () => isbn13('979' + String(posted++).padStart(9, '0'))
