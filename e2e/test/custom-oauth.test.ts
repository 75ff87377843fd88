import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'
import t, { type Test } from 'tap'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast } from '../src/ui.js'

const CLIENT_ID = 'modelgate-console'
const CLIENT_SECRET = 'browser-test-client-secret-42'
const SLUGS = { [DESKTOP.width]: 'acme', [NARROW.width]: 'acme-narrow' }

/**
 * A real OpenID provider (`oidc-provider`) on 127.0.0.1 with its development login and consent
 * pages: one confidential client, PKCE required, redirect URIs on the console under test.
 */
async function startOidcProvider (t: Test, consoleUrl: string, accounts: Record<string, Record<string, unknown>>): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: Object.values(SLUGS).map((slug) => `${consoleUrl}/oauth/${slug}`),
      grant_types: ['authorization_code'],
      response_types: ['code']
    }],
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, sub) => accounts[sub] === undefined ? undefined : { accountId: sub, claims: () => ({ sub, ...accounts[sub] }) }
  })
  server.on('request', provider.callback())
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  return issuer
}

const system = await startSystem(t)
const issuer = await startOidcProvider(t, system.url, {
  alice: { name: 'Alice Liddell', preferred_username: 'alice', email: 'alice@idp.example', email_verified: true },
  bob: { name: 'Bob Builder', preferred_username: 'bob' }
})
const browser = await launchBrowser(t)
const db = system.controlPlane.db

t.test('root adds a provider with discovery in the settings, and a user signs in with it on the login page', async (t) => {
  // The redirect URI the console sends is built from ServerAddress.
  const setup = await openPage(t, browser, system.url)
  const root = await signIn(setup, 'root', '123456')
  const saved = await setup.request.put('/api/option/', { data: { key: 'ServerAddress', value: system.url }, headers: { 'new-api-user': String(root.id) } })
  t.equal((await saved.json() as { success: boolean }).success, true)

  for (const [viewport, account] of [[DESKTOP, 'alice'], [NARROW, 'bob']] as const) {
    const slug = SLUGS[viewport.width]!
    const name = viewport === DESKTOP ? 'Acme SSO' : 'Acme Mobile'

    const admin = await openPage(t, browser, system.url, { viewport })
    await signIn(admin, 'root', '123456')
    await admin.goto('/setting?tab=system')
    const card = admin.getByTestId('option-card-custom-oauth')
    await card.waitFor()
    await card.getByRole('button', { name: 'Add provider' }).click()
    const drawer = admin.getByRole('form', { name: 'Add a sign-in provider' })
    await drawer.waitFor()
    await drawer.getByRole('textbox', { name: 'Issuer URL' }).fill(issuer)
    await drawer.getByRole('button', { name: 'Discover' }).click()
    await toast(admin, 'success', 'Endpoints filled in from the discovery document')
    t.equal(await drawer.getByRole('textbox', { name: 'Token endpoint' }).inputValue(), `${issuer}/token`, `${viewport.width}px: discovery fills the token endpoint`)
    t.equal(await drawer.getByRole('textbox', { name: 'JWKS URL' }).inputValue(), `${issuer}/jwks`, `${viewport.width}px: and the JWKS URL`)
    await drawer.getByRole('textbox', { name: /^Name on the sign-in button/ }).fill(name)
    await drawer.getByRole('textbox', { name: /^Slug/ }).fill(slug)
    await drawer.getByRole('textbox', { name: /^Client ID/ }).fill(CLIENT_ID)
    await drawer.getByLabel('Client secret', { exact: true }).fill(CLIENT_SECRET)
    await noOverflow(t, admin, `${viewport.width}px provider drawer`)
    await screenshot(admin, `custom-oauth-drawer-${viewport.width}`)
    await drawer.getByRole('button', { name: 'Save' }).click()

    // Setting a client secret is a credential change: the console asks root to verify first.
    const verify = admin.getByTestId('verify-dialog')
    await verify.waitFor()
    await verify.getByTestId('verify-password').fill('123456')
    await verify.getByRole('button', { name: 'Verify' }).click()
    await toast(admin, 'success', 'Provider created')
    const row = card.getByTestId(`oauth-provider-${slug}`)
    await row.waitFor()
    t.match(await row.innerText(), new RegExp(`${name}[\\s\\S]*${system.url}/oauth/${slug}[\\s\\S]*Enabled`), `${viewport.width}px: the provider is listed with its callback`)
    await noOverflow(t, admin, `${viewport.width}px system settings`)
    await screenshot(admin, `custom-oauth-settings-${viewport.width}`)
    const stored = await db.selectFrom('custom_oauth_providers').selectAll().where('slug', '=', slug).executeTakeFirstOrThrow()
    t.notOk(stored.client_secret_encrypted.includes(CLIENT_SECRET), 'the secret is stored sealed')
    t.match(await row.innerText(), /.+/, 'the row shows')
    t.notOk((await card.innerText()).includes(CLIENT_SECRET), 'the secret never shows again')

    // A user signs in through the real login page and the provider's own pages.
    const page = await openPage(t, browser, system.url, { viewport })
    await page.goto('/login')
    const button = page.getByRole('button', { name: `Sign in with ${name}` })
    await button.waitFor()
    await noOverflow(t, page, `${viewport.width}px login with the provider's button`)
    await screenshot(page, `custom-oauth-login-${viewport.width}`)
    await button.click()
    await page.waitForURL(`${issuer}/**`)
    await page.locator('input[name=login]').fill(account)
    await page.locator('input[name=password]').fill('any password')
    await page.getByRole('button', { name: 'Sign-in' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL('**/token')
    const user = await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number, username?: string })
    t.equal(user.username, account, `${viewport.width}px: ${account} is signed in`)
    const link = await db.selectFrom('custom_oauth_links').selectAll().where('provider_id', '=', stored.id).executeTakeFirst()
    t.match(link, { user_id: user.id, subject: account }, 'the account is linked to the provider subject')

    // The personal settings show the binding.
    await page.goto('/setting')
    const binding = page.getByTestId(`binding-custom-${slug}`)
    await binding.waitFor()
    await binding.getByText(account, { exact: true }).waitFor()
    await noOverflow(t, page, `${viewport.width}px personal bindings`)
    await screenshot(page, `custom-oauth-bindings-${viewport.width}`)
    if (viewport === DESKTOP) {
      // alice has a verified e-mail to recover with, so she may unbind.
      await binding.getByRole('button', { name: 'Unbind' }).click()
      await page.getByRole('dialog').getByRole('button', { name: 'Unbind' }).click()
      await toast(page, 'success', 'Unbound')
      await binding.getByText('Not bound').waitFor()
      t.equal(await db.selectFrom('custom_oauth_links').select('id').where('provider_id', '=', stored.id).executeTakeFirst(), undefined, 'the link is gone')
    }
  }
})
