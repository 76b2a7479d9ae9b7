// The book rows the write-cost benchmarks insert: the service's columns and folded keys, titles of a few common words.
import { uuidv7 } from 'uuidv7'
import { fold } from '../../../dist/domain/search/fold.js'

const words = ['quiet', 'river', 'stone', 'garden', 'winter', 'light', 'house', 'north', 'silver', 'dream']

/** The i-th book as the service stores it, and its event's type, envelope and time. */
export function bookRow (i) {
  const now = new Date().toISOString()
  const title = `The ${words[i % words.length]} ${words[(i * 7) % words.length]} of book ${i}`
  const author = `Author ${i % 300} Smith`
  const record = { book_id: uuidv7(), title, author, isbn: null, published_year: 1900 + i % 120, created_at: now, updated_at: now }
  return { row: { ...record, title_key: fold(title), author_key: fold(author) }, event: ['book.created', JSON.stringify({ data: record }), now] }
}

/** CPU µs of this process per item while `work` runs. */
export function cpuPer (items, work) {
  const start = process.cpuUsage()
  work()
  const { user, system } = process.cpuUsage(start)
  return (user + system) / items
}
