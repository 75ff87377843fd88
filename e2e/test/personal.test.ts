import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTestSmtpServer } from '@modelgate/mail/testing'
import t, { type Test } from 'tap'
import { apiContext, apiSession, type Envelope, login } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { smtpOptions } from '../src/mail.js'
import { startSystem } from '../src/system.js'
import { confirmIdentity, noOverflow, toast } from '../src/ui.js'

const PASSWORD = 'password123'

/** A login outside the browser, as it is answered. */
async function tryLogin (t: Test, username: string, password: string): Promise<Envelope<{ id: number }>> {
  return await login(await apiContext(t, system.url), username, password)
}

/**
 * GitHub's token endpoint and user API on 127.0.0.1 for client gh-client/gh-secret; `code(id)`
 * hands out a single-use code as GitHub's authorize page would.
 */
async function fakeGitHub (t: Test) {
  const codes = new Map<string, number>()
  const tokens = new Map<string, number>()
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.url === '/login/oauth/access_token') {
        const form = new URLSearchParams(body)
        const id = codes.get(form.get('code') ?? '')
        codes.delete(form.get('code') ?? '')
        if (id === undefined || form.get('client_id') !== 'gh-client' || form.get('client_secret') !== 'gh-secret') {
          res.end(JSON.stringify({ error: 'bad_verification_code' }))
          return
        }
        const token = randomBytes(12).toString('hex')
        tokens.set(token, id)
        res.end(JSON.stringify({ access_token: token, token_type: 'bearer' }))
        return
      }
      const id = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''))
      if (req.url !== '/user' || id === undefined) {
        res.statusCode = 401
        res.end(JSON.stringify({ message: 'Bad credentials' }))
        return
      }
      res.end(JSON.stringify({ id, login: `octo${id}`, name: 'Octo', email: null }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    code (id: number): string {
      const code = randomBytes(8).toString('hex')
      codes.set(code, id)
      return code
    }
  }
}

const smtp = await startTestSmtpServer()
t.teardown(() => smtp.close())
const github = await fakeGitHub(t)
const system = await startSystem(t, { GITHUB_OAUTH_URL: github.url, GITHUB_API_URL: github.url })
const browser = await launchBrowser(t)
const root = await apiSession(t, system.url, 'root', '123456')
const db = system.controlPlane.db
await root.setOptions({
  ...smtpOptions(smtp),
  GitHubClientId: 'gh-client',
  GitHubClientSecret: 'gh-secret',
  GitHubOAuthEnabled: 'true'
})
// The models the personal tab lists come from the abilities of the user's group.
await root.call('POST', '/api/channel/', { name: 'models only', type: 1, key: 'sk-unused', base_url: 'http://127.0.0.1:9', models: 'gpt-4o-mini,text-embedding-3-small', groups: 'default' })

const userRow = async (username: string) => await db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirstOrThrow()

t.test('the personal tab at both widths: profile, access token, invitations, email, password, deletion', async (t) => {
  for (const viewport of [DESKTOP, NARROW]) {
    const w = viewport.width
    const username = `me${w}`
    await root.call('POST', '/api/user/', { username, password: PASSWORD })
    // Rewards from earlier invitations, waiting to be transferred.
    await db.updateTable('users').set({ aff_quota: 2_000_000, aff_history_quota: 2_500_000, aff_count: 3, quota: 100_000 }).where('username', '=', username).execute()

    const page = await openPage(t, browser, system.url, { viewport })
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url })
    const { id } = await signIn(page, username, PASSWORD)
    await page.goto('/setting')
    await page.getByTestId('profile-username').getByText(username).waitFor()
    t.equal(await page.getByRole('tab').count(), 0, `${w}px: an ordinary user sees no admin tabs`)

    // Display name.
    await page.getByRole('button', { name: 'Edit display name' }).click()
    await page.getByRole('textbox', { name: 'Display name' }).fill(`Shown ${w}`)
    await page.getByRole('button', { name: 'Save' }).click()
    await toast(page, 'success', 'User info updated')
    await page.getByTestId('profile-display-name').getByText(`Shown ${w}`).waitFor()
    t.equal((await userRow(username)).display_name, `Shown ${w}`, `${w}px: the display name is saved`)

    // Models of the user's group.
    const models = page.getByTestId('personal-models')
    await models.getByRole('button', { name: 'gpt-4o-mini' }).waitFor()
    await models.getByRole('button', { name: 'text-embedding-3-small' }).waitFor()

    // Access token: generated, shown, copied, and it works with New-Api-User.
    await page.getByRole('button', { name: 'Generate a new token' }).click()
    await toast(page, 'success', 'Token reset and copied')
    const token = await page.getByTestId('access-token').inputValue()
    t.match(token, /^\S{20,}$/, `${w}px: the new access token is shown`)
    t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), token, 'and it is on the clipboard')
    const outside = await apiContext(t, system.url)
    const self = await (await outside.get('/api/user/self', { headers: { authorization: token, 'new-api-user': String(id) } })).json() as Envelope<{ username: string }>
    t.ok(self.success, 'the access token authenticates GET /api/user/self')
    t.equal(self.data.username, username)

    // Invitations: the link carries the user's code; a transfer moves aff_quota into quota.
    const code = (await userRow(username)).aff_code
    t.equal(await page.getByTestId('aff-link').inputValue(), `${system.url}/register?aff=${code}`, `${w}px: the invite link names the user's code`)
    const amount = page.getByRole('spinbutton', { name: 'Amount (quota units)' })
    t.equal(await amount.inputValue(), '2000000', 'the amount starts at everything there is to transfer')
    await amount.fill('100')
    await page.getByRole('button', { name: 'Transfer to balance' }).click()
    await toast(page, 'warning', 'must be at least')
    await amount.fill('1500000')
    await page.getByRole('button', { name: 'Transfer to balance' }).click()
    await toast(page, 'success', 'Transferred')
    const moved = await userRow(username)
    t.same({ aff_quota: moved.aff_quota, quota: moved.quota }, { aff_quota: 500_000, quota: 1_600_000 }, `${w}px: the transfer moved 1500000 from aff_quota to quota`)
    // Quota shows in dollars by default (500000 units per dollar).
    await page.getByTestId('aff-quota').getByText('$1.00').waitFor()

    // Email: a code is mailed, then binds the address.
    const email = `me${w}@example.test`
    await page.getByTestId('binding-email').getByRole('button', { name: 'Bind' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Bind' }).click()
    await toast(page, 'warning', 'Please enter the email address')
    await dialog.getByRole('textbox', { name: 'Email address' }).fill(email)
    await dialog.getByRole('button', { name: 'Send code' }).click()
    await toast(page, 'success', 'Verification code sent')
    await dialog.getByRole('button', { name: /^Resend \(\d+\)$/ }).waitFor()
    t.ok(await dialog.getByRole('button', { name: /^Resend/ }).isDisabled(), `${w}px: the code cannot be resent during the cooldown`)
    const mail = smtp.lastTo(email)
    const mailed = /code is:?\s*(\S+)/.exec(mail?.text ?? '')?.[1]
    t.ok(mailed, 'the verification mail carries a code')
    await dialog.getByRole('textbox', { name: 'Verification code' }).fill(mailed ?? '')
    await screenshot(page, `personal-email-${w}`)
    await dialog.getByRole('button', { name: 'Bind' }).click()
    // Changing the email needs a fresh secure verification: the dialog asks for the password, then the binding goes on.
    await confirmIdentity(page, PASSWORD)
    await toast(page, 'success', 'Email bound')
    await page.getByTestId('binding-email').getByText(email).waitFor()
    t.equal((await userRow(username)).email, email, `${w}px: the email is bound`)

    await screenshot(page, `personal-${w}`)
    await noOverflow(t, page, `personal tab ${w}px`)

    // Password: mismatch refused; then changed, and the session goes on.
    const newPassword = `changed${w}pw`
    const passwordCard = page.getByTestId('personal-password')
    await passwordCard.getByLabel('Current password').fill(PASSWORD)
    await passwordCard.getByLabel('New password', { exact: false }).first().fill(newPassword)
    await passwordCard.getByLabel('Confirm the new password').fill('something-else')
    await passwordCard.getByRole('button', { name: 'Change password' }).click()
    await toast(page, 'warning', 'The two passwords differ')
    await passwordCard.getByLabel('Confirm the new password').fill(newPassword)
    await passwordCard.getByRole('button', { name: 'Change password' }).click()
    // No second dialog: the verification given for the email lasts five minutes.
    await toast(page, 'success', 'Password changed')
    await page.reload()
    await page.getByTestId('profile-username').getByText(username).waitFor()
    t.equal(new URL(page.url()).pathname, '/setting', `${w}px: the session continues after the password change`)
    t.ok((await tryLogin(t, username, newPassword)).success, 'the new password logs in')
    t.notOk((await tryLogin(t, username, PASSWORD)).success, 'the old one no longer does')

    // Deletion: only with the user's own name typed.
    await page.getByRole('button', { name: 'Delete my account' }).click()
    const confirm = page.getByRole('dialog')
    await confirm.getByRole('textbox', { name: 'Your username' }).fill('someone-else')
    await confirm.getByRole('button', { name: 'Delete for good' }).click()
    await toast(page, 'warning', 'enter your account name')
    t.equal((await userRow(username)).deleted_at, null, 'a wrong name deletes nothing')
    await confirm.getByRole('textbox', { name: 'Your username' }).fill(username)
    await screenshot(page, `personal-delete-${w}`)
    await confirm.getByRole('button', { name: 'Delete for good' }).click()
    await page.waitForURL('**/login')
    t.ok((await userRow(username)).deleted_at !== null, `${w}px: the account is marked deleted`)
    t.notOk((await tryLogin(t, username, newPassword)).success, 'a deleted account cannot log in')
  }
})

t.test('binds a GitHub account through the authorize page and the callback page', async (t) => {
  await root.call('POST', '/api/user/', { username: 'ghbinder', password: PASSWORD })
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'ghbinder', PASSWORD)
  // GitHub's authorize page: approve at once and send the browser back with a code and the state.
  let clientId: string | null = null
  await page.route('https://github.com/login/oauth/authorize**', async (route) => {
    const asked = new URL(route.request().url())
    clientId = asked.searchParams.get('client_id')
    const back = new URLSearchParams({ code: github.code(4242), state: asked.searchParams.get('state') ?? '' })
    await route.fulfill({ status: 302, headers: { location: `${system.url}/oauth/github?${back.toString()}` } })
  })
  await page.goto('/setting')
  const row = page.getByTestId('binding-github')
  await row.getByText('Not bound').waitFor()
  await row.getByRole('button', { name: 'Bind' }).click()
  await page.waitForURL('**/oauth/github?**')
  await page.waitForURL('**/setting')
  await row.getByText('4242').waitFor()
  t.equal(clientId, 'gh-client', 'the authorize page is asked for the configured client')
  t.equal((await userRow('ghbinder')).github_id, '4242', 'the GitHub account is bound')
  t.equal(await row.getByRole('button').count(), 0, 'a bound GitHub account offers no second binding')
})

t.test('the super admin gets the operation, system and other tabs by ?tab=', async (t) => {
  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  await signIn(page, 'root', '123456')
  await page.goto('/setting')
  await page.getByTestId('profile-username').getByText('root').waitFor()
  for (const name of ['Personal', 'Operation', 'System', 'Other']) await page.getByRole('tab', { name }).waitFor()
  await page.getByRole('tab', { name: 'System' }).click()
  await page.waitForURL('**/setting?tab=system')
  await page.getByRole('tab', { name: 'System', selected: true }).waitFor()
  t.pass('the tab follows ?tab=')
  await page.goto('/setting?tab=other')
  await page.getByRole('tab', { name: 'Other', selected: true }).waitFor()
  t.pass('a link to ?tab=other opens that tab')
  t.equal(await page.getByRole('button', { name: 'Delete my account' }).count(), 0, 'the super admin cannot delete the account, so it is not offered')
  await noOverflow(t, page, 'settings tabs 600px')
})
