import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import t from 'tap'
import { body, buildTestApp, listen, post } from '../helper.js'
import { fromRoot } from '../support/paths.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it)`
// The flags this machine needs: no sandbox as root, no network beyond loopback.
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const ARTIFACTS = fromRoot('test-artifacts')

t.test('/docs in a real browser: loads offline, lists every operation, authorizes with an API key, runs a call, and Try it out on a record finds the first one', { skip }, async t => {
  const app = await buildTestApp(t)
  const key = body(await post(app, '/v1/api-keys', { name: 'docs', scopes: ['admin'] })).key as string
  const base = await listen(app)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  // Swagger UI lists the webhook requests the service sends beside the operations it serves.
  const count = (items: Record<string, Record<string, unknown>>): number => Object.values(items).reduce((n, item) => n + Object.keys(item).length, 0)
  const operations = count(document.paths as Record<string, Record<string, unknown>>) + count(document.webhooks as Record<string, Record<string, unknown>>)

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
  t.teardown(async () => { await browser.close() })
  const page = await browser.newPage()
  const outside: string[] = []
  page.on('request', request => { if (!request.url().startsWith(base)) outside.push(request.url()) })
  await page.goto(`${base}/docs`)
  await page.waitForSelector('.opblock', { timeout: 20_000 })
  t.equal(await page.locator('.opblock').count(), operations, `all ${operations} operations are listed`)

  await page.click('button.authorize')
  const apiKeyInput = page.locator('.auth-container', { hasText: 'bearerApiKey' }).locator('input')
  await apiKeyInput.fill(key)
  await page.locator('.auth-container', { hasText: 'bearerApiKey' }).locator('button.authorize').click()
  await page.click('button.btn-done')

  const list = page.locator('#operations-projects-listProjects')
  await list.locator('.opblock-summary').click()
  // The documented 200 shows its headers, those described once in the components (X-Request-Id) resolved like the rest.
  const headers = list.locator('.responses-wrapper tr.response[data-code="200"] table.headers')
  await headers.waitFor({ timeout: 20_000 })
  const documentedHeaders = await headers.innerText()
  for (const expected of ['X-Request-Id', 'The request\'s id', 'X-Total-Count', 'Link']) t.match(documentedHeaders, expected, `the 200 documents ${expected}`)
  await list.locator('button.try-out__btn').click()
  await list.locator('button.execute').click()
  const status = list.locator('.live-responses-table tr.response .response-col_status').first()
  await status.waitFor({ timeout: 20_000 })
  t.equal((await status.innerText()).trim(), '200', 'the try-it call succeeds')

  // A record's operations come filled with the id every example is about, 1: the first record a reader creates.
  t.equal((await post(app, '/v1/projects', { name: 'Road repairs' })).statusCode, 201)
  const one = page.locator('#operations-projects-getProject')
  await one.locator('.opblock-summary').click()
  await one.locator('button.try-out__btn').click()
  t.equal(await one.locator('input[placeholder="id"]').inputValue(), '1', 'the id comes filled in with the example')
  await one.locator('button.execute').click()
  const read = one.locator('.live-responses-table tr.response').first()
  await read.locator('.response-col_status').waitFor({ timeout: 20_000 })
  t.equal((await read.locator('.response-col_status').innerText()).trim(), '200', 'and finds the record just created')
  t.match(await read.locator('.response-col_description').innerText(), '"Road repairs"')

  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, 'docs.png'), fullPage: false })
  t.same(outside, [], 'nothing is fetched from outside the service (no CDN)')
})
