import { request } from 'playwright-core'
import t, { type Test } from 'tap'
import { apiSession, type Envelope } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast, until } from '../src/ui.js'

const PASSWORD = 'password123'
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

const system = await startSystem(t)
const browser = await launchBrowser(t)
const root = await apiSession(t, system.url, 'root', '123456')

/** `username` signed in from another device with `userAgent`; `status()` is what its next console call gets. */
async function otherDevice (t: Test, username: string, userAgent: string) {
  const ctx = await request.newContext({ baseURL: system.url, extraHTTPHeaders: { 'accept-language': 'en', 'user-agent': userAgent } })
  t.teardown(() => ctx.dispose())
  const answer = await (await ctx.post('/api/user/login', { data: { username, password: PASSWORD } })).json() as Envelope<{ id: number }>
  if (!answer.success) throw new Error(`login failed: ${answer.message}`)
  return { status: async () => (await ctx.get('/api/user/self', { headers: { 'new-api-user': String(answer.data.id) } })).status() }
}

for (const [viewport, width] of [[DESKTOP, 1280], [NARROW, 600]] as const) {
  await t.test(`at ${width} px a user sees where they are signed in and signs the other sessions out`, async (t) => {
    const username = `away${width}`
    t.equal((await root.send('POST', '/api/user/', { username, password: PASSWORD })).success, true)
    const phone = await otherDevice(t, username, SAFARI_IPHONE)
    const laptop = await otherDevice(t, username, CHROME_WINDOWS)
    const page = await openPage(t, browser, system.url, { viewport })
    await signIn(page, username, PASSWORD)
    await page.goto('/setting')
    const card = page.getByTestId('personal-sessions')
    const rows = card.getByTestId('session-row')
    await until(async () => await rows.count() === 3)

    const current = card.locator('[data-testid="session-row"][data-current="true"]')
    t.equal(await current.count(), 1, 'one session is this device')
    await current.getByText('This device').waitFor()
    t.match(await current.textContent(), /Chrome \d+ on Linux/, 'named by its browser and system')
    t.match(await current.textContent(), /Address 127\.0\.0\.1 · signed in \d{4}-\d\d-\d\d \d\d:\d\d:\d\d · last seen \d{4}-\d\d-\d\d/, 'with its address and times')
    t.equal(await current.getByRole('button', { name: /^Sign out/ }).count(), 0, 'this session is not offered for revocation (logout is)')
    await card.getByText('Safari 17 on iPhone').waitFor()
    await card.getByText('Chrome 131 on Windows').waitFor()
    await noOverflow(t, page, `${width}px sessions card`)
    const box = await card.boundingBox()
    t.ok(box !== null && box.x >= 0 && box.x + box.width <= viewport.width, 'the card fits the window')
    await card.scrollIntoViewIfNeeded()
    await screenshot(page, `personal-sessions-${width}`)

    await card.getByRole('button', { name: 'Sign out Safari 17 on iPhone' }).click()
    await toast(page, 'success', 'Session signed out')
    await until(async () => await rows.count() === 2)
    t.equal(await card.getByText('Safari 17 on iPhone').count(), 0, 'the revoked session leaves the list')
    t.equal(await phone.status(), 401, 'and the phone is signed out')
    t.equal(await laptop.status(), 200, 'the laptop is not')

    await card.getByRole('button', { name: 'Sign out all other sessions' }).click()
    const dialog = page.getByRole('dialog', { name: 'Sign out every other session?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Sign out all other sessions' }).click()
    await toast(page, 'success', '1 other sessions signed out')
    await until(async () => await rows.count() === 1)
    t.equal(await laptop.status(), 401, 'every other session is signed out')
    t.equal(await card.getByRole('button', { name: 'Sign out all other sessions' }).isDisabled(), true, 'nothing else to sign out')

    await page.reload()
    await card.locator('[data-testid="session-row"][data-current="true"]').getByText('This device').waitFor()
    t.equal(new URL(page.url()).pathname, '/setting', 'this browser stays signed in')
  })
}
