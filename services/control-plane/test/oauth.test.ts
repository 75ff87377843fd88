import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { OptionKey } from '@modelgate/contracts'
import { findUserById, updateUser } from '@modelgate/db'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { build, type Session, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }

/** A real HTTP server on 127.0.0.1; `handle` gets the request with its whole body. */
async function fakeServer (t: Test, handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handle(req, Buffer.concat(chunks).toString(), res))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function sendJson (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
  res.end(JSON.stringify(body))
}

const randomCode = () => randomBytes(10).toString('hex')

interface GitHubProfile { id: number, login: string, name?: string | null, email?: string | null }

/**
 * GitHub's OAuth token endpoint and REST API, as separate servers. Codes are single use; a bad
 * code is reported with HTTP 200 and an `error` field, as GitHub does. Special codes: `broken`
 * answers HTML, `hangup` drops the connection, `revoked` yields a token the API refuses.
 */
async function fakeGitHub (t: Test) {
  const codes = new Map<string, GitHubProfile>()
  const tokens = new Map<string, GitHubProfile>()
  const oauthUrl = await fakeServer(t, (req, body, res) => {
    if (req.method !== 'POST' || req.url !== '/login/oauth/access_token') return sendJson(res, 404, { error: 'Not Found' })
    const form = new URLSearchParams(body)
    const code = form.get('code') ?? ''
    if (code === 'hangup') return req.socket.destroy()
    if (code === 'broken') {
      res.writeHead(200, { 'content-type': 'text/html' })
      return res.end('<html><body>Service unavailable</body></html>')
    }
    let answer: Record<string, string>
    if (form.get('client_id') !== 'gh-client' || form.get('client_secret') !== 'gh-secret') {
      answer = { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' }
    } else if (code === 'revoked') {
      answer = { access_token: 'gho_revoked', token_type: 'bearer', scope: '' }
    } else {
      const profile = codes.get(code)
      codes.delete(code)
      if (profile === undefined) {
        answer = { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' }
      } else {
        const token = `gho_${randomBytes(12).toString('hex')}`
        tokens.set(token, profile)
        answer = { access_token: token, token_type: 'bearer', scope: 'read:user' }
      }
    }
    // Without `Accept: application/json` GitHub answers form-encoded.
    if (!(req.headers.accept ?? '').includes('application/json')) {
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' })
      return res.end(new URLSearchParams(answer).toString())
    }
    sendJson(res, 200, answer)
  })
  const apiUrl = await fakeServer(t, (req, _body, res) => {
    if (req.method !== 'GET' || req.url !== '/user') return sendJson(res, 404, { message: 'Not Found' })
    // GitHub's API refuses requests without a User-Agent.
    if (req.headers['user-agent'] === undefined) return sendJson(res, 403, { message: 'Request forbidden by administrative rules.' })
    const profile = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''))
    if (profile === undefined) return sendJson(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' })
    sendJson(res, 200, {
      login: profile.login,
      id: profile.id,
      node_id: 'MDQ6VXNlcjE=',
      avatar_url: `https://avatars.githubusercontent.com/u/${profile.id}?v=4`,
      type: 'User',
      site_admin: false,
      name: profile.name ?? null,
      email: profile.email ?? null
    })
  })
  return {
    oauthUrl,
    apiUrl,
    /** A fresh authorization code for `profile`, as GitHub's authorize page would issue it. */
    code (profile: GitHubProfile): string {
      const code = randomCode()
      codes.set(code, profile)
      return code
    }
  }
}

interface LinuxDOProfile { id: number, username: string, name?: string, active?: boolean, trust_level?: number }

/** LinuxDO Connect: POST /oauth2/token (form, client credentials in the body), GET /api/user. */
async function fakeLinuxDO (t: Test) {
  const codes = new Map<string, LinuxDOProfile>()
  const tokens = new Map<string, LinuxDOProfile>()
  const url = await fakeServer(t, (req, body, res) => {
    if (req.method === 'POST' && req.url === '/oauth2/token') {
      const form = new URLSearchParams(body)
      if (form.get('grant_type') !== 'authorization_code') return sendJson(res, 400, { error: 'unsupported_grant_type' })
      if (form.get('client_id') !== 'ld-client' || form.get('client_secret') !== 'ld-secret') return sendJson(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' })
      const profile = codes.get(form.get('code') ?? '')
      codes.delete(form.get('code') ?? '')
      if (profile === undefined) return sendJson(res, 400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid' })
      const token = randomBytes(16).toString('hex')
      tokens.set(token, profile)
      return sendJson(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600, refresh_token: 'r' })
    }
    if (req.method === 'GET' && req.url === '/api/user') {
      const profile = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''))
      if (profile === undefined) return sendJson(res, 401, { error: 'invalid_token' })
      return sendJson(res, 200, {
        id: profile.id,
        username: profile.username,
        name: profile.name ?? '',
        avatar_template: '/user_avatar/x.png',
        active: profile.active ?? true,
        trust_level: profile.trust_level ?? 2,
        silenced: false
      })
    }
    sendJson(res, 404, { error: 'not_found' })
  })
  return {
    url,
    code (profile: LinuxDOProfile): string {
      const code = randomCode()
      codes.set(code, profile)
      return code
    }
  }
}

/** The WeChat server: GET /api/wechat/user?code= with `Authorization: <token>`, answers {success, message, data: openid}. */
async function fakeWeChat (t: Test, token: string) {
  const codes = new Map<string, string>()
  const url = await fakeServer(t, (req, _body, res) => {
    const u = new URL(req.url ?? '/', 'http://x')
    if (req.method !== 'GET' || u.pathname !== '/api/wechat/user') return sendJson(res, 404, { success: false, message: 'not found' })
    if (req.headers.authorization !== token) return sendJson(res, 200, { success: false, message: '无权进行此操作，token 无效', data: '' })
    const code = u.searchParams.get('code') ?? ''
    const openid = codes.get(code)
    codes.delete(code)
    if (openid === undefined) return sendJson(res, 200, { success: false, message: '验证码错误或已过期', data: '' })
    sendJson(res, 200, { success: true, message: '', data: openid })
  })
  return {
    url,
    code (openid: string): string {
      const code = randomBytes(3).toString('hex')
      codes.set(code, openid)
      return code
    }
  }
}

const WECHAT_TOKEN = 'wx-server-token'
const BOT_TOKEN = '123456:ABC-telegram-bot-token'

/** A control plane pointed at fake GitHub, LinuxDO and WeChat servers, with every provider enabled. */
async function setup (t: Test, options: Partial<Record<OptionKey, string>> = {}) {
  const [github, linuxdo, wechat] = await Promise.all([fakeGitHub(t), fakeLinuxDO(t), fakeWeChat(t, WECHAT_TOKEN)])
  const app = await build(t, { GITHUB_OAUTH_URL: github.oauthUrl, GITHUB_API_URL: github.apiUrl, LINUXDO_OAUTH_URL: `${linuxdo.url}/` })
  await app.saveOptions({
    GitHubOAuthEnabled: 'true',
    GitHubClientId: 'gh-client',
    GitHubClientSecret: 'gh-secret',
    LinuxDOOAuthEnabled: 'true',
    LinuxDOClientId: 'ld-client',
    LinuxDOClientSecret: 'ld-secret',
    WeChatAuthEnabled: 'true',
    WeChatServerAddress: wechat.url,
    WeChatServerToken: WECHAT_TOKEN,
    TelegramOAuthEnabled: 'true',
    TelegramBotToken: BOT_TOKEN,
    ...options
  })
  return { app, github, linuxdo, wechat }
}

function cookieOf (res: LightMyRequestResponse, name: string): string | undefined {
  const raw = [res.headers['set-cookie']].flat().find((c) => c?.startsWith(`${name}=`))
  return raw?.split(';')[0]
}

/** What the console's callback page holds: the state from /api/oauth/state and the cookie that came with it. */
interface Flow { state: string, cookie: string }

async function startFlow (app: FastifyInstance, aff?: string): Promise<Flow> {
  const res = await app.inject({ url: `/api/oauth/state${aff === undefined ? '' : `?aff=${encodeURIComponent(aff)}`}` })
  const body = res.json()
  if (body.success !== true || typeof body.data !== 'string') throw new Error(`state failed: ${res.body}`)
  const cookie = cookieOf(res, 'oauth_state')
  if (cookie === undefined) throw new Error('no oauth_state cookie')
  return { state: body.data, cookie }
}

/** The console's call of /api/oauth/{provider}?code&state, signed in when `session` is given. */
async function callback (
  app: FastifyInstance,
  provider: 'github' | 'linuxdo',
  code: string,
  flow: Flow,
  opts: { session?: Session, headers?: Record<string, string> } = {}
): Promise<LightMyRequestResponse> {
  const cookie = [flow.cookie, opts.session?.headers['cookie']].filter((c) => c !== undefined).join('; ')
  return await app.inject({
    url: `/api/oauth/${provider}?code=${encodeURIComponent(code)}&state=${encodeURIComponent(flow.state)}`,
    headers: { ...opts.headers, ...opts.session?.headers, cookie }
  })
}

/** The session a sign-in answer started, as the console would use it. */
function sessionOf (res: LightMyRequestResponse): Record<string, string> {
  const cookie = cookieOf(res, 'session')
  if (cookie === undefined) throw new Error(`no session cookie: ${res.body}`)
  return { cookie, 'new-api-user': String(res.json().data.id) }
}

async function countUsers (app: FastifyInstance): Promise<number> {
  const row = await app.db.selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

function telegramSigned (fields: Record<string, string>, botToken = BOT_TOKEN): Record<string, string> {
  const check = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join('\n')
  const hash = createHmac('sha256', createHash('sha256').update(botToken).digest()).update(check).digest('hex')
  return { ...fields, hash }
}

const nowS = () => Math.floor(Date.now() / 1000)

async function telegramLogin (app: FastifyInstance, query: Record<string, string>, headers: Record<string, string> = {}) {
  return await app.inject({ url: `/api/oauth/telegram/login?${new URLSearchParams(query).toString()}`, headers })
}

t.test('a provider the administrator has not enabled is refused, in the caller\'s language', async (t) => {
  const { app, github, linuxdo, wechat } = await setup(t, {
    GitHubOAuthEnabled: 'false',
    LinuxDOOAuthEnabled: 'false',
    WeChatAuthEnabled: 'false',
    TelegramOAuthEnabled: 'false'
  })
  const gh = await callback(app, 'github', github.code({ id: 1, login: 'octo' }), await startFlow(app))
  t.same(gh.json(), { success: false, message: '管理员未开启通过 GitHub 登录以及注册' }, 'Chinese when no language is given')
  const ghEn = await callback(app, 'github', github.code({ id: 1, login: 'octo' }), await startFlow(app), { headers: EN })
  t.same(ghEn.json(), { success: false, message: 'The administrator has not enabled sign-in and registration through GitHub' })
  t.equal(cookieOf(ghEn, 'session'), undefined, 'no session')

  const ld = await callback(app, 'linuxdo', linuxdo.code({ id: 5, username: 'tux' }), await startFlow(app), { headers: EN })
  t.equal(ld.json().message, 'The administrator has not enabled sign-in and registration through LinuxDO')
  const wx = await app.inject({ url: `/api/oauth/wechat?code=${wechat.code('openid-1')}`, headers: EN })
  t.equal(wx.json().message, 'The administrator has not enabled sign-in and registration through WeChat')
  const tg = await telegramLogin(app, telegramSigned({ id: '42', first_name: 'T', auth_date: String(nowS()) }), EN)
  t.equal(tg.json().message, 'The administrator has not enabled sign-in and registration through Telegram')
  t.equal(await countUsers(app), 1, 'nobody registered (root only)')
})

t.test('the state is random, single use, tied to the browser that asked for it, and required', async (t) => {
  const { app, github } = await setup(t)
  const profile = { id: 7001, login: 'replayer' }
  const stateRes = await app.inject('/api/oauth/state')
  t.match(stateRes.json(), { success: true, data: /^[\w-]{32,}$/ })
  const rawCookie = [stateRes.headers['set-cookie']].flat().find((c) => c?.startsWith('oauth_state='))
  t.match(rawCookie, /HttpOnly/)
  t.match(rawCookie, /Path=\/api\/oauth/)
  t.not((await startFlow(app)).state, (await startFlow(app)).state, 'a new state each time')

  const flow = await startFlow(app)
  const foreign = await app.inject({ url: `/api/oauth/github?code=${github.code(profile)}&state=${flow.state}`, headers: EN })
  t.same(foreign.json(), { success: false, message: 'The sign-in request is invalid or has expired; please start again' },
    'a state sent without the cookie of the browser that asked for it is refused')

  const first = await callback(app, 'github', github.code(profile), flow)
  t.equal(first.json().success, true, 'the same state works from its own browser')
  const replay = await callback(app, 'github', github.code(profile), flow, { headers: EN })
  t.same(replay.json(), { success: false, message: 'The sign-in request is invalid or has expired; please start again' }, 'a replayed state is refused')
  t.equal(cookieOf(replay, 'session'), undefined)

  const unknown = randomBytes(24).toString('base64url')
  const forged = await callback(app, 'github', github.code(profile), { state: unknown, cookie: `oauth_state=${unknown}` }, { headers: EN })
  t.equal(forged.json().message, 'The sign-in request is invalid or has expired; please start again', 'a state the server never issued is refused')

  const missing = await app.inject({ url: `/api/oauth/github?code=${github.code(profile)}`, headers: { ...EN, cookie: (await startFlow(app)).cookie } })
  t.same(missing.json(), { success: false, message: 'The sign-in request is invalid or has expired; please start again' }, 'a missing state is refused')
})

t.test('a first GitHub login registers the account, credits the inviter once and starts a working session', async (t) => {
  const { app, github } = await setup(t, { QuotaForNewUser: '100', QuotaForInvitee: '50', QuotaForInviter: '30' })
  const inviter = await userSession(app, 'inviter')
  const aff = (await app.inject({ url: '/api/user/aff', headers: inviter.headers })).json().data as string
  const profile = { id: 583231, login: 'octocat', name: 'The Octocat', email: 'octocat@github.example' }

  const res = await callback(app, 'github', github.code(profile), await startFlow(app, aff), { headers: EN })
  const body = res.json()
  t.equal(res.statusCode, 200)
  t.equal(body.success, true)
  t.equal(body.message, 'Logged in')
  t.match(body.data, { github_id: '583231', display_name: 'The Octocat', email: 'octocat@github.example', quota: 150, role: 1, status: 1 })
  t.match(body.data.username, /^github_\d+$/)
  t.ok(body.data.username.length <= 12, 'usernames fit the 12-character limit')
  t.notOk('password_hash' in body.data)
  t.equal(cookieOf(res, 'oauth_state'), 'oauth_state=', 'the state cookie is cleared')

  const self = await app.inject({ url: '/api/user/self', headers: sessionOf(res) })
  t.equal(self.json().success, true, 'the session cookie works')
  t.equal(self.json().data.id, body.data.id)

  const credited = await findUserById(app.db, inviter.user.id)
  t.match(credited, { aff_count: 1, aff_quota: 30 }, 'the inviter is credited')

  const again = await callback(app, 'github', github.code(profile), await startFlow(app, aff))
  t.equal(again.json().success, true)
  t.equal(again.json().data.id, body.data.id, 'a second login signs into the same account')
  t.equal(again.json().data.quota, 150)
  t.match(await findUserById(app.db, inviter.user.id), { aff_count: 1, aff_quota: 30 }, 'the inviter is credited only once')
  t.equal(await countUsers(app), 3, 'root, the inviter and one GitHub account')
  const selfAgain = await app.inject({ url: '/api/user/self', headers: sessionOf(again) })
  t.equal(selfAgain.json().data.github_id, '583231')

  const twin = { id: 1234567, login: 'twin' }
  const [flowA, flowB] = await Promise.all([startFlow(app), startFlow(app)])
  const both = await Promise.all([callback(app, 'github', github.code(twin), flowA), callback(app, 'github', github.code(twin), flowB)])
  t.same(both.map((r) => r.statusCode), [200, 200])
  const ids = new Set(both.filter((r) => r.json().success === true).map((r) => r.json().data.id as number))
  t.equal(ids.size, 1, 'two simultaneous first logins of one GitHub account make one account')
  const rows = await app.db.selectFrom('users').select('id').where('github_id', '=', '1234567').execute()
  t.equal(rows.length, 1)
})

t.test('registration through GitHub is refused while registration is closed; existing accounts still sign in', async (t) => {
  const { app, github } = await setup(t)
  const known = await userSession(app, 'known')
  await updateUser(app.db, known.user.id, { github_id: '9001' })
  await app.saveOptions({ RegisterEnabled: 'false' })

  const res = await callback(app, 'github', github.code({ id: 9002, login: 'newcomer' }), await startFlow(app))
  t.same(res.json(), { success: false, message: '管理员关闭了新用户注册' })
  const en = await callback(app, 'github', github.code({ id: 9002, login: 'newcomer' }), await startFlow(app), { headers: EN })
  t.same(en.json(), { success: false, message: 'The administrator has closed new registrations' })
  t.equal(cookieOf(en, 'session'), undefined)
  t.equal(await countUsers(app), 2, 'nobody registered')

  const existing = await callback(app, 'github', github.code({ id: 9001, login: 'known' }), await startFlow(app))
  t.equal(existing.json().success, true)
  t.equal(existing.json().data.id, known.user.id)
})

t.test('signing in through GitHub while signed in binds the account', async (t) => {
  const { app, github } = await setup(t)
  const alice = await userSession(app, 'alice')
  const profile = { id: 2002, login: 'alice-gh' }

  const res = await callback(app, 'github', github.code(profile), await startFlow(app), { session: alice })
  t.equal(res.json().success, true)
  t.equal(res.json().message, 'bind', 'the console tells a binding by this message')
  t.match(res.json().data, { id: alice.user.id, username: 'alice', github_id: '2002' })
  t.equal((await findUserById(app.db, alice.user.id))?.github_id, '2002')
  t.equal(await countUsers(app), 2, 'no new account')

  const signIn = await callback(app, 'github', github.code(profile), await startFlow(app))
  t.equal(signIn.json().message, '登录成功')
  t.equal(signIn.json().data.id, alice.user.id, 'the bound GitHub account signs into alice')

  const bob = await userSession(app, 'bob')
  const taken = await callback(app, 'github', github.code(profile), await startFlow(app), { session: bob, headers: EN })
  t.same(taken.json(), { success: false, message: 'This GitHub account is already bound to another user' })
  const zh = await callback(app, 'github', github.code(profile), await startFlow(app), { session: bob })
  t.equal(zh.json().message, '该 GitHub 账户已被绑定')
  t.equal((await findUserById(app.db, bob.user.id))?.github_id, '', 'bob stays unbound')
  t.equal((await findUserById(app.db, alice.user.id))?.github_id, '2002', 'alice keeps it')
})

t.test('a banned user cannot sign in through GitHub', async (t) => {
  const { app, github } = await setup(t)
  const mallory = await userSession(app, 'mallory')
  await updateUser(app.db, mallory.user.id, { github_id: '6666', status: 2 })
  const res = await callback(app, 'github', github.code({ id: 6666, login: 'mallory' }), await startFlow(app), { headers: EN })
  t.same(res.json(), { success: false, message: 'This user has been banned' })
  t.equal(cookieOf(res, 'session'), undefined, 'no session for a banned user')
})

t.test('GitHub failures give a clear message, never a server error', async (t) => {
  const { app, github } = await setup(t)
  const cases: Array<[string, string]> = [
    ['not-a-code', 'GitHub sign-in failed: The code passed is incorrect or expired.'],
    ['broken', 'GitHub gave an unexpected answer; please try again later'],
    ['hangup', 'GitHub could not be reached; please try again later'],
    ['revoked', 'GitHub sign-in failed: Bad credentials']
  ]
  for (const [code, message] of cases) {
    const res = await callback(app, 'github', code, await startFlow(app), { headers: EN })
    t.equal(res.statusCode, 200, code)
    t.same(res.json(), { success: false, message }, code)
  }
  const flow = await startFlow(app)
  const noCode = await app.inject({ url: `/api/oauth/github?state=${flow.state}&error=access_denied`, headers: { ...EN, cookie: flow.cookie } })
  t.same(noCode.json(), { success: false, message: 'The authorization code is missing' }, 'a cancelled authorization')

  await app.saveOptions({ GitHubClientSecret: 'wrong' })
  const creds = await callback(app, 'github', github.code({ id: 1, login: 'x' }), await startFlow(app), { headers: EN })
  t.same(creds.json(), { success: false, message: 'GitHub sign-in failed: The client_id and/or client_secret passed are incorrect.' })
  t.equal(await countUsers(app), 1, 'nobody registered')
})

t.test('LinuxDO sign-in registers, signs in again, binds and refuses inactive accounts', async (t) => {
  const { app, linuxdo } = await setup(t)
  const profile = { id: 31337, username: 'tux', name: 'Tux Penguin', trust_level: 3 }
  const res = await callback(app, 'linuxdo', linuxdo.code(profile), await startFlow(app))
  t.equal(res.json().success, true)
  t.match(res.json().data, { linuxdo_id: '31337', display_name: 'Tux Penguin' })
  t.match(res.json().data.username, /^linuxdo_\d+$/)
  const self = await app.inject({ url: '/api/user/self', headers: sessionOf(res) })
  t.equal(self.json().data.linuxdo_id, '31337', 'the session works')

  const again = await callback(app, 'linuxdo', linuxdo.code(profile), await startFlow(app))
  t.equal(again.json().data.id, res.json().data.id, 'the same account signs in again')

  const carol = await userSession(app, 'carol')
  const bind = await callback(app, 'linuxdo', linuxdo.code({ id: 4242, username: 'carol-ld' }), await startFlow(app), { session: carol })
  t.equal(bind.json().message, 'bind')
  t.equal(bind.json().data.linuxdo_id, '4242')
  t.equal((await findUserById(app.db, carol.user.id))?.linuxdo_id, '4242')
  const taken = await callback(app, 'linuxdo', linuxdo.code(profile), await startFlow(app), { session: carol, headers: EN })
  t.equal(taken.json().message, 'This LinuxDO account is already bound to another user')

  const inactive = await callback(app, 'linuxdo', linuxdo.code({ id: 999, username: 'sleepy', active: false }), await startFlow(app), { headers: EN })
  t.same(inactive.json(), { success: false, message: 'This LinuxDO account is not active' })

  const bad = await callback(app, 'linuxdo', 'bogus', await startFlow(app), { headers: EN })
  t.same(bad.json(), { success: false, message: 'LinuxDO sign-in failed: The provided authorization grant is invalid' })
})

t.test('WeChat sign-in registers and signs in by openid; binding needs a session', async (t) => {
  const { app, wechat } = await setup(t)
  const res = await app.inject({ url: `/api/oauth/wechat?code=${wechat.code('oWx-openid-1')}` })
  t.equal(res.json().success, true)
  t.equal(res.json().data.wechat_id, 'oWx-openid-1')
  t.match(res.json().data.username, /^wechat_\d+$/)
  const self = await app.inject({ url: '/api/user/self', headers: sessionOf(res) })
  t.equal(self.json().data.id, res.json().data.id, 'the session works')

  const again = await app.inject({ url: `/api/oauth/wechat?code=${wechat.code('oWx-openid-1')}` })
  t.equal(again.json().data.id, res.json().data.id, 'the same openid signs into the same account')

  const wrong = await app.inject({ url: '/api/oauth/wechat?code=000000', headers: EN })
  t.same(wrong.json(), { success: false, message: 'WeChat sign-in failed: 验证码错误或已过期' }, 'the WeChat server\'s message is shown')

  const dave = await userSession(app, 'dave')
  const anonymous = await app.inject({ url: `/api/oauth/wechat/bind?code=${wechat.code('oWx-dave')}` })
  t.equal(anonymous.statusCode, 401, 'binding needs a session')
  const bind = await app.inject({ url: `/api/oauth/wechat/bind?code=${wechat.code('oWx-dave')}`, headers: dave.headers })
  t.equal(bind.json().success, true)
  t.equal(bind.json().message, 'bind')
  t.equal(bind.json().data.wechat_id, 'oWx-dave')
  t.equal((await findUserById(app.db, dave.user.id))?.wechat_id, 'oWx-dave')
  const taken = await app.inject({ url: `/api/oauth/wechat/bind?code=${wechat.code('oWx-openid-1')}`, headers: { ...dave.headers, ...EN } })
  t.same(taken.json(), { success: false, message: 'This WeChat account is already bound to another user' })

  await app.saveOptions({ WeChatServerToken: 'stale-token' })
  const unauthorized = await app.inject({ url: `/api/oauth/wechat?code=${wechat.code('oWx-openid-1')}`, headers: EN })
  t.match(unauthorized.json(), { success: false, message: /^WeChat sign-in failed: / }, 'the server token is sent')

  const nonsense = await fakeServer(t, (_req, _body, res) => {
    res.writeHead(502, { 'content-type': 'text/html' })
    res.end('<h1>502 Bad Gateway</h1>')
  })
  await app.saveOptions({ WeChatServerAddress: nonsense, WeChatServerToken: WECHAT_TOKEN })
  const broken = await app.inject({ url: '/api/oauth/wechat?code=123456', headers: EN })
  t.equal(broken.statusCode, 200)
  t.same(broken.json(), { success: false, message: 'WeChat gave an unexpected answer; please try again later' }, 'a server answering HTML is a clear refusal')
})

t.test('Telegram sign-in accepts only correctly signed, fresh data', async (t) => {
  const { app } = await setup(t)
  const fields = { id: '777000', first_name: 'Pavel', last_name: 'D', username: 'pd', photo_url: 'https://t.me/i/userpic/320/pd.jpg', auth_date: String(nowS() - 60) }
  const signed = telegramSigned(fields)

  const forged = await telegramLogin(app, { ...signed, hash: 'a'.repeat(64) }, EN)
  t.same(forged.json(), { success: false, message: 'The Telegram sign-in data is invalid' }, 'a forged hash is refused')
  const altered = await telegramLogin(app, { ...signed, id: '1' }, EN)
  t.same(altered.json(), { success: false, message: 'The Telegram sign-in data is invalid' }, 'an altered field is refused')
  const added = await telegramLogin(app, { ...signed, is_premium: 'true' }, EN)
  t.equal(added.json().success, false, 'an added field is refused')
  const otherBot = await telegramLogin(app, telegramSigned(fields, '999:another-bot'), EN)
  t.equal(otherBot.json().success, false, 'data signed for another bot is refused')
  const stale = await telegramLogin(app, telegramSigned({ ...fields, auth_date: String(nowS() - 86400 - 60) }), EN)
  t.same(stale.json(), { success: false, message: 'The Telegram sign-in data has expired; please sign in again' }, 'a stale auth_date is refused')
  const future = await telegramLogin(app, telegramSigned({ ...fields, auth_date: String(nowS() + 3600) }), EN)
  t.equal(future.json().message, 'The Telegram sign-in data has expired; please sign in again', 'an auth_date far in the future is refused')
  t.equal(await countUsers(app), 1, 'none of these registered anyone')

  const res = await telegramLogin(app, { ...signed, lang: 'en' }, EN)
  t.equal(res.json().success, true, 'the console\'s lang parameter is not part of the signature')
  t.match(res.json().data, { telegram_id: '777000', display_name: 'Pavel D' })
  t.match(res.json().data.username, /^telegram_\d+$/)
  t.ok(res.json().data.username.length <= 12)
  const self = await app.inject({ url: '/api/user/self', headers: sessionOf(res) })
  t.equal(self.json().data.telegram_id, '777000', 'the session works')

  const replay = await telegramLogin(app, { ...signed, lang: 'en' }, EN)
  t.same(replay.json(), { success: false, message: 'This Telegram sign-in has already been used; please sign in again' })

  const again = await telegramLogin(app, telegramSigned({ ...fields, auth_date: String(nowS()) }))
  t.equal(again.json().data.id, res.json().data.id, 'the same Telegram id signs into the same account')

  const erin = await userSession(app, 'erin')
  const bind = await telegramLogin(app, telegramSigned({ id: '555', first_name: 'Erin', auth_date: String(nowS()) }), erin.headers)
  t.equal(bind.json().message, 'bind')
  t.equal(bind.json().data.telegram_id, '555')
  t.equal((await findUserById(app.db, erin.user.id))?.telegram_id, '555')
})
