import type { Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { confirmIdentity, noOverflow, toast, until } from '../src/ui.js'

const PASSWORD = 'password123'

const system = await startSystem(t)
// WebAuthn needs a secure context and a domain as relying party ID: http://localhost is both
// (127.0.0.1 is secure but an IP address is no RP ID), so the browser opens the gateway by name.
const base = system.url.replace('127.0.0.1', 'localhost')
const root = await apiSession(t, system.url, 'root', '123456')
// The control plane sees the gateway's own upstream address as the request's host, so the RP ID
// and origin are set rather than derived (as behind any proxy that is not in TRUST_PROXY).
await root.setOptions({ PasskeyEnabled: 'true', PasskeyRPID: 'localhost', PasskeyOrigins: base })
const browser = await launchBrowser(t)

interface VirtualCredential { credentialId: string, isResidentCredential: boolean, rpId?: string, signCount: number }

/**
 * A platform authenticator inside the page's browser (Chrome DevTools protocol): CTAP2, built in,
 * holding discoverable credentials, verifying the user (as a fingerprint would) without a prompt.
 */
async function virtualAuthenticator (page: Page): Promise<{ credentials: () => Promise<VirtualCredential[]>, signatures: () => Promise<number> }> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
  })
  const credentials = async (): Promise<VirtualCredential[]> => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as VirtualCredential[]
  return { credentials, signatures: async () => (await credentials())[0]?.signCount ?? 0 }
}

async function passwordLogin (page: Page, username: string): Promise<void> {
  await page.goto('/login')
  await page.locator('input[name=username]').fill(username)
  await page.locator('input[name=password]').fill(PASSWORD)
  await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
  await page.waitForURL((url) => url.pathname !== '/login')
}

async function signOut (page: Page, username: string): Promise<void> {
  await page.getByRole('button', { name: username }).click()
  await page.getByRole('menuitem', { name: 'Log out' }).click()
  await page.waitForURL('**/login')
}

/** Adds a passkey named `name` in personal settings: the name, the password (a new credential needs a fresh verification), the authenticator. */
async function addPasskey (t: Test, page: Page, name: string, shots?: string): Promise<void> {
  await page.goto('/setting')
  const card = page.getByTestId('personal-passkeys')
  const dialog = page.getByRole('dialog', { name: 'Add a passkey' })
  // A click while the page is still loading its settings can be lost on a loaded machine: clicked
  // again until the dialog shows.
  await until(async () => {
    if (await dialog.isVisible()) return true
    await card.getByRole('button', { name: 'Add a passkey' }).click()
    return await dialog.waitFor({ timeout: 5_000 }).then(() => true, () => false)
  }, 60_000)
  await dialog.getByLabel('Name').fill(name)
  if (shots !== undefined) {
    await noOverflow(t, page, `${shots} add dialog`)
    await screenshot(page, `passkey-add-${shots}`)
  }
  await dialog.getByRole('button', { name: 'Continue' }).click()
  await confirmIdentity(page, PASSWORD)
  await toast(page, 'success', 'Passkey added')
  await dialog.waitFor({ state: 'detached' })
  await card.getByTestId('passkey-row').filter({ hasText: name }).waitFor()
}

for (const viewport of [DESKTOP, NARROW]) {
  const w = viewport.width
  await t.test(`${w}px: add a passkey in personal settings, sign out, sign in with it from the login page, remove it through the verification dialog`, async (t: Test) => {
    const username = `pk${w}`
    const { id } = await root.call<{ id: number }>('POST', '/api/user/', { username, password: PASSWORD })
    const page = await openPage(t, browser, base, { viewport })
    const authenticator = await virtualAuthenticator(page)

    await passwordLogin(page, username)
    await page.goto('/setting')
    const card = page.getByTestId('personal-passkeys')
    await card.getByTestId('passkey-empty').waitFor()
    t.pass('no passkey yet')
    await addPasskey(t, page, `Laptop ${w}`, String(w))

    const held = await authenticator.credentials()
    t.equal(held.length, 1, 'the authenticator holds one credential')
    t.equal(held[0]?.isResidentCredential, true, 'discoverable (no username needed to use it)')
    t.equal(held[0]?.rpId, 'localhost', 'for the configured RP ID')
    const stored = await root.call<{ items: Array<{ name: string, last_used_at: number | null }> }>('GET', `/api/user/${id}/passkey`)
    t.match(stored.items, [{ name: `Laptop ${w}`, last_used_at: null }], 'the server keeps it under its name')
    const row = card.getByTestId('passkey-row').filter({ hasText: `Laptop ${w}` })
    const registered = await authenticator.signatures()
    await row.getByText('never used').waitFor()
    await noOverflow(t, page, `${w}px passkeys card`)
    await card.scrollIntoViewIfNeeded()
    await screenshot(page, `passkey-settings-${w}`)

    // The login page: no username, no password.
    await signOut(page, username)
    const button = page.getByRole('button', { name: 'Sign in with a passkey' })
    await button.waitFor()
    await noOverflow(t, page, `${w}px login page`)
    await screenshot(page, `passkey-login-${w}`)
    await button.click()
    await page.waitForURL((url) => url.pathname !== '/login')
    t.equal(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').username), username, 'signed in with the passkey')
    t.equal(await authenticator.signatures(), registered + 1, 'the authenticator signed once')

    await page.goto('/setting')
    await row.getByText(/last used/).waitFor()
    t.pass('the card shows when it was last used')

    // Removing needs a fresh verification: this session signed in by passkey and is not verified.
    await row.getByRole('button', { name: `Remove passkey Laptop ${w}` }).click()
    await page.getByRole('dialog', { name: 'Remove passkey' }).getByRole('button', { name: 'Remove' }).click()
    const verify = page.getByRole('dialog', { name: 'Confirm it is you' })
    const usePasskey = verify.getByRole('button', { name: 'Use a passkey' })
    await usePasskey.waitFor()
    await verify.getByLabel('Your password').waitFor()
    t.pass('the verification dialog offers the passkey beside the password')
    await noOverflow(t, page, `${w}px verification dialog`)
    await screenshot(page, `passkey-verify-${w}`)
    await usePasskey.click()
    await toast(page, 'success', 'Passkey removed')
    await verify.waitFor({ state: 'detached' })
    await card.getByTestId('passkey-empty').waitFor()
    t.same((await root.call<{ items: unknown[] }>('GET', `/api/user/${id}/passkey`)).items, [], 'gone on the server')
    t.equal(await authenticator.signatures(), registered + 2, 'verified by the passkey itself')

    // The authenticator still holds the key; the site no longer accepts it.
    await signOut(page, username)
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    t.match(await toast(page, 'error', 'This passkey is not registered here'), /sign in another way/)
    t.equal(new URL(page.url()).pathname, '/login', 'still on the login page')
    t.equal(await page.evaluate(() => localStorage.getItem('user')), null, 'nobody signed in')
  })

  await t.test(`${w}px: the super admin sees the passkey options and resets a user's passkeys from the user editor`, async (t: Test) => {
    const username = `pkr${w}`
    const { id } = await root.call<{ id: number }>('POST', '/api/user/', { username, password: PASSWORD })
    const userPage = await openPage(t, browser, base, { viewport })
    await virtualAuthenticator(userPage)
    await passwordLogin(userPage, username)
    await addPasskey(t, userPage, 'Phone')

    const admin = await openPage(t, browser, base, { viewport })
    await signIn(admin, 'root', '123456')
    await admin.goto('/setting?tab=system')
    const options = admin.getByTestId('option-card-passkey')
    t.equal(await options.getByLabel('Relying party ID').inputValue(), 'localhost')
    t.equal(await options.getByLabel('Allowed origins').inputValue(), base)
    t.ok(await options.getByLabel(/Allow passkeys/).isChecked(), 'switched on')
    await noOverflow(t, admin, `${w}px passkey options`)
    await options.scrollIntoViewIfNeeded()
    await screenshot(admin, `passkey-options-${w}`)

    await admin.goto(`/user/edit/${id}`)
    const section = admin.getByRole('form', { name: 'Edit user' }).getByTestId('user-passkey-section')
    await section.getByText('Passkeys: 1').waitFor()
    await section.getByRole('button', { name: 'Reset passkeys' }).click()
    const confirm = admin.getByRole('dialog', { name: 'Reset passkeys' })
    await confirm.getByText(`Remove every passkey of ${username}`).waitFor()
    await noOverflow(t, admin, `${w}px reset dialog`)
    await screenshot(admin, `passkey-reset-${w}`)
    await confirm.getByRole('button', { name: 'Reset passkeys' }).click()
    await toast(admin, 'success', 'Passkeys reset')
    await section.getByText('No passkey').waitFor()
    t.same((await root.call<{ items: unknown[] }>('GET', `/api/user/${id}/passkey`)).items, [], 'gone on the server')

    // The user was signed out everywhere, and the passkey no longer signs in.
    await userPage.goto('/setting')
    await userPage.waitForURL((url) => url.pathname === '/login' && url.searchParams.get('expired') === 'true')
    await userPage.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await toast(userPage, 'error', 'This passkey is not registered here')
    t.pass('the reset passkey is refused')
  })
}
