import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import type { Test } from 'tap'

/** Where screenshots for review go (gitignored). */
export const SCREENSHOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'screenshots')

export const CHROMIUM = '/usr/bin/chromium'

/** Headless Chromium from the system (never downloaded), closed at teardown; muted: the machines have no audio device and the console's song players load real audio. */
export async function launchBrowser (t: Test): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--mute-audio',
      '--disable-component-update', '--disable-sync', '--no-first-run']
  })
  t.teardown(() => browser.close())
  return browser
}

export const DESKTOP = { width: 1280, height: 800 }
export const NARROW = { width: 600, height: 900 }

/**
 * A page in a fresh context at `viewport`, with the console in `lang`. Uncaught page errors fail
 * the test: a screen that throws is broken even when the assertions pass.
 */
export async function openPage (t: Test, browser: Browser, baseURL: string, opts: { viewport?: { width: number, height: number }, lang?: 'en' | 'zh' } = {}): Promise<Page> {
  const context = await browser.newContext({ baseURL, viewport: opts.viewport ?? DESKTOP, locale: opts.lang === 'zh' ? 'zh-CN' : 'en-US' })
  // Only the first load: a language the user then picks must survive reloads.
  await context.addInitScript((lng) => { if (localStorage.getItem('i18nextLng') === null) localStorage.setItem('i18nextLng', lng) }, opts.lang ?? 'en')
  // The tests run through tsx, whose compiler keeps function names by wrapping named functions
  // in a `__name` helper; a function handed to page.evaluate runs in the page, without it.
  await context.addInitScript({ content: 'globalThis.__name ??= (fn) => fn' })
  // Waits end as soon as what they wait for shows; the bound only matters on a loaded machine,
  // where CI shares two cores with the services, Postgres and other test files.
  context.setDefaultTimeout(60_000)
  context.setDefaultNavigationTimeout(60_000)
  const page = await context.newPage()
  page.on('pageerror', (err) => { t.fail(`page error on ${page.url()}: ${err.message}`) })
  t.teardown(() => context.close())
  return page
}

/** Saves a full-page screenshot named `name` for review. */
export async function screenshot (page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true })
}

/** Signs in through the API (cookie in the page's context) and stores the user as the login page does. */
export async function signIn (page: Page, username: string, password: string): Promise<{ id: number }> {
  const res = await page.request.post('/api/user/login', { data: { username, password } })
  const body = await res.json() as { success: boolean, message: string, data: { id: number } }
  if (!body.success) throw new Error(`login as ${username} failed: ${body.message}`)
  await page.goto('/about')
  await page.evaluate((user) => { localStorage.setItem('user', JSON.stringify(user)) }, body.data)
  return body.data
}
