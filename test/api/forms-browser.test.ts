/**
 * The example landing page (examples/landing-form/index.html) in a real browser: Debian's
 * headless Chromium, the page served by a second local listener (another origin than the API).
 * From an origin the publishable key lists, the page submits (CORS preflight, JSON, an
 * Idempotency-Key) and the lead exists; a 422 shows next to its field; from an unlisted origin
 * the submission fails in the page and nothing is stored; with JavaScript off, the <noscript>
 * form posts the plain form and the browser lands on the thank-you page.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { ROOT } from '../helpers/processes'
import { seedBusiness, type SeededBusiness } from '../helpers/context'
import { publishableKey, stored } from '../helpers/forms'
import { startService, type RunningService } from '../helpers/running-service'

const CHROMIUM = '/usr/bin/chromium'
const PAGE = join(ROOT, 'examples/landing-form/index.html')

let service: RunningService
let browser: Browser
let biz: SeededBusiness
let listed: ReturnType<typeof Bun.serve>
let unlisted: ReturnType<typeof Bun.serve>
const origin = (s: ReturnType<typeof Bun.serve>) => `http://127.0.0.1:${s.port}`

/** A static site serving the example with its three CHANGE values filled in, and a thank-you page. */
function site(page: () => string) {
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const path = new URL(request.url).pathname
      if (path === '/') return new Response(page(), { headers: { 'content-type': 'text/html; charset=utf-8' } })
      if (path === '/gracias.html')
        return new Response('<!doctype html><title>Gracias</title><h1>¡Gracias por escribirnos!</h1>', {
          headers: { 'content-type': 'text/html; charset=utf-8' },
        })
      return new Response('not found', { status: 404 })
    },
  })
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM}: the landing-form browser test needs Debian's package (apt-get install -y chromium)`)
  service = await startService()
  biz = await seedBusiness(service.ctx)
  const html = await Bun.file(PAGE).text()
  // Filled at request time: the key names the listed site's origin, known once it listens.
  let key = ''
  let thanks = ''
  const page = () =>
    html
      .replaceAll('https://api.example.com', service.baseUrl)
      .replaceAll(/AC_PUB_x+\.x+/g, key)
      .replaceAll('https://landing.example.com/gracias.html', thanks)
  listed = site(page)
  unlisted = site(page)
  key = (await publishableKey(service.ctx, biz.id, { origins: [origin(listed)], ratePerIp: '100/min' })).apiKey
  // Both sites send a visitor without JavaScript to the listed site's thank-you page (the only origin the key has).
  thanks = `${origin(listed)}/gracias.html`
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  listed?.stop(true)
  unlisted?.stop(true)
  await service?.close()
}, 30_000)

async function leadByEmail(email: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${service.baseUrl}/v1/leads?email=${encodeURIComponent(email)}`, { headers: { 'x-api-key': biz.apiKey } })
  return ((await res.json()) as { data: Record<string, unknown>[] }).data
}

async function fillJs(page: Page, fields: { name: string; email?: string; phone?: string; message: string }) {
  await page.fill('#name', fields.name)
  if (fields.email) await page.fill('#email', fields.email)
  if (fields.phone) await page.fill('#phone', fields.phone)
  await page.fill('#message', fields.message)
}

describe('examples/landing-form/index.html in Chromium', () => {
  test('from a listed origin: the page submits and the lead exists', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const requests: string[] = []
    page.on(
      'request',
      (r) => r.url().startsWith(service.baseUrl) && requests.push(`${r.method()} ${new URL(r.url()).pathname} ${r.headers()['idempotency-key'] ?? ''}`),
    )
    await page.goto(`${origin(listed)}/`)
    const email = `browser.${Date.now()}@example.com`
    await fillJs(page, { name: 'Lucía Navegador', email, message: 'Quiero visitar el piso.' })
    await page.click('button[type=submit]')
    await page.locator('#status.sent').waitFor({ timeout: 15_000 })
    expect(await page.textContent('#status')).toContain('Gracias')
    const leads = await leadByEmail(email)
    expect(leads).toHaveLength(1)
    expect(leads[0]).toMatchObject({ name: 'Lucía Navegador', source: 'landing-contacto' })
    expect(requests.some((r) => /^POST \/v1\/leads\/inquiries [0-9a-f-]{36}$/.test(r))).toBe(true)
    await context.close()
  }, 60_000)

  test('a 422 shows next to its field, and nothing is stored', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${origin(listed)}/`)
    const before = await stored(service.ctx, biz.id)
    await fillJs(page, { name: 'Ana', phone: '12', message: 'Hola' })
    await page.click('button[type=submit]')
    await page.locator('#status.failed').waitFor({ timeout: 15_000 })
    expect((await page.textContent('[data-error-for="contact.phone"]'))?.trim()).not.toBe('')
    expect(await page.getAttribute('#phone', 'aria-invalid')).toBe('true')
    expect(await stored(service.ctx, biz.id)).toEqual(before)
    await context.close()
  }, 60_000)

  test('from an unlisted origin: the submission fails in the page and nothing is stored', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const consoleErrors: string[] = []
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()))
    await page.goto(`${origin(unlisted)}/`)
    const before = await stored(service.ctx, biz.id)
    const email = `stranger.${Date.now()}@example.com`
    await fillJs(page, { name: 'Desde otro sitio', email, message: 'Hola' })
    await page.click('button[type=submit]')
    await page.locator('#status.failed').waitFor({ timeout: 15_000 })
    expect(await page.textContent('#status')).toContain('No se pudo enviar')
    expect(consoleErrors.join('\n')).toContain('CORS')
    expect(await leadByEmail(email)).toEqual([])
    expect(await stored(service.ctx, biz.id)).toEqual(before)
    await context.close()
  }, 60_000)

  test('with JavaScript off, the <noscript> form lands on the thank-you page and the lead exists', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(`${origin(listed)}/`)
    expect(await page.isVisible('#inquiry')).toBe(false)
    const email = `noscript.${Date.now()}@example.com`
    await page.fill('#ns-name', 'Sin JavaScript')
    await page.fill('#ns-email', email)
    await page.fill('#ns-message', 'Llamadme, por favor.')
    await Promise.all([
      page.waitForURL(`${origin(listed)}/gracias.html`, { timeout: 15_000 }),
      page.click('noscript form button[type=submit], form[method=post] button[type=submit]'),
    ])
    expect(await page.textContent('h1')).toContain('Gracias')
    const leads = await leadByEmail(email)
    expect(leads).toHaveLength(1)
    expect(leads[0]).toMatchObject({ name: 'Sin JavaScript', source: 'landing-contacto' })
    await context.close()
  }, 60_000)
})
