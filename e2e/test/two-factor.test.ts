import { Secret, TOTP } from 'otpauth'
import type { Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast } from '../src/ui.js'

const PASSWORD = 'password123'

const system = await startSystem(t)
const root = await apiSession(t, system.url, 'root', '123456')
const browser = await launchBrowser(t)

/** TOTP codes as an authenticator app computes them from the key the console showed; each time-step used once. */
function authenticator (secret: string) {
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
  let last = 0
  return {
    /** A code the server has not accepted yet: this time-step's, or the next one's when this one was used. */
    next (): string {
      const step = Math.max(Math.floor(Date.now() / 30_000), last + 1)
      last = step
      return totp.generate({ timestamp: step * 30_000 })
    },
    /** Six digits that are no code of the window around now. */
    wrong (): string {
      const now = Math.floor(Date.now() / 30_000)
      const near = new Set([-2, -1, 0, 1, 2].map((d) => totp.generate({ timestamp: (now + d) * 30_000 })))
      for (let n = 123456; ; n = (n + 111_111) % 1_000_000) if (!near.has(String(n).padStart(6, '0'))) return String(n).padStart(6, '0')
    }
  }
}

async function passwordStep (page: Page, username: string): Promise<void> {
  await page.goto('/login')
  await page.locator('input[name=username]').fill(username)
  await page.locator('input[name=password]').fill(PASSWORD)
  await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
}

async function signOut (page: Page, username: string): Promise<void> {
  await page.getByRole('button', { name: username }).click()
  await page.getByRole('menuitem', { name: 'Log out' }).click()
  await page.waitForURL('**/login')
}

for (const viewport of [DESKTOP, NARROW]) {
  const w = viewport.width
  await t.test(`${w}px: set up 2FA from the QR key, sign in with a code and with a backup code, disable it behind a verification`, async (t: Test) => {
    const username = `tfa${w}`
    await root.call('POST', '/api/user/', { username, password: PASSWORD })
    const page = await openPage(t, browser, system.url, { viewport })

    await passwordStep(page, username)
    await page.waitForURL('**/token')
    await page.goto('/setting')
    const card = page.getByTestId('personal-two-factor')
    await card.getByTestId('two-factor-status').getByText('Not enabled').waitFor()
    await card.getByRole('button', { name: 'Set up' }).click()

    const setup = page.getByRole('dialog', { name: 'Set up two-factor authentication' })
    const secretField = setup.getByTestId('two-factor-secret')
    await secretField.waitFor()
    const secret = await secretField.inputValue()
    t.match(secret, /^[A-Z2-7]{32}$/, 'the key is shown for manual entry')
    const qr = setup.getByTestId('two-factor-qr')
    await qr.waitFor()
    t.match(await qr.getAttribute('src'), /^data:image\/png;base64,/, 'the QR code is drawn in the page')
    t.ok(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'and it renders')
    const backupCodes = await setup.getByTestId('backup-code').allInnerTexts()
    t.equal(backupCodes.length, 10, 'ten backup codes')
    t.match(backupCodes[0], /^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/)
    await setup.getByRole('button', { name: 'Download' }).waitFor()
    await noOverflow(t, page, `${w}px setup`)
    await screenshot(page, `two-factor-setup-${w}`)

    const app = authenticator(secret)
    await setup.getByTestId('two-factor-enable-code').fill(app.wrong())
    await setup.getByRole('button', { name: 'Enable' }).click()
    await setup.getByText('Invalid or already used verification code').waitFor()
    t.pass('a wrong code does not enable it')
    await setup.getByTestId('two-factor-enable-code').fill(app.next())
    await setup.getByRole('button', { name: 'Enable' }).click()
    await toast(page, 'success', 'Two-factor authentication is on')
    await setup.waitFor({ state: 'detached' })
    await card.getByTestId('two-factor-status').getByText('Enabled').waitFor()
    await card.getByText('Backup codes left: 10').waitFor()
    await screenshot(page, `two-factor-enabled-${w}`)

    // Password, then a wrong code, then the right one.
    await signOut(page, username)
    await passwordStep(page, username)
    const step = page.getByTestId('login-2fa')
    await step.waitFor()
    t.equal(new URL(page.url()).pathname, '/login', 'the password alone does not sign in')
    t.equal(await page.evaluate(() => localStorage.getItem('user')), null, 'no user is kept yet')
    const code = step.getByTestId('login-2fa-code')
    await code.fill(app.wrong())
    await step.getByRole('button', { name: 'Verify' }).click()
    await step.getByTestId('login-2fa-error').getByText('Invalid or already used verification code').waitFor()
    t.pass('a wrong code shows an error')
    await noOverflow(t, page, `${w}px second step`)
    await screenshot(page, `two-factor-login-${w}`)
    await code.fill(app.next())
    await step.getByRole('button', { name: 'Verify' }).click()
    await page.waitForURL((url) => url.pathname !== '/login')
    t.equal(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').username), username, 'signed in with the code')

    // Password, then a backup code.
    await signOut(page, username)
    await passwordStep(page, username)
    await step.waitFor()
    await step.getByRole('button', { name: 'Use a backup code' }).click()
    await step.getByText('Enter one of your backup codes').waitFor()
    await step.getByTestId('login-2fa-code').fill(backupCodes[0]!)
    await screenshot(page, `two-factor-login-backup-${w}`)
    await step.getByRole('button', { name: 'Verify' }).click()
    await page.waitForURL((url) => url.pathname !== '/login')
    t.pass('signed in with a backup code')

    // Disabling: a code, then the verification dialog asks for the password.
    await page.goto('/setting')
    await card.getByText('Backup codes left: 9').waitFor()
    await card.getByRole('button', { name: 'Disable' }).click()
    const disable = page.getByRole('dialog', { name: 'Disable two-factor authentication' })
    await disable.getByTestId('two-factor-disable-dialog-code').fill(backupCodes[1]!)
    await disable.getByRole('button', { name: 'Disable' }).click()
    const verify = page.getByRole('dialog', { name: 'Confirm it is you' })
    await verify.waitFor()
    t.pass('the verification dialog appears')
    await verify.getByRole('tab', { name: 'Password' }).waitFor()
    await verify.getByLabel('Your password').fill('not-my-password')
    await verify.getByRole('button', { name: 'Verify' }).click()
    await verify.getByText('Wrong password').waitFor()
    await noOverflow(t, page, `${w}px verification dialog`)
    await screenshot(page, `two-factor-verify-${w}`)
    await verify.getByLabel('Your password').fill(PASSWORD)
    await verify.getByRole('button', { name: 'Verify' }).click()
    await toast(page, 'success', 'Two-factor authentication disabled')
    await card.getByTestId('two-factor-status').getByText('Not enabled').waitFor()
    await verify.waitFor({ state: 'detached' })
    await disable.waitFor({ state: 'detached' })
    t.pass('both dialogs close')

    await signOut(page, username)
    await passwordStep(page, username)
    await page.waitForURL((url) => url.pathname !== '/login')
    t.pass('the password alone signs in again')
  })
}

await t.test('with TwoFactorRequiredForAdmins an admin is led to the setup screen first', async (t: Test) => {
  await root.call('POST', '/api/user/', { username: 'tfa_admin', password: PASSWORD, role: 10 })
  await root.call('PUT', '/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'true' })
  // Root has no 2FA either and would be refused from now on: the option goes off through the service.
  const options = system.controlPlane as unknown as { saveOptions: (values: Record<string, string>) => Promise<void> }
  t.teardown(async () => { await options.saveOptions({ TwoFactorRequiredForAdmins: 'false' }) })
  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  await passwordStep(page, 'tfa_admin')
  await page.waitForURL('**/two-factor')
  await page.getByTestId('two-factor-required').waitFor()
  await noOverflow(t, page, '600px forced setup')
  await screenshot(page, 'two-factor-required-600')
  await page.goto('/channel')
  await page.waitForURL('**/two-factor')
  t.pass('another console page leads back to the setup screen')

  await page.getByRole('button', { name: 'Set up' }).click()
  const setup = page.getByRole('dialog', { name: 'Set up two-factor authentication' })
  const secret = await setup.getByTestId('two-factor-secret').inputValue()
  await setup.getByTestId('two-factor-enable-code').fill(authenticator(secret).next())
  await setup.getByRole('button', { name: 'Enable' }).click()
  await toast(page, 'success', 'Two-factor authentication is on')
  await page.getByRole('button', { name: 'Continue to the console' }).click()
  await page.waitForURL('**/token')
  await page.goto('/channel')
  await page.getByRole('button', { name: /Add channel/ }).first().waitFor()
  t.equal(new URL(page.url()).pathname, '/channel', 'with 2FA on, the console opens')
})
