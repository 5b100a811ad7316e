/**
 * `/docs` in a real browser with the network off: Debian's headless Chromium loads the page from
 * the running service; every request to any other host is aborted and recorded, and none may
 * happen. The operations list must be rendered from /openapi.json and the bundle served here.
 * The page's Content-Security-Policy must refuse nothing the page needs.
 * The screenshot is written to .data/screenshots/docs.png (git-ignored) and its path printed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import { ROOT } from '../helpers/processes'
import { startService, type RunningService } from '../helpers/running-service'

const CHROMIUM = '/usr/bin/chromium'
const SCREENSHOT = join(ROOT, '.data/screenshots/docs.png')

let service: RunningService
let browser: BrowserContext | undefined
let profile: string

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM}: the /docs browser test needs Debian's package (apt-get install -y chromium)`)
  service = await startService()
  profile = await mkdtemp(join(tmpdir(), 'chromium-profile-'))
  // A persistent context is the only way playwright takes a user data dir; a fresh one per run.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // Below the interception: no name but the service's address resolves at all.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
  if (profile) await rm(profile, { recursive: true, force: true })
}, 30_000)

describe('/docs in headless Chromium, offline', () => {
  test('renders every operation from the service alone, with no request to another host', async () => {
    const origin = new URL(service.baseUrl).origin
    const local: string[] = []
    const foreign: string[] = []
    const failed: string[] = []
    await browser!.route('**/*', (route) => {
      const url = route.request().url()
      if (new URL(url).origin === origin) {
        local.push(new URL(url).pathname)
        return route.continue()
      }
      foreign.push(url)
      return route.abort('internetdisconnected')
    })
    const page = await browser!.newPage()
    page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText}`))
    const pageErrors: string[] = []
    page.on('pageerror', (e) => pageErrors.push(String(e)))
    // The page's Content-Security-Policy (contract §15 §6) must refuse nothing it needs.
    const refused: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text())
    })

    const res = await page.goto(`${service.baseUrl}/docs`, { waitUntil: 'load' })
    expect(res?.status()).toBe(200)

    const doc: any = await (await fetch(`${service.baseUrl}/openapi.json`)).json()
    const summaries: string[] = Object.values<any>(doc.paths)
      .flatMap((item) => Object.values<any>(item).map((op) => op.summary))
      .filter(Boolean)
    expect(summaries.length).toBeGreaterThan(40)
    // Every tag is open (defaultOpenAllTags), so the sidebar lists every operation by its summary.
    const sidebar = page.locator('.sidebar, [class*="sidebar"]').first()
    await sidebar
      .getByText(summaries[summaries.length - 1], { exact: true })
      .first()
      .waitFor({ timeout: 45_000 })
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText() is the rendered text the reader sees; textContent() would count hidden text
    const text = await page.locator('body').innerText()
    const missing = summaries.filter((s) => !text.includes(s))
    expect(missing).toEqual([])
    expect(text).toContain(doc.info.title)
    // The contract version served (CHANGELOG.md), as the document names it.
    expect(doc.info.version).toBe('1.2.0')
    expect(text).toContain(doc.info.version)

    await mkdir(join(ROOT, '.data/screenshots'), { recursive: true })
    await page.screenshot({ path: SCREENSHOT })
    console.log(`/docs screenshot: ${SCREENSHOT}`)

    expect(foreign).toEqual([])
    expect(failed).toEqual([])
    expect(pageErrors).toEqual([])
    expect(refused).toEqual([])
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'")
    expect(local).toContain('/openapi.json')
    expect(local).toContain('/docs/init.js')
    expect(local.filter((p) => p.startsWith('/docs/assets/'))).toHaveLength(1)
  }, 90_000)
})
