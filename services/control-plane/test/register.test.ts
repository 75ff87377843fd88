import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verify } from '@node-rs/argon2'
import type { ConfigChange, OptionKey } from '@modelgate/contracts'
import { softDeleteUser } from '@modelgate/db'
import { type ReceivedMail, startTestSmtpServer } from '@modelgate/mail/testing'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { createAccount } from '../src/services/users.js'
import { cooldownKey, verifyKey } from '../src/services/verification.js'
import { build, login, userSession, verifySession } from './helpers.js'

const EN = { 'accept-language': 'en-US,en;q=0.9' }

// One real SMTP server for the whole file; every test mails addresses of its own.
const smtp = await startTestSmtpServer()
t.teardown(() => smtp.close())

/** A control plane whose SMTP options point at the test server. */
async function buildWithMail (t: Test, options: Partial<Record<OptionKey, string>> = {}, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const app = await build(t, env)
  await app.saveOptions({
    SMTPServer: smtp.host,
    SMTPPort: String(smtp.port),
    SMTPAccount: 'bot@modelgate.test',
    SMTPToken: 'smtp-secret',
    SMTPFrom: 'noreply@modelgate.test',
    ...options
  })
  return app
}

interface Envelope { success: boolean, message: string, data: unknown }

async function register (app: FastifyInstance, body: Record<string, unknown>, opts: { query?: string, headers?: Record<string, string> } = {}): Promise<Envelope> {
  const res = await app.inject({ method: 'POST', url: `/api/user/register${opts.query ?? ''}`, payload: body, headers: opts.headers ?? EN })
  return res.json()
}

async function get (app: FastifyInstance, path: string, query: Record<string, string>, headers: Record<string, string> = EN): Promise<Envelope & { status: number }> {
  const res = await app.inject({ url: `${path}?${new URLSearchParams(query).toString()}`, headers })
  return { ...res.json(), status: res.statusCode }
}

const requestCode = (app: FastifyInstance, email: string, headers?: Record<string, string>, extra: Record<string, string> = {}) =>
  get(app, '/api/verification', { email, ...extra }, headers)

/** Mails received for `address` so far. */
const mailsTo = (address: string) => smtp.messages.filter((m) => m.envelope.to.includes(address))

function codeIn (mail: ReceivedMail | undefined): string {
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1]
  if (code === undefined) throw new Error('no code in the mail')
  return code
}

async function userRow (app: FastifyInstance, username: string) {
  return await app.db.selectFrom('users').selectAll().where('username', '=', username).where('deleted_at', 'is', null).executeTakeFirst()
}

t.test('registers an account with a password, without signing in', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/api/user/register', payload: { username: 'alice', password: 'password123', password2: 'password123' }, headers: EN })
  t.same(res.json(), { success: true, message: 'Registered', data: null })
  t.notOk([res.headers['set-cookie']].flat().some((c) => c?.startsWith('session=')), 'no session cookie: the console goes to /login')
  const row = await userRow(app, 'alice')
  t.match(row, { username: 'alice', display_name: 'alice', role: 1, status: 1, email: '', inviter_id: 0 })
  t.ok(await verify(row!.password_hash, 'password123'), 'the password is stored as an argon2 hash')
  t.equal((await login(app, 'alice', 'password123')).user.username, 'alice')

  const zh = await register(app, { username: 'bob', password: 'password123' }, { headers: {} })
  t.same(zh, { success: true, message: '注册成功', data: null }, 'Chinese without Accept-Language; password2 may be left out')
})

t.test('the registration switches refuse registration in either language', async (t) => {
  const app = await build(t)
  await app.saveOptions({ RegisterEnabled: 'false' })
  t.same(await register(app, { username: 'alice', password: 'password123' }), { success: false, message: 'Registration has been disabled by the administrator' })
  t.equal((await register(app, { username: 'alice', password: 'password123' }, { headers: {} })).message, '管理员关闭了新用户注册')

  await app.saveOptions({ RegisterEnabled: 'true', PasswordRegisterEnabled: 'false' })
  const res = await register(app, { username: 'alice', password: 'password123' })
  t.equal(res.success, false)
  t.match(res.message, /^Password registration has been disabled/)
  t.match((await register(app, { username: 'alice', password: 'password123' }, { headers: {} })).message, /^管理员关闭了通过密码进行注册/)
  t.equal(await userRow(app, 'alice'), undefined, 'nobody was created')

  await app.saveOptions({ PasswordRegisterEnabled: 'true' })
  t.equal((await register(app, { username: 'alice', password: 'password123' })).success, true, 'switching back on allows it')
})

t.test('checks the username and password rules', async (t) => {
  const app = await build(t)
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ username: '', password: 'password123' }, 'Username and password cannot be empty'],
    [{ username: 'alice', password: '' }, 'Username and password cannot be empty'],
    [{ username: 'alice', password: 'short77' }, 'Password must be 8 to 20 characters'],
    [{ username: 'alice', password: 'p'.repeat(21) }, 'Password must be 8 to 20 characters'],
    [{ username: 'a'.repeat(13), password: 'password123' }, 'Username must be 1 to 12 characters'],
    [{ username: 'alice', password: 'password123', password2: 'password124' }, 'The two passwords differ']
  ]
  for (const [body, message] of cases) t.same(await register(app, body), { success: false, message }, JSON.stringify(body))
  t.equal((await register(app, { username: 'alice', password: 'two-passwords' }, { headers: {} })).success, true)
  t.equal((await register(app, { username: 'a'.repeat(12), password: 'p'.repeat(20) })).success, true, '12-character name and 20-character password are fine')
  t.equal((await register(app, { username: 'x', password: 'p'.repeat(8) })).success, true, '8-character password is fine')

  t.same(await register(app, { username: 'alice', password: 'password123' }), { success: false, message: 'Username already exists' })
  t.equal((await register(app, { username: 'alice', password: 'password123' }, { headers: {} })).message, '用户名已存在')
  t.equal((await register(app, { username: 'abc', password: 'password12', password2: 'password13' }, { headers: {} })).message, '两次输入的密码不一致')
})

t.test('without e-mail verification an e-mail given at registration is not stored', async (t) => {
  const app = await build(t)
  t.equal((await register(app, { username: 'alice', password: 'password123', email: 'alice@example.com', verification_code: '000000' })).success, true)
  t.equal((await userRow(app, 'alice'))!.email, '')
})

t.test('with e-mail verification on, the mailed code registers the account once', async (t) => {
  const app = await buildWithMail(t, { EmailVerificationEnabled: 'true', SystemName: 'Acme AI' })
  const email = 'verify-one@example.com'
  t.same(await register(app, { username: 'alice', password: 'password123' }), { success: false, message: 'Email verification is on: enter the email address and the verification code' })
  t.match((await register(app, { username: 'alice', password: 'password123', email }, { headers: {} })).message, /^管理员开启了邮箱验证/)

  const sent = await requestCode(app, 'Verify-One@Example.com ')
  t.same(sent, { success: true, message: 'Verification code sent', data: null, status: 200 })
  t.equal(mailsTo(email).length, 1, 'one mail, to the address in lower case')
  const mail = smtp.lastTo(email)!
  t.equal(mail.subject, 'Acme AI email verification', 'the subject names the site')
  t.match(mail.headers['from'], /Acme AI.*<noreply@modelgate\.test>/)
  t.equal(mail.headers['to'], email)
  t.same(mail.envelope, { from: 'noreply@modelgate.test', to: [email] })
  t.same(mail.auth, { username: 'bot@modelgate.test', password: 'smtp-secret' })
  const code = codeIn(mail)
  t.match(mail.text, `Your verification code is: ${code}`)
  t.match(mail.text, 'valid for 3 minutes')
  t.match(mail.html, `<strong>${code}</strong>`)

  const wrong = code === '000000' ? '111111' : '000000'
  t.same(await register(app, { username: 'alice', password: 'password123', email, verification_code: wrong }), { success: false, message: 'Verification code wrong or expired' })
  t.equal((await register(app, { username: 'alice', password: 'password123', email, verification_code: wrong }, { headers: {} })).message, '验证码错误或已过期')
  t.equal(await userRow(app, 'alice'), undefined)

  t.same(await register(app, { username: 'alice', password: 'password123', email, verification_code: code }), { success: true, message: 'Registered', data: null })
  t.equal((await userRow(app, 'alice'))!.email, email)

  t.same(await register(app, { username: 'bob', password: 'password123', email, verification_code: code }), { success: false, message: 'Email already in use' })
  await softDeleteUser(app.db, (await userRow(app, 'alice'))!.id)
  t.same(await register(app, { username: 'bob', password: 'password123', email, verification_code: code }), { success: false, message: 'Verification code wrong or expired' },
    'the code was spent: with the address free again it still does not work twice')
})

t.test('the code mail follows the request language', async (t) => {
  const app = await buildWithMail(t, { SystemName: 'Acme AI' })
  const email = 'verify-zh@example.com'
  t.same(await requestCode(app, email, {}), { success: true, message: '验证码发送成功', data: null, status: 200 })
  const mail = smtp.lastTo(email)!
  t.equal(mail.subject, 'Acme AI 邮箱验证邮件')
  t.match(mail.text, `您的验证码为：${codeIn(mail)}`)
  t.match(mail.text, '3 分钟内有效')
})

t.test('a code is valid for 3 minutes and refused once expired', async (t) => {
  const app = await buildWithMail(t, { EmailVerificationEnabled: 'true' })
  const email = 'verify-expire@example.com'
  await requestCode(app, email)
  const code = codeIn(smtp.lastTo(email))
  const ttl = await app.redis.pttl(verifyKey('email', email))
  t.ok(ttl > 175_000 && ttl <= 180_000, `lives 180 s (${ttl} ms left)`)
  // The 3 minutes pass.
  await app.redis.pexpire(verifyKey('email', email), 1)
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(await register(app, { username: 'alice', password: 'password123', email, verification_code: code }), { success: false, message: 'Verification code wrong or expired' })
  t.equal(await userRow(app, 'alice'), undefined)
})

t.test('five wrong guesses burn a code', async (t) => {
  const app = await buildWithMail(t, { EmailVerificationEnabled: 'true' })
  const four = 'verify-four@example.com'
  const five = 'verify-five@example.com'
  await requestCode(app, four)
  await requestCode(app, five)
  const codes = { four: codeIn(smtp.lastTo(four)), five: codeIn(smtp.lastTo(five)) }
  const wrongFor = (code: string) => (code === '123456' ? '654321' : '123456')
  for (let i = 0; i < 4; i++) await register(app, { username: 'alice', password: 'password123', email: four, verification_code: wrongFor(codes.four) })
  for (let i = 0; i < 5; i++) await register(app, { username: 'bob', password: 'password123', email: five, verification_code: wrongFor(codes.five) })
  t.equal((await register(app, { username: 'alice', password: 'password123', email: four, verification_code: codes.four })).success, true, 'four wrong tries leave the code usable')
  t.same(await register(app, { username: 'bob', password: 'password123', email: five, verification_code: codes.five }), { success: false, message: 'Verification code wrong or expired' }, 'the fifth wrong try burnt it')
})

t.test('a second code within 30 seconds is refused; after that the new code replaces the old one', async (t) => {
  const app = await buildWithMail(t, { EmailVerificationEnabled: 'true' })
  const email = 'verify-resend@example.com'
  await requestCode(app, email)
  const first = codeIn(smtp.lastTo(email))
  const again = await requestCode(app, email)
  t.equal(again.success, false)
  const seconds = Number(/^Please wait (\d+) seconds before sending again$/.exec(again.message)?.[1])
  t.ok(seconds >= 29 && seconds <= 30, `says how long to wait (${again.message})`)
  t.match((await requestCode(app, email, {})).message, /^请 \d+ 秒后再重新发送$/)
  t.equal(mailsTo(email).length, 1, 'no second mail')
  const cooldown = await app.redis.pttl(cooldownKey('email', email))
  t.ok(cooldown > 25_000 && cooldown <= 30_000, `the server remembers the send for 30 s (${cooldown} ms left)`)

  // The 30 seconds pass.
  await app.redis.del(cooldownKey('email', email))
  t.equal((await requestCode(app, email)).success, true)
  t.equal(mailsTo(email).length, 2)
  const second = codeIn(smtp.lastTo(email))
  if (second !== first) {
    t.same(await register(app, { username: 'alice', password: 'password123', email, verification_code: first }), { success: false, message: 'Verification code wrong or expired' }, 'the old code no longer works')
  }
  t.equal((await register(app, { username: 'alice', password: 'password123', email, verification_code: second })).success, true)
})

t.test('the domain whitelist limits which addresses get a code', async (t) => {
  const app = await buildWithMail(t, { EmailDomainRestrictionEnabled: 'true', EmailDomainWhitelist: 'example.com, Corp.Example ,' })
  t.same(await requestCode(app, 'dom@other.org'), {
    success: false, message: 'The administrator allows only whitelisted email domains, and other.org is not on the list', status: 200
  })
  t.match((await requestCode(app, 'dom@other.org', {})).message, /^管理员启用了邮箱域名白名单/)
  t.equal((await requestCode(app, 'dom@sub.example.com')).success, false, 'a subdomain is not the listed domain')
  t.equal(mailsTo('dom@other.org').length, 0)
  t.equal((await requestCode(app, 'dom@corp.example')).success, true)
  t.equal((await requestCode(app, 'dom@example.com')).success, true)

  await app.saveOptions({ EmailDomainRestrictionEnabled: 'false' })
  t.equal((await requestCode(app, 'dom@other.org')).success, true, 'with the switch off any domain is fine')
  t.equal(mailsTo('dom@other.org').length, 1)
})

t.test('the alias restriction refuses a + in the address', async (t) => {
  const app = await buildWithMail(t, { EmailAliasRestrictionEnabled: 'true' })
  const res = await requestCode(app, 'alias+tag@example.com')
  t.equal(res.success, false)
  t.equal(res.message, 'The administrator does not allow email aliases: the address must not contain "+"')
  t.match((await requestCode(app, 'alias+tag@example.com', {})).message, /^管理员已启用邮箱地址别名限制/)
  t.equal(mailsTo('alias+tag@example.com').length, 0)
  t.equal((await requestCode(app, 'alias.plain@example.com')).success, true)

  await app.saveOptions({ EmailAliasRestrictionEnabled: 'false' })
  t.equal((await requestCode(app, 'alias+tag@example.com')).success, true)
  t.equal(mailsTo('alias+tag@example.com').length, 1)
})

t.test('a code is refused for a malformed address, an address in use, or without SMTP', async (t) => {
  const app = await buildWithMail(t)
  for (const email of ['', 'not-an-email', 'a@b', 'a,b@example.com', 'x@example.com, y@example.com', 'a b@example.com', '<a@example.com>']) {
    t.same(await requestCode(app, email), { success: false, message: 'Invalid email address', status: 200 }, JSON.stringify(email))
  }
  await createAccount(app, { username: 'holder', password: 'password123', email: 'taken@example.com' })
  t.same(await requestCode(app, 'Taken@example.com'), { success: false, message: 'Email already in use', status: 200 })
  t.equal((await requestCode(app, 'taken@example.com', {})).message, '邮箱地址已被占用')
  t.equal(mailsTo('taken@example.com').length, 0)

  const bare = await build(t)
  t.same(await requestCode(bare, 'nosmtp@example.com'), { success: false, message: 'SMTP is not configured; please contact the administrator', status: 200 })
  t.equal((await requestCode(bare, 'nosmtp@example.com')).message, 'SMTP is not configured; please contact the administrator', 'a failed send does not start the cooldown')

  await bare.saveOptions({ SMTPServer: '127.0.0.1', SMTPPort: '1', SMTPFrom: 'noreply@modelgate.test' })
  t.same(await requestCode(bare, 'nosmtp@example.com'), { success: false, message: 'Failed to send the mail; please try again later', status: 200 })
  t.equal(await bare.redis.exists(verifyKey('email', 'nosmtp@example.com')), 0, 'no code is left behind when the mail failed')
})

t.test('Turnstile guards registration, codes and reset mails when enabled', async (t) => {
  const seen: Array<Record<string, string>> = []
  const siteverify: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body))
      seen.push(form)
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ success: form['secret'] === 'ts-secret' && form['response'] === 'good-token' }))
    })
  })
  await new Promise<void>((resolve) => siteverify.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => siteverify.close(() => resolve())))
  const url = `http://127.0.0.1:${(siteverify.address() as AddressInfo).port}/siteverify`
  const app = await buildWithMail(t, { TurnstileCheckEnabled: 'true', TurnstileSecretKey: 'ts-secret' }, { TURNSTILE_VERIFY_URL: url })

  const body = { username: 'alice', password: 'password123' }
  t.same(await register(app, body), { success: false, message: 'Turnstile token is empty; please retry in a few seconds' })
  t.equal((await register(app, body, { headers: {} })).message, 'Turnstile token 为空，请稍后重试')
  t.equal(seen.length, 0, 'no token, no call to siteverify')
  t.same(await register(app, body, { query: '?turnstile=bad-token' }), { success: false, message: 'Turnstile verification failed; please refresh and retry' })
  t.equal(await userRow(app, 'alice'), undefined)
  t.same(await register(app, body, { query: '?turnstile=good-token' }), { success: true, message: 'Registered', data: null })
  t.match(seen.at(-1), { secret: 'ts-secret', response: 'good-token' })

  t.equal((await requestCode(app, 'ts@example.com')).message, 'Turnstile token is empty; please retry in a few seconds')
  t.equal((await requestCode(app, 'ts@example.com', EN, { turnstile: 'bad-token' })).message, 'Turnstile verification failed; please refresh and retry')
  t.equal(mailsTo('ts@example.com').length, 0)
  t.equal((await requestCode(app, 'ts@example.com', EN, { turnstile: 'good-token' })).success, true)
  t.equal(mailsTo('ts@example.com').length, 1)

  await createAccount(app, { username: 'tsreset', password: 'password123', email: 'ts-reset@example.com' })
  t.equal((await get(app, '/api/reset_password', { email: 'ts-reset@example.com' })).message, 'Turnstile token is empty; please retry in a few seconds')
  t.equal((await get(app, '/api/reset_password', { email: 'ts-reset@example.com', turnstile: 'bad-token' })).message, 'Turnstile verification failed; please refresh and retry')
  t.equal((await get(app, '/api/reset_password', { email: 'ts-reset@example.com', turnstile: 'good-token' })).success, true)
  t.equal(mailsTo('ts-reset@example.com').length, 1)
})

const INVITE_OPTIONS = { QuotaForNewUser: '100', QuotaForInvitee: '50', QuotaForInviter: '30' }

async function inviter (app: FastifyInstance): Promise<{ id: number, affCode: string }> {
  const s = await userSession(app, 'inviter')
  const aff = (await app.inject({ url: '/api/user/aff', headers: s.headers })).json()
  return { id: s.user.id, affCode: aff.data }
}

t.test('an invite code credits the new user and the inviter their configured quota', async (t) => {
  const app = await build(t)
  await app.saveOptions(INVITE_OPTIONS)
  const { id, affCode } = await inviter(app)

  t.equal((await register(app, { username: 'plain', password: 'password123' })).success, true)
  t.match(await userRow(app, 'plain'), { quota: 100, inviter_id: 0 }, 'QuotaForNewUser only')
  t.equal((await register(app, { username: 'stranger', password: 'password123', aff_code: 'NOSUCHCODE' })).success, true)
  t.match(await userRow(app, 'stranger'), { quota: 100, inviter_id: 0 }, 'an unknown code is ignored')

  t.equal((await register(app, { username: 'invitee', password: 'password123', aff_code: affCode })).success, true)
  t.match(await userRow(app, 'invitee'), { quota: 150, inviter_id: id }, 'QuotaForNewUser + QuotaForInvitee')
  t.match(await userRow(app, 'inviter'), { aff_count: 1, aff_quota: 30, aff_history_quota: 30 }, 'QuotaForInviter')

  t.equal((await register(app, { username: 'invitee', password: 'password123', aff_code: affCode })).success, false)
  t.match(await userRow(app, 'inviter'), { aff_count: 1, aff_quota: 30 }, 'a refused registration credits nobody')
})

t.test('ten concurrent registrations with one invite code credit the inviter ten times exactly', async (t) => {
  const app = await build(t)
  await app.saveOptions(INVITE_OPTIONS)
  const { id, affCode } = await inviter(app)
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => register(app, { username: `inv${i}`, password: 'password123', aff_code: affCode })))
  t.same(results.map((r) => r.success), Array(10).fill(true))
  t.match(await userRow(app, 'inviter'), { aff_count: 10, aff_quota: 300, aff_history_quota: 300 })
  const invitees = await app.db.selectFrom('users').select(['quota']).where('inviter_id', '=', id).execute()
  t.same(invitees.map((u) => u.quota), Array(10).fill(150))
})

t.test('ten concurrent registrations of one username make one account and credit the inviter once', async (t) => {
  const app = await build(t)
  await app.saveOptions(INVITE_OPTIONS)
  const { affCode } = await inviter(app)
  const results = await Promise.all(Array.from({ length: 10 }, () => register(app, { username: 'samename', password: 'password123', aff_code: affCode })))
  t.equal(results.filter((r) => r.success).length, 1)
  t.same(results.filter((r) => !r.success).map((r) => r.message), Array(9).fill('Username already exists'))
  const rows = await app.db.selectFrom('users').select('id').where('username', '=', 'samename').execute()
  t.equal(rows.length, 1)
  t.match(await userRow(app, 'inviter'), { aff_count: 1, aff_quota: 30, aff_history_quota: 30 })
})

t.test('registration is rate limited per address', async (t) => {
  const app = await build(t)
  for (let i = 0; i < 20; i++) t.equal((await register(app, { username: 'x'.repeat(13), password: 'password123' })).success, false)
  const res = await app.inject({ method: 'POST', url: '/api/user/register', payload: { username: 'alice', password: 'password123' }, headers: EN })
  t.equal(res.statusCode, 429)
  t.same(res.json(), { success: false, message: 'Too many requests, please try again later' })
})

t.test('a password reset mails a single-use link that sets a new password and ends every session', async (t) => {
  const app = await buildWithMail(t, { ServerAddress: 'https://console.example.com/', SystemName: 'Acme AI' })
  const email = 'reset-me@example.com'
  const user = await createAccount(app, { username: 'resetme', password: 'password123', email })
  await app.db.updateTable('users').set({ password_is_default: true }).where('id', '=', user.id).execute()
  const old = await login(app, 'resetme', 'password123')
  t.equal((await app.inject({ url: '/api/user/self', headers: old.headers })).statusCode, 200)

  t.same(await get(app, '/api/reset_password', { email: 'Reset-Me@example.com' }), { success: true, message: 'Password reset mail sent; please check your inbox', data: null, status: 200 })
  const mail = smtp.lastTo(email)!
  t.equal(mail.subject, 'Acme AI password reset')
  t.match(mail.headers['from'], /Acme AI.*<noreply@modelgate\.test>/)
  t.match(mail.text, 'valid for 15 minutes')
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)![0])
  t.equal(`${link.origin}${link.pathname}`, 'https://console.example.com/user/reset', 'ServerAddress without its trailing slash, then /user/reset')
  t.equal(link.searchParams.get('email'), email)
  const token = link.searchParams.get('token')!
  t.ok(token.length >= 43, 'at least 32 random bytes')
  t.match(mail.html, 'https://console.example.com/user/reset?email=')
  const ttl = await app.redis.pttl(verifyKey('reset', email))
  t.ok(ttl > 890_000 && ttl <= 900_000, `the link lives 15 minutes (${ttl} ms left)`)
  t.not(await app.redis.get(verifyKey('reset', email)), token, 'only a hash of the token is stored')

  t.same((await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email, token: `${token}x` }, headers: EN })).json(),
    { success: false, message: 'Reset link invalid or expired' })
  const res = (await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email, token }, headers: EN })).json()
  t.equal(res.success, true, 'a wrong token before did not spend the real one')
  t.equal(res.message, 'Password reset; sign in with the new password and change it')
  const password = res.data as string
  t.match(password, /^[A-Za-z0-9]{12}$/)

  t.equal((await app.inject({ url: '/api/user/self', headers: old.headers })).statusCode, 401, 'the old session is over')
  const fresh = await login(app, 'resetme', password)
  t.equal(fresh.user.id, user.id, 'the new password signs in')
  t.equal((fresh.user as unknown as { password_is_default: boolean }).password_is_default, false)
  t.equal((await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'resetme', password: 'password123' } })).json().success, false, 'the old password does not')

  t.same((await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email, token } })).json(), { success: false, message: '重置链接非法或已过期' }, 'the link works once')
})

t.test('a reset link is refused once expired, and the mail follows the request language and origin', async (t) => {
  const app = await buildWithMail(t, { SystemName: 'Acme AI' })
  const email = 'reset-expire@example.com'
  await createAccount(app, { username: 'expire', password: 'password123', email })
  const res = await app.inject({ url: `/api/reset_password?email=${email}`, headers: { host: 'localhost:3001' } })
  t.same(res.json(), { success: true, message: '重置邮件发送成功，请检查邮箱', data: null })
  const mail = smtp.lastTo(email)!
  t.equal(mail.subject, 'Acme AI 密码重置')
  t.match(mail.text, '15 分钟内有效')
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)![0])
  t.equal(`${link.origin}${link.pathname}`, 'http://localhost:3001/user/reset', 'without ServerAddress, on this machine, the request origin is used')

  // The 15 minutes pass.
  await app.redis.pexpire(verifyKey('reset', email), 1)
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same((await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email, token: link.searchParams.get('token') }, headers: EN })).json(),
    { success: false, message: 'Reset link invalid or expired' })
  t.ok(await login(app, 'expire', 'password123'), 'the password is unchanged')
})

t.test('a reset mail goes to no unknown address, answers as if it did, and waits 30 seconds after the last one', async (t) => {
  const app = await buildWithMail(t)
  // SEC-02: the answer does not tell whether the address has an account.
  t.same(await get(app, '/api/reset_password', { email: 'nobody@example.com' }), { success: true, message: 'Password reset mail sent; please check your inbox', data: null, status: 200 })
  t.match((await get(app, '/api/reset_password', { email: 'nobody@example.com' }, {})).message, /^请 (29|30) 秒后再重新发送$/)
  t.equal((await get(app, '/api/reset_password', { email: 'bad address' })).message, 'Invalid email address')
  t.equal(mailsTo('nobody@example.com').length, 0)

  const deleted = await createAccount(app, { username: 'gone', password: 'password123', email: 'gone@example.com' })
  await softDeleteUser(app.db, deleted.id)
  t.equal((await get(app, '/api/reset_password', { email: 'gone@example.com' })).success, true, 'a deregistered account: the same answer')
  t.equal(mailsTo('gone@example.com').length, 0, 'and no mail')

  const email = 'reset-twice@example.com'
  await createAccount(app, { username: 'twice', password: 'password123', email })
  t.equal((await get(app, '/api/reset_password', { email })).success, true)
  const again = await get(app, '/api/reset_password', { email })
  t.equal(again.success, false)
  t.match(again.message, /^Please wait (29|30) seconds before sending again$/)
  t.equal(mailsTo(email).length, 1)
  t.same((await app.inject({ method: 'POST', url: '/api/user/reset', payload: { email: 'nobody@example.com', token: 'x' }, headers: EN })).json(),
    { success: false, message: 'Reset link invalid or expired' })
})

t.test('a signed-in user binds an e-mail with a code mailed to it', async (t) => {
  const app = await buildWithMail(t)
  const s = await userSession(app, 'binder')
  // Binding (changing) the address needs a fresh secure verification (test/two-factor.test.ts).
  await verifySession(app, s.headers)
  const email = 'bind-me@example.com'
  const changes: ConfigChange[] = []
  app.onChange((c) => changes.push(c))

  t.equal((await get(app, '/api/oauth/email/bind', { email, code: '123456' }, {})).status, 401, 'signed-in users only')
  t.equal((await requestCode(app, email)).success, true)
  const code = codeIn(smtp.lastTo(email))
  const wrong = code === '000000' ? '111111' : '000000'
  t.same(await get(app, '/api/oauth/email/bind', { email, code: wrong }, { ...EN, ...s.headers }), { success: false, message: 'Verification code wrong or expired', status: 200 })
  t.same(await get(app, '/api/oauth/email/bind', { email: 'other@example.com', code }, { ...EN, ...s.headers }), { success: false, message: 'Verification code wrong or expired', status: 200 },
    'the code belongs to the address it was mailed to')

  const bound = await get(app, '/api/oauth/email/bind', { email: 'Bind-Me@example.com', code }, s.headers)
  t.equal(bound.success, true)
  t.equal(bound.message, '邮箱账户绑定成功')
  t.match(bound.data, { id: s.user.id, email })
  t.match((await app.inject({ url: '/api/user/self', headers: s.headers })).json().data, { email })
  for (let i = 0; i < 50 && !changes.some((c) => c.kind === 'user'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.same(changes.filter((c) => c.kind === 'user'), [{ kind: 'user', id: s.user.id }], 'the change is announced')

  t.equal((await get(app, '/api/oauth/email/bind', { email, code }, { ...EN, ...s.headers })).message, 'Verification code wrong or expired', 'the code works once')
  t.equal((await login(app, email, 'password123')).user.id, s.user.id, 'the bound address signs in')
})

t.test('binding an e-mail that another account holds is refused', async (t) => {
  const app = await buildWithMail(t)
  const s = await userSession(app, 'binder')
  await verifySession(app, s.headers)
  const email = 'bind-race@example.com'
  await requestCode(app, email)
  const code = codeIn(smtp.lastTo(email))
  // Another account takes the address after the code was sent.
  await createAccount(app, { username: 'holder', password: 'password123', email })
  t.same(await get(app, '/api/oauth/email/bind', { email, code }, { ...EN, ...s.headers }), { success: false, message: 'Email already in use', status: 200 })
  t.equal((await get(app, '/api/oauth/email/bind', { email, code }, s.headers)).message, '邮箱地址已被占用')
  t.equal((await userRow(app, 'binder'))!.email, '')
})

t.test('every new route declares its access level', async (t) => {
  const app = await build(t)
  const level = (method: string, url: string) => app.routeAccess.find((r) => r.method === method && r.url === url)?.auth
  t.equal(level('POST', '/api/user/register'), 'public')
  t.equal(level('POST', '/api/user/reset'), 'public')
  t.equal(level('GET', '/api/verification'), 'public')
  t.equal(level('GET', '/api/reset_password'), 'public')
  t.equal(level('GET', '/api/oauth/email/bind'), 'user')
})

t.test('a reset link is never built from a forged Host header', async (t) => {
  const app = await build(t)
  const { row } = await userSession(app, 'hosted')
  await app.db.updateTable('users').set({ email: 'hosted@example.com' }).where('id', '=', row.id).execute()
  const res = await app.inject({ url: '/api/reset_password?email=hosted@example.com', headers: { host: 'evil.example', 'accept-language': 'en' } })
  t.same(res.json(), { success: false, message: 'Password reset needs the server address; ask the administrator to set it in the system settings' })
})
