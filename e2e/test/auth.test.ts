import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTestSmtpServer } from '@modelgate/mail/testing'
import t, { type Test } from 'tap'
import { apiSession, type Envelope } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot } from '../src/browser.js'
import { smtpOptions } from '../src/mail.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast } from '../src/ui.js'

const PASSWORD = 'password123'

/** A real HTTP server on 127.0.0.1, closed at teardown. */
async function fakeServer (t: Test, handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => { handle(req, Buffer.concat(chunks).toString(), res) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function sendJson (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
  res.end(JSON.stringify(body))
}

interface GitHubProfile { id: number, login: string, name: string }

/** GitHub's token endpoint and REST API: single-use codes for client gh-client/gh-secret. */
async function fakeGitHub (t: Test) {
  const codes = new Map<string, GitHubProfile>()
  const tokens = new Map<string, GitHubProfile>()
  const oauthUrl = await fakeServer(t, (req, body, res) => {
    const form = new URLSearchParams(body)
    const profile = codes.get(form.get('code') ?? '')
    codes.delete(form.get('code') ?? '')
    if (req.url !== '/login/oauth/access_token' || form.get('client_id') !== 'gh-client' || form.get('client_secret') !== 'gh-secret' || profile === undefined) {
      return sendJson(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' })
    }
    const token = `gho_${randomBytes(12).toString('hex')}`
    tokens.set(token, profile)
    sendJson(res, 200, { access_token: token, token_type: 'bearer', scope: 'user:email' })
  })
  const apiUrl = await fakeServer(t, (req, _body, res) => {
    const profile = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''))
    if (req.url !== '/user' || profile === undefined) return sendJson(res, 401, { message: 'Bad credentials' })
    sendJson(res, 200, { ...profile, email: null })
  })
  return {
    oauthUrl,
    apiUrl,
    /** A fresh code for `profile`, as GitHub's authorize page would hand it out. */
    code (profile: GitHubProfile): string {
      const code = randomBytes(10).toString('hex')
      codes.set(code, profile)
      return code
    }
  }
}

/** A WeChat login server (the WeChatServerAddress protocol) that knows one code, and the QR image. */
async function fakeWeChat (t: Test, code: string, openid: string): Promise<string> {
  return await fakeServer(t, (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname === '/qr.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' })
      return res.end('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><rect width="200" height="200" fill="#333"/></svg>')
    }
    if (url.pathname !== '/api/wechat/user' || req.headers.authorization !== 'wx-token') return sendJson(res, 401, { success: false, message: 'unauthorized' })
    if (url.searchParams.get('code') !== code) return sendJson(res, 200, { success: false, message: 'invalid code' })
    sendJson(res, 200, { success: true, message: '', data: openid })
  })
}

/** Cloudflare's siteverify: passes the tokens the fake widget below hands out, remembering each. */
async function fakeSiteverify (t: Test) {
  const seen: string[] = []
  const url = await fakeServer(t, (_req, body, res) => {
    const form = new URLSearchParams(body)
    seen.push(form.get('response') ?? '')
    sendJson(res, 200, { success: form.get('secret') === 'ts-secret' && (form.get('response') ?? '').startsWith('tok-') })
  })
  return { url, seen }
}

/** Stands in for Cloudflare's api.js: a checkbox that yields tok-1, tok-2, ... (reset solves again). */
const FAKE_TURNSTILE = `
let n = 0
window.turnstile = {
  render (el, opts) {
    const b = document.createElement('button')
    b.type = 'button'
    b.textContent = 'I am human (' + opts.sitekey + ')'
    b.onclick = () => { opts.callback('tok-' + (++n)) }
    el.appendChild(b)
    window.__turnstileOpts = opts
    return 'widget-1'
  },
  reset () { setTimeout(() => { window.__turnstileOpts.callback('tok-' + (++n)) }, 0) },
  remove () {}
}`

/** Telegram's widget fields for `id`, signed with the bot token as Telegram signs them. */
function telegramFields (botToken: string, id: string): Record<string, string> {
  const fields: Record<string, string> = { id, first_name: 'Tele', last_name: 'Gram', username: 'telegram_user', auth_date: String(Math.floor(Date.now() / 1000)) }
  const check = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join('\n')
  const secret = createHash('sha256').update(botToken).digest()
  return { ...fields, hash: createHmac('sha256', secret).update(check).digest('hex') }
}

const smtp = await startTestSmtpServer()
t.teardown(() => smtp.close())
const github = await fakeGitHub(t)
const siteverify = await fakeSiteverify(t)
const system = await startSystem(t, { GITHUB_OAUTH_URL: github.oauthUrl, GITHUB_API_URL: github.apiUrl, TURNSTILE_VERIFY_URL: siteverify.url })
const browser = await launchBrowser(t)
const root = await apiSession(t, system.url, 'root', '123456')
await root.setOptions({
  ...smtpOptions(smtp),
  // The reset mail's link points here, where the browser opens the console.
  ServerAddress: system.url,
  EmailVerificationEnabled: 'true',
  GitHubClientId: 'gh-client',
  GitHubClientSecret: 'gh-secret',
  GitHubOAuthEnabled: 'true'
})
const db = system.controlPlane.db
const userRow = async (username: string) =>
  await db.selectFrom('users').selectAll().where('username', '=', username).where('deleted_at', 'is', null).executeTakeFirst()

/** The newest mail to `address`; it is sent before the API answers, so it is there once the page says so. */
function lastMailText (address: string): string {
  const mail = smtp.lastTo(address)
  if (mail === undefined) throw new Error(`no mail to ${address}`)
  return `${mail.text}\n${mail.html}`
}

t.test('registers through an invite link with an email code, logs in and out, at both widths', async (t) => {
  const aff = await root.call<string>('GET', '/api/user/aff')
  for (const viewport of [DESKTOP, NARROW]) {
    const username = `invitee${viewport.width}`
    const email = `${username}@example.test`
    const page = await openPage(t, browser, system.url, { viewport })
    await page.goto(`/register?aff=${aff}`)
    await page.getByText(`Invitation code: ${aff}`).waitFor()
    t.equal(await page.evaluate(() => localStorage.getItem('aff')), aff, 'the invite code is kept in localStorage')

    await page.locator('input[name=username]').fill(username)
    await page.locator('input[name=password]').fill(PASSWORD)
    await page.locator('input[name=password2]').fill('password124')
    await page.getByRole('button', { name: 'Register', exact: true }).click()
    await toast(page, 'error', 'The two passwords differ')
    await page.locator('input[name=password2]').fill(PASSWORD)
    await page.getByRole('button', { name: 'Register', exact: true }).click()
    await toast(page, 'error', 'Please enter the email')

    await page.locator('input[name=email]').fill(email)
    await page.getByRole('button', { name: 'Get code' }).click()
    await toast(page, 'success', 'Verification code sent')
    const resend = page.getByRole('button', { name: /^Resend \(\d+\)$/ })
    await resend.waitFor()
    t.ok(await resend.isDisabled(), 'the code button counts down before another mail')
    const code = /\b(\d{6})\b/.exec(lastMailText(email))?.[1]
    t.ok(code, 'the mail carries a six-digit code')
    await page.locator('input[name=verification_code]').fill(code ?? '')
    await noOverflow(t, page, `${viewport.width}px register`)
    await screenshot(page, `register-${viewport.width}`)
    await page.getByRole('button', { name: 'Register', exact: true }).click()
    await toast(page, 'success', 'Registered')
    await page.waitForURL('**/login')
    // The URL changes before the login screen's code has loaded: until then the register form
    // (with its own username and password fields) is still the one on screen.
    await page.locator('input[name=password2]').waitFor({ state: 'detached' })

    const row = await userRow(username)
    t.equal(row?.inviter_id, root.id, 'the new account records root as its inviter')
    t.equal(row?.email, email, 'the verified email is stored')
    t.equal(await page.evaluate(() => localStorage.getItem('aff')), null, 'the spent invite code is forgotten')

    await page.locator('input[name=username]').fill(username)
    await page.locator('input[name=password]').fill(PASSWORD)
    await noOverflow(t, page, `${viewport.width}px login`)
    await screenshot(page, `login-${viewport.width}`)
    await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
    await page.waitForURL('**/token')
    t.equal(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').username), username, 'the user is stored')

    await page.getByRole('button', { name: username }).click()
    await page.getByRole('menuitem', { name: 'Log out' }).click()
    await page.waitForURL('**/login')
    t.equal(await page.evaluate(() => localStorage.getItem('user')), null, 'logging out forgets the user')
    const self = await page.request.get('/api/user/self', { headers: { 'new-api-user': String(row?.id) } })
    t.equal(self.status(), 401, 'the session is over on the server too')
  }
})

t.test('login refusals, the expired message and the default-password warning', async (t) => {
  const page = await openPage(t, browser, system.url)
  await page.goto('/login?expired=true')
  await page.getByText('Not logged in, or the login has expired; please log in again').waitFor()
  await screenshot(page, 'login-expired-1280')

  const submit = page.getByRole('button', { name: 'Log in', exact: true }).last()
  await submit.click()
  await toast(page, 'error', 'Please enter the username and password')
  await page.locator('input[name=username]').fill('invitee1280')
  await page.locator('input[name=password]').fill('not-the-password')
  await submit.click()
  await toast(page, 'error', 'Wrong username or password')
  t.equal(new URL(page.url()).pathname, '/login', 'a refused login stays on the login page')

  const signInAsRoot = async () => {
    await page.locator('input[name=username]').fill('root')
    await page.locator('input[name=password]').fill('123456')
    await submit.click()
    await page.waitForURL((url) => url.pathname !== '/login')
  }
  const dialog = page.getByRole('dialog', { name: 'Change the default password' })
  await signInAsRoot()
  await dialog.waitFor()
  t.equal(new URL(page.url()).pathname, '/token', 'the default password lands in the console, not on /login')
  t.ok(await page.locator('nav[aria-label=Console]').isVisible(), 'the console is behind the warning')
  await screenshot(page, 'login-default-password-1280')
  await dialog.getByRole('button', { name: 'Later' }).click()
  await dialog.waitFor({ state: 'detached' })
  t.equal(new URL(page.url()).pathname, '/token', '"Later" stays in the console')
  await page.reload()
  await page.getByRole('navigation', { name: 'Console' }).waitFor()
  t.equal(await dialog.count(), 0, 'the warning opens once per sign-in, not on every load')

  await page.goto('/login')
  await signInAsRoot()
  await dialog.waitFor()
  await dialog.getByRole('link', { name: 'Change password' }).click()
  await page.waitForURL('**/setting')
  t.pass('the warning leads to the settings')
})

t.test('the reset mail link sets a new password that logs in', async (t) => {
  const email = 'invitee600@example.test'
  for (const viewport of [DESKTOP, NARROW]) {
    const page = await openPage(t, browser, system.url, { viewport })
    await page.goto('/reset')
    await page.getByRole('button', { name: 'Send the reset mail' }).click()
    await toast(page, 'error', 'Please enter the email')
    await noOverflow(t, page, `${viewport.width}px reset`)
    await screenshot(page, `reset-${viewport.width}`)
    if (viewport === NARROW) continue

    await page.locator('input[name=email]').fill(email)
    await page.getByRole('button', { name: 'Send the reset mail' }).click()
    await toast(page, 'success', 'A reset link has been sent')
    t.ok(await page.getByRole('button', { name: /^Resend \(\d+\)$/ }).isDisabled(), 'the button counts down before another mail')
  }

  const link = /(http:\/\/\S+\/user\/reset\?[^\s"<]+)/.exec(lastMailText(email))?.[1]?.replaceAll('&amp;', '&')
  t.ok(link?.startsWith(`${system.url}/user/reset?`), 'the mail links to the console')
  for (const viewport of [NARROW, DESKTOP]) {
    const page = await openPage(t, browser, system.url, { viewport })
    if (viewport === NARROW) {
      // The link without its token: the page says so instead of calling the server.
      await page.goto('/user/reset?email=x%40example.test')
      await page.getByText('This reset link is incomplete').waitFor()
      await screenshot(page, 'reset-confirm-invalid-600')
      continue
    }
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.goto(link ?? '/user/reset')
    t.equal(await page.getByRole('textbox', { name: 'Email' }).inputValue(), email, 'the page names the account')
    await screenshot(page, 'reset-confirm-1280')
    await page.getByRole('button', { name: 'Reset the password' }).click()
    const shown = page.getByTestId('new-password')
    await shown.waitFor()
    const password = await shown.inputValue()
    t.match(password, /^[A-Za-z0-9]{12}$/, 'the new password is shown')
    await page.getByRole('button', { name: 'Copy the password' }).click()
    await toast(page, 'success', 'New password copied')
    t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), password, 'the copy button copies it')
    await screenshot(page, 'reset-confirm-done-1280')

    await page.getByRole('link', { name: 'Log in', exact: true }).last().click()
    await page.waitForURL('**/login')
    await page.locator('input[name=username]').fill('invitee600')
    await page.locator('input[name=password]').fill(PASSWORD)
    await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
    await toast(page, 'error', 'Wrong username or password')
    await page.locator('input[name=password]').fill(password)
    await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
    await page.waitForURL('**/token')
    t.pass('the new password logs in and the old one no longer does')
  }
})

t.test('GitHub sign-in from the login page, retrying a failed callback', async (t) => {
  const profile = { id: 4242, login: 'octo', name: 'Octo Cat' }
  const page = await openPage(t, browser, system.url)
  let authorize: URL | undefined
  // github.com is not reachable from the test: its authorize page answers with our fake's code at once.
  await page.route((url) => url.hostname === 'github.com' && url.pathname === '/login/oauth/authorize', async (route) => {
    authorize = new URL(route.request().url())
    const back = `${system.url}/oauth/github?${new URLSearchParams({ code: github.code(profile), state: authorize.searchParams.get('state') ?? '' }).toString()}`
    await route.fulfill({ status: 302, headers: { location: back } })
  })
  let failures = 0
  // The first callback request fails before reaching the server, as a dropped connection would.
  await page.route((url) => url.pathname === '/api/oauth/github', async (route) => {
    if (failures++ === 0) await route.fulfill({ status: 502, body: 'bad gateway' })
    else await route.continue()
  })
  await page.goto('/login')
  await page.getByRole('button', { name: 'GitHub' }).click()
  await page.getByText('Error, retry 1…').waitFor()
  await screenshot(page, 'oauth-callback-retry-1280')
  await page.waitForURL('**/token')
  t.equal(authorize?.searchParams.get('client_id'), 'gh-client', 'the authorize page gets the client id')
  t.equal(authorize?.searchParams.get('scope'), 'user:email', 'and asks for the email scope')
  const row = await db.selectFrom('users').selectAll().where('github_id', '=', '4242').executeTakeFirst()
  t.equal(row?.display_name, 'Octo Cat', 'a new account holds the GitHub identity')
  await page.getByRole('button', { name: 'Octo Cat' }).waitFor()
  t.equal(failures, 2, 'one failure, one retry')
})

t.test('the GitHub callback: sign-in with a real state, refusal, and binding', async (t) => {
  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  // The state is tied to this browser by a cookie, so it is asked for in the page's own context.
  const state = await (await page.request.get('/api/oauth/state')).json() as Envelope<string>
  await page.goto(`/oauth/github?code=${github.code({ id: 5151, login: 'hubot', name: 'Hubot' })}&state=${state.data}`)
  await page.waitForURL('**/token')
  t.equal(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').display_name), 'Hubot', 'the callback signs the user in')
  await noOverflow(t, page, '600px console after the callback')

  const stranger = await openPage(t, browser, system.url, { viewport: NARROW })
  await stranger.goto(`/oauth/github?code=${github.code({ id: 6161, login: 'eve', name: 'Eve' })}&state=forged`)
  await toast(stranger, 'error', 'The sign-in request is invalid or has expired')
  await stranger.waitForURL('**/login')
  t.notOk(await db.selectFrom('users').select('id').where('github_id', '=', '6161').executeTakeFirst(), 'a foreign state signs nobody in')
  await screenshot(stranger, 'oauth-callback-refused-600')

  // invitee1280 is signed in: the callback binds the GitHub account to it.
  const member = await openPage(t, browser, system.url)
  await member.goto('/login')
  await member.locator('input[name=username]').fill('invitee1280')
  await member.locator('input[name=password]').fill(PASSWORD)
  await member.getByRole('button', { name: 'Log in', exact: true }).last().click()
  await member.waitForURL('**/token')
  const bindState = await (await member.request.get('/api/oauth/state')).json() as Envelope<string>
  await member.goto(`/oauth/github?code=${github.code({ id: 7171, login: 'member', name: 'Member' })}&state=${bindState.data}`)
  await toast(member, 'success', 'Account bound')
  await member.waitForURL('**/setting')
  t.equal((await userRow('invitee1280'))?.github_id, '7171', 'the GitHub account is bound to the signed-in user')
})

t.test('WeChat, Telegram and LinuxDO sign-in from the login page', async (t) => {
  const wechat = await fakeWeChat(t, '246810', 'wx-openid-1')
  await root.setOptions({
    WeChatServerAddress: wechat,
    WeChatServerToken: 'wx-token',
    WeChatAccountQRCodeImageURL: `${wechat}/qr.svg`,
    WeChatAuthEnabled: 'true',
    TelegramBotToken: '123:tg-secret',
    TelegramBotName: 'modelgate_bot',
    TelegramOAuthEnabled: 'true',
    LinuxDOClientId: 'ld-client',
    LinuxDOClientSecret: 'ld-secret',
    LinuxDOOAuthEnabled: 'true'
  })

  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  // Unreachable here; refused at once so that the page finishes loading.
  await page.route((url) => url.hostname === 'telegram.org', async (route) => { await route.abort() })
  await page.goto('/login')
  await page.getByRole('button', { name: 'WeChat' }).click()
  const dialog = page.getByRole('dialog', { name: 'Sign in with WeChat' })
  await dialog.getByRole('img', { name: 'QR code of the WeChat official account' }).waitFor()
  await screenshot(page, 'login-wechat-600')
  await dialog.getByRole('button', { name: 'Log in' }).click()
  await toast(page, 'error', 'Please enter the verification code')
  await dialog.getByLabel('Verification code').fill('246810')
  await dialog.getByRole('button', { name: 'Log in' }).click()
  await page.waitForURL('**/token')
  t.ok(await db.selectFrom('users').select('id').where('wechat_id', '=', 'wx-openid-1').executeTakeFirst(), 'the WeChat code signs a new account in')

  const tg = await openPage(t, browser, system.url)
  const fields = telegramFields('123:tg-secret', '777001')
  // telegram.org is out of reach: its widget script is replaced by a button that hands over signed fields.
  await tg.route('https://telegram.org/js/telegram-widget.js?22', async (route) => {
    await route.fulfill({
      contentType: 'text/javascript',
      body: `(() => {
        const s = document.currentScript
        const b = document.createElement('button')
        b.type = 'button'
        b.textContent = 'Telegram ' + s.getAttribute('data-telegram-login')
        b.onclick = () => { window.onTelegramAuth(${JSON.stringify(fields)}) }
        s.parentNode.appendChild(b)
      })()`
    })
  })
  let linuxdo: URL | undefined
  await tg.route((url) => url.hostname === 'connect.linux.do', async (route) => {
    linuxdo = new URL(route.request().url())
    await route.fulfill({ contentType: 'text/html', body: '<p>LinuxDO authorize page</p>' })
  })
  await tg.goto('/login')
  await tg.getByRole('button', { name: 'LinuxDO' }).click()
  await tg.getByText('LinuxDO authorize page').waitFor()
  t.equal(linuxdo?.pathname, '/oauth2/authorize', 'LinuxDO opens its authorize page')
  t.same([linuxdo?.searchParams.get('response_type'), linuxdo?.searchParams.get('client_id'), (linuxdo?.searchParams.get('state') ?? '').length > 20], ['code', 'ld-client', true], 'with the client id and a state')

  await tg.goto('/login')
  await tg.getByRole('button', { name: 'Telegram modelgate_bot' }).waitFor()
  await screenshot(tg, 'login-all-methods-1280')
  await tg.getByRole('button', { name: 'Telegram modelgate_bot' }).click()
  await tg.waitForURL('**/token')
  t.equal(await tg.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').display_name), 'Tele Gram', 'the Telegram fields sign a new account in')
  t.ok(await db.selectFrom('users').select('id').where('telegram_id', '=', '777001').executeTakeFirst(), 'it holds the Telegram id')

  // A signed-in user is binding: a refusal at the provider returns to the settings.
  await tg.goto('/oauth/linuxdo?error=access_denied&state=x')
  await toast(tg, 'error', 'The LinuxDO sign-in was cancelled or refused')
  await tg.waitForURL('**/setting')
  await root.setOptions({ WeChatAuthEnabled: 'false', TelegramOAuthEnabled: 'false', LinuxDOOAuthEnabled: 'false' })
})

t.test('closed registration shows the server refusal', async (t) => {
  await root.setOptions({ RegisterEnabled: 'false' })
  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  await page.goto('/register')
  await page.getByText('The administrator has closed registration').waitFor()
  await page.locator('input[name=username]').fill('latecomer')
  await page.locator('input[name=password]').fill(PASSWORD)
  await page.locator('input[name=password2]').fill(PASSWORD)
  await page.locator('input[name=email]').fill('late@example.test')
  await page.locator('input[name=verification_code]').fill('123456')
  await page.getByRole('button', { name: 'Register', exact: true }).click()
  await toast(page, 'error', 'Registration has been disabled by the administrator')
  await screenshot(page, 'register-closed-600')
  t.notOk(await userRow('latecomer'), 'no account is made')
})

t.test('the Turnstile token goes with the login; without one the page asks to wait', async (t) => {
  await root.setOptions({ TurnstileSiteKey: 'site-key', TurnstileSecretKey: 'ts-secret', TurnstileCheckEnabled: 'true' })
  t.teardown(() => root.setOptions({ TurnstileCheckEnabled: 'false' }))
  const page = await openPage(t, browser, system.url)
  await page.route('https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit', async (route) => {
    await route.fulfill({ contentType: 'text/javascript', body: FAKE_TURNSTILE })
  })
  await page.goto('/login')
  await page.locator('input[name=username]').fill('invitee1280')
  await page.locator('input[name=password]').fill(PASSWORD)
  await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
  await toast(page, 'error', 'retry in a few seconds')
  await page.getByRole('button', { name: 'I am human (site-key)' }).click()
  await screenshot(page, 'login-turnstile-1280')
  await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
  await page.waitForURL('**/token')
  t.same(siteverify.seen, ['tok-1'], 'the server checked the widget token')
})
