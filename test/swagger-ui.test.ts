// Swagger UI in a real headless Chromium: operations grouped by resource, Try it out creates a book, then reads it back.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/index.js'
import { adminKey } from './helper.js'
import { chromiumPath, needChromium } from './services.js'

// Debian's chromium (installed by .ci/run; TEST_CHROMIUM names another), never a downloaded browser. Without
// the networking flags it keeps trying to reach Google's hosts, which this closed network refuses.
const executablePath = chromiumPath()
const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
const artifacts = fileURLToPath(new URL('../artifacts/', import.meta.url))

// Starting a browser on a busy 2-core machine can be slow; tap's 30 s default is too tight here.
t.setTimeout(180_000)

t.test('Swagger UI: Try it out creates a book (201), then GET by id shows it', await needChromium(t), async t => {
  const app = await buildApp(loadConfig({}, { databasePath: ':memory:', logLevel: 'silent', adminApiKey: adminKey }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const profile = mkdtempSync(join(tmpdir(), 'bsa-chromium-'))
  t.teardown(() => rmSync(profile, { recursive: true, force: true }))
  const browser = await chromium.launchPersistentContext(profile, { executablePath, args, headless: true })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  page.setDefaultTimeout(30_000)
  // Any console error (a Content-Security-Policy violation, a failed asset, a script error) is a fault of the page.
  const consoleErrors: string[] = []
  page.on('console', message => { if (message.type() === 'error') consoleErrors.push(message.text()) })
  page.on('pageerror', error => { consoleErrors.push(error.message) })

  await page.goto(`${origin}/docs`)
  await page.locator('.opblock').first().waitFor()
  t.same(await page.locator('.opblock-tag').allInnerTexts().then(tags => tags.map(tag => tag.split('\n')[0]!.trim())),
    ['books', 'students', 'events', 'imports', 'exports', 'webhooks'], 'operations grouped by resource')
  t.equal(await page.locator('.opblock-tag-section:has(#operations-tag-books) .opblock').count(), 5,
    'five book operations')
  t.equal(await page.locator('.webhooks .opblock').count(), 5, 'the Webhooks section shows the five event types a receiver gets')
  t.match(await page.locator('.webhooks').innerText(), /book\.created[\s\S]*student\.replaced/)
  t.equal(await page.locator('.opblock').count(), 25 + 5, 'twenty-five operations and the five webhooks in all')

  // Optional security (`- {}`) shows as a requirement already met: the book reads' lock is closed
  // before anyone authorizes, the writes' open; and a visitor's Try it out of a read succeeds.
  const lock = (operation: string): Promise<string | null> => page.locator(`#operations-${operation} .authorization__btn`).getAttribute('aria-label')
  t.equal(await lock('books-listBooks'), 'authorization button locked', 'anonymous book reads are shown as allowed')
  t.equal(await lock('books-createBook'), 'authorization button unlocked', 'writes are shown as needing a key')
  t.equal(await lock('students-getStudent'), 'authorization button unlocked', 'student reads are shown as needing a key')
  t.match(await page.locator('.information-container').innerText(), /padlock shows whether you may call it now[\s\S]*Book reads\s+show a closed padlock before you authorize because they need no key/,
    'the page says what the closed padlock of a public read means')
  const list = page.locator('#operations-books-listBooks')
  await list.locator('.opblock-summary').click()
  const listTryOut = list.locator('.try-out__btn')
  if (await listTryOut.innerText() === 'Try it out') await listTryOut.click()
  await list.locator('button.execute').click()
  await list.locator('.live-responses-table .response .response-col_status').filter({ hasText: '200' }).waitFor()
  await list.locator('.opblock-summary').click()

  // Authorize with an API key, as a person exploring the API would: writes need one.
  await page.locator('.btn.authorize').first().click()
  const modal = page.locator('.modal-ux')
  await modal.locator('input').first().fill(adminKey)
  await modal.locator('button.authorize').click()
  await modal.locator('button.btn-done, .close-modal').first().click()
  t.ok(await page.locator('.btn.authorize.locked').first().isVisible(), 'Authorize shows the key is in use')

  // Create: the request body editor is prefilled from the contract's example (not the quick start's book, so that it creates one after it).
  const create = page.locator('#operations-books-createBook')
  await create.locator('.opblock-summary').click()
  const tryOut = create.locator('.try-out__btn')
  if (await tryOut.innerText() === 'Try it out') await tryOut.click()
  t.match(await create.locator('textarea.body-param__text').inputValue(), /"title": "The Left Hand of Darkness"/, 'body prefilled from the example')
  // Headers a user must make unique or take from their own GET are never pre-filled with a fixed value.
  t.equal(await create.locator('tr[data-param-name="Idempotency-Key"] input').inputValue(), '', 'Idempotency-Key starts empty')
  await create.locator('button.execute').click()
  const created = create.locator('.live-responses-table .response')
  await created.locator('.response-col_status').filter({ hasText: '201' }).waitFor()
  const body = JSON.parse(await created.locator('.response-col_description pre.microlight').first().innerText())
  t.match(body, { title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin', isbn: '9780441478125', published_year: 1969 }, 'the 201 body is rendered')

  // Read it back by id.
  const get = page.locator('#operations-books-getBook')
  await get.locator('.opblock-summary').click()
  const getTryOut = get.locator('.try-out__btn')
  if (await getTryOut.innerText() === 'Try it out') await getTryOut.click()
  t.equal(await get.locator('tr[data-param-name="If-None-Match"] input').inputValue(), '', 'If-None-Match starts empty')
  await get.locator('tr[data-param-name="book_id"] input').fill(body.book_id)
  await get.locator('button.execute').click()
  const fetched = get.locator('.live-responses-table .response')
  await fetched.locator('.response-col_status').filter({ hasText: '200' }).waitFor()
  t.same(JSON.parse(await fetched.locator('.response-col_description pre.microlight').first().innerText()), body,
    'GET /books/{book_id} shows the created book')

  mkdirSync(artifacts, { recursive: true })
  await page.screenshot({ path: join(artifacts, 'swagger-ui.png'), fullPage: true })

  // With PUBLIC_BOOK_READS=false the served document drops `- {}`, and Swagger UI shows book reads as needing a key.
  const closed = await buildApp(loadConfig({}, { databasePath: ':memory:', logLevel: 'silent', adminApiKey: adminKey, publicBookReads: false }))
  t.teardown(() => closed.close())
  await closed.listen({ port: 0, host: '127.0.0.1' })
  await page.goto(`http://127.0.0.1:${(closed.server.address() as AddressInfo).port}/docs`)
  await page.locator('.opblock').first().waitFor()
  t.equal(await lock('books-listBooks'), 'authorization button unlocked', 'closed book reads are shown as needing a key')
  t.same(consoleErrors, [], 'the page logs no console error')
})
