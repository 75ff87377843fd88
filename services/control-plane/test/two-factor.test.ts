import { ROLES } from '@modelgate/contracts'
import { createHash, createHmac } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Secret, TOTP } from 'otpauth'
import t from 'tap'
import { verificationKey, VERIFICATION_TTL_S } from '../src/services/secure-verify.js'
import { FLOW_TTL_S, flowKey } from '../src/services/two-factor.js'
import { createAccount } from '../src/services/users.js'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const PASSWORD = 'password123'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers of many shapes, checked field by field
interface Answer { status: number, body: { success: boolean, message: string, data?: any }, headers: LightMyRequestResponse['headers'] }

async function call (app: FastifyInstance, headers: Record<string, string>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, remoteAddress?: string): Promise<Answer> {
  const res = await app.inject({ method, url, headers: { 'accept-language': 'en', ...headers }, ...(payload !== undefined ? { payload: payload as object } : {}), ...(remoteAddress !== undefined ? { remoteAddress } : {}) })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

const totp = (secret: string) => new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
const stepNow = () => Math.floor(Date.now() / 30_000)
const codeAtStep = (secret: string, step: number) => totp(secret).generate({ timestamp: step * 30_000 })

/**
 * A code the server accepts now: of the current time-step, or the next one when the current one
 * was used already (the window allows one step ahead). Two per user per 30 s.
 */
async function freshCode (app: FastifyInstance, userId: number, secret: string): Promise<string> {
  const row = await app.db.selectFrom('two_factor_auth').select('last_used_step').where('user_id', '=', userId).executeTakeFirst()
  const last = Number(row?.last_used_step ?? 0)
  const now = stepNow()
  if (last < now) return codeAtStep(secret, now)
  if (last < now + 1) return codeAtStep(secret, now + 1)
  throw new Error('no unused time-step left in the window')
}

/** Six digits no step in the window (-2..+2 around now) produces. */
function wrongCode (secret: string): string {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => codeAtStep(secret, stepNow() + d)))
  for (let n = 123456; ; n = (n + 111_111) % 1_000_000) {
    const code = String(n).padStart(6, '0')
    if (!near.has(code)) return code
  }
}

/** Sets up and enables 2FA for the session's user; returns the secret and the backup codes. */
async function enable2fa (app: FastifyInstance, s: Session): Promise<{ secret: string, backupCodes: string[] }> {
  const setup = await call(app, s.headers, 'POST', '/api/user/2fa/setup')
  if (setup.body.success !== true) throw new Error(`setup failed: ${setup.body.message}`)
  const { secret, backup_codes: backupCodes } = setup.body.data as { secret: string, backup_codes: string[] }
  const enabled = await call(app, s.headers, 'POST', '/api/user/2fa/enable', { code: await freshCode(app, s.user.id, secret) })
  if (enabled.body.success !== true) throw new Error(`enable failed: ${enabled.body.message}`)
  return { secret, backupCodes }
}

const sessionCookie = (a: Answer) => [a.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))

/** Signs in with the password (a 2FA account): the flow token. */
async function passwordStep (app: FastifyInstance, username: string, remoteAddress?: string): Promise<{ answer: Answer, flowToken: string }> {
  const answer = await call(app, {}, 'POST', '/api/user/login', { username, password: PASSWORD }, remoteAddress)
  return { answer, flowToken: String(answer.body.data?.flow_token ?? '') }
}

/** The Redis key of the session's secure verification (by the JWT's token id). */
function verifyKeyOf (app: FastifyInstance, s: Session): string {
  const claims = app.jwt.decode<{ jti: string }>(s.headers['cookie']!.replace(/^session=/, ''))
  return verificationKey(`jti:${claims!.jti}`)
}

t.test('a user sets up 2FA, then signs in with the password and a code, or a backup code once', async (t) => {
  const app = await build(t)
  const alice = await userSession(app, 'alice')

  t.match((await call(app, alice.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: false, pending: false, backup_codes_remaining: 0, setup_required: false })
  const setup = await call(app, alice.headers, 'POST', '/api/user/2fa/setup')
  const { secret, qr_code_data: uri, backup_codes: codes } = setup.body.data as { secret: string, qr_code_data: string, backup_codes: string[] }
  t.match(secret, /^[A-Z2-7]{32}$/, 'a 160-bit base32 secret')
  t.ok(uri.startsWith('otpauth://totp/ModelGate:alice?'), `the QR data names the issuer and the user (${uri})`)
  const params = new URL(uri).searchParams
  t.equal(params.get('secret'), secret)
  t.equal(params.get('issuer'), 'ModelGate', 'issuer is the SystemName option')
  t.equal(codes.length, 10, 'ten backup codes')
  t.equal(new Set(codes).size, 10, 'all different')
  t.match((await call(app, alice.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: false, pending: true })

  const stored = await app.db.selectFrom('two_factor_auth').selectAll().where('user_id', '=', alice.user.id).executeTakeFirstOrThrow()
  t.ok(stored.secret_encrypted.startsWith('v1:') && !stored.secret_encrypted.includes(secret), 'the secret is sealed at rest')
  const hashes = await app.db.selectFrom('two_factor_backup_codes').select('code_hash').where('user_id', '=', alice.user.id).execute()
  t.equal(hashes.length, 10)
  t.notOk(hashes.some((h) => codes.some((c) => h.code_hash.includes(c) || h.code_hash.includes(c.replace(/-/g, '')))), 'backup codes are stored hashed')

  // Pending: the password alone still signs in.
  const before = await call(app, {}, 'POST', '/api/user/login', { username: 'alice', password: PASSWORD })
  t.equal(before.body.data.username, 'alice', 'not enabled yet: a normal sign-in')

  t.equal((await call(app, alice.headers, 'POST', '/api/user/2fa/enable', { code: wrongCode(secret) })).body.success, false, 'a wrong code does not enable it')
  const enableCode = await freshCode(app, alice.user.id, secret)
  const enabled = await call(app, alice.headers, 'POST', '/api/user/2fa/enable', { code: enableCode })
  t.equal(enabled.body.success, true, enabled.body.message)
  t.match((await call(app, alice.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: true, pending: false, backup_codes_remaining: 10 })
  t.equal((await call(app, alice.headers, 'POST', '/api/user/2fa/setup')).body.success, false, 'no new setup while enabled')

  // The password step: no cookie, a flow token.
  const { answer, flowToken } = await passwordStep(app, 'alice')
  t.same(Object.keys(answer.body.data).sort(), ['flow_token', 'require_2fa'])
  t.equal(answer.body.data.require_2fa, true)
  t.equal(answer.body.success, true)
  t.equal(sessionCookie(answer), undefined, 'no session cookie before the second step')
  const ttl = await app.redis.ttl(flowKey(flowToken))
  t.ok(ttl > 0 && ttl <= FLOW_TTL_S, `the flow token expires (${ttl} s)`)

  const replay = await call(app, {}, 'POST', '/api/user/login/2fa', { code: enableCode, flow_token: flowToken })
  t.equal(replay.body.success, false, 'the code that enabled 2FA is not accepted again (same time-step)')
  t.equal(sessionCookie(replay), undefined)
  const code = await freshCode(app, alice.user.id, secret)
  const done = await call(app, {}, 'POST', '/api/user/login/2fa', { code, flow_token: flowToken })
  t.equal(done.body.success, true, done.body.message)
  t.equal(done.body.message, 'Logged in', 'the same answer as a password sign-in')
  t.match(done.body.data, { id: alice.user.id, username: 'alice' })
  t.notOk('password_hash' in done.body.data)
  const cookie = sessionCookie(done)
  t.ok(cookie, 'the session cookie comes with the second step')
  const headers = { cookie: cookie!.split(';')[0]!, 'new-api-user': String(alice.user.id) }
  t.equal((await call(app, headers, 'GET', '/api/user/self')).body.data.username, 'alice', 'the session works')

  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code, flow_token: flowToken })).body.message,
    'The sign-in step has expired; sign in with your password again', 'the flow token is single use')

  const second = await passwordStep(app, 'alice')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code, flow_token: second.flowToken })).body.success, false, 'a replayed code is refused in a new flow too')
  const withBackup = await call(app, {}, 'POST', '/api/user/login/2fa', { code: ` ${codes[0]!.toUpperCase()} `, flow_token: second.flowToken })
  t.equal(withBackup.body.success, true, 'a backup code signs in (case and spaces do not matter)')
  t.ok(sessionCookie(withBackup))
  t.match((await call(app, alice.headers, 'GET', '/api/user/2fa/status')).body.data, { backup_codes_remaining: 9 })

  const third = await passwordStep(app, 'alice')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: codes[0], flow_token: third.flowToken })).body.success, false, 'a backup code works once')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: codes[1], flow_token: 'x'.repeat(32) })).body.success, false, 'an unknown flow token is refused')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: codes[1], flow_token: third.flowToken })).body.success, true, 'another backup code still works')

  // Regenerating: the old codes stop working.
  const regen = await call(app, alice.headers, 'POST', '/api/user/2fa/backup_codes', { code: codes[2] })
  t.equal(regen.body.success, true, regen.body.message)
  const fresh = regen.body.data.backup_codes as string[]
  t.equal(fresh.length, 10)
  t.match((await call(app, alice.headers, 'GET', '/api/user/2fa/status')).body.data, { backup_codes_remaining: 10 })
  const fourth = await passwordStep(app, 'alice')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: codes[3], flow_token: fourth.flowToken })).body.success, false, 'an old backup code is invalid after regeneration')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: fresh[0], flow_token: fourth.flowToken })).body.success, true, 'a new one works')
})

t.test('an OAuth sign-in of a 2FA account needs the second step too', async (t) => {
  const app = await build(t)
  const botToken = '123456:two-factor-bot-token'
  await app.saveOptions({ TelegramOAuthEnabled: 'true', TelegramBotToken: botToken })
  const holly = await userSession(app, 'holly')
  await app.db.updateTable('users').set({ telegram_id: '4711' }).where('id', '=', holly.user.id).execute()
  const { backupCodes } = await enable2fa(app, holly)

  const fields = { id: '4711', first_name: 'Holly', auth_date: String(Math.floor(Date.now() / 1000)) }
  const check = Object.keys(fields).sort().map((k) => `${k}=${fields[k as keyof typeof fields]}`).join('\n')
  const hash = createHmac('sha256', createHash('sha256').update(botToken).digest()).update(check).digest('hex')
  const res = await app.inject({ url: `/api/oauth/telegram/login?${new URLSearchParams({ ...fields, hash }).toString()}`, headers: { 'accept-language': 'en' } })
  const answer: Answer = { status: res.statusCode, body: res.json(), headers: res.headers }
  t.equal(answer.body.success, true)
  t.equal(answer.body.data.require_2fa, true, 'the provider\'s word is only the first factor')
  t.equal(sessionCookie(answer), undefined, 'no session cookie yet')
  const done = await call(app, {}, 'POST', '/api/user/login/2fa', { code: backupCodes[0], flow_token: answer.body.data.flow_token })
  t.equal(done.body.success, true, done.body.message)
  t.equal(done.body.data.username, 'holly')
  t.ok(sessionCookie(done), 'signed in after the code')
})

t.test('the flow token expires, and a password change in between ends it', async (t) => {
  const app = await build(t)
  const bob = await userSession(app, 'bob')
  const { backupCodes } = await enable2fa(app, bob)

  const { flowToken } = await passwordStep(app, 'bob')
  // Five minutes pass: Redis drops the key when its time runs out.
  await app.redis.expire(flowKey(flowToken), 0)
  const late = await call(app, {}, 'POST', '/api/user/login/2fa', { code: backupCodes[0], flow_token: flowToken })
  t.equal(late.body.message, 'The sign-in step has expired; sign in with your password again')
  t.equal(sessionCookie(late), undefined)

  const again = await passwordStep(app, 'bob')
  await app.db.updateTable('users').set((eb) => ({ session_version: eb('session_version', '+', 1) })).where('id', '=', bob.user.id).execute()
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: backupCodes[0], flow_token: again.flowToken })).body.success, false, 'a flow of an older session version is refused')
  t.match((await call(app, bob.headers, 'GET', '/api/user/2fa/status')).status, 401, 'the old session ended too')
  const { flowToken: third } = await passwordStep(app, 'bob')
  t.equal((await call(app, {}, 'POST', '/api/user/login/2fa', { code: backupCodes[0], flow_token: third })).body.success, true, 'the backup code was not spent by the refused attempt')
})

t.test('wrong codes at the second step count toward the login lockout, with Retry-After', async (t) => {
  const app = await build(t)
  const carol = await userSession(app, 'carol')
  const { secret, backupCodes } = await enable2fa(app, carol)
  const ip = '198.51.100.7'
  const { flowToken } = await passwordStep(app, 'carol', ip)
  for (let i = 0; i < 10; i++) {
    const res = await call(app, {}, 'POST', '/api/user/login/2fa', { code: i % 2 === 0 ? wrongCode(secret) : 'aaaa-bbbb-cccc-dddd', flow_token: flowToken }, ip)
    t.equal(res.body.message, 'Invalid or already used verification code', `wrong code ${i + 1} refused`)
  }
  const locked = await call(app, {}, 'POST', '/api/user/login/2fa', { code: backupCodes[0], flow_token: flowToken }, ip)
  t.equal(locked.status, 429, 'locked after ten wrong codes')
  const retryAfter = Number(locked.headers['retry-after'])
  t.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter} s`)
  t.match(locked.body.message, /Too many failed login attempts/)
  t.equal(sessionCookie(locked), undefined, 'even a right code is refused while locked')
  const pw = await call(app, {}, 'POST', '/api/user/login', { username: 'carol', password: PASSWORD }, '203.0.113.9')
  t.equal(pw.status, 429, 'the password step of the same name is locked too, from another address')
  t.match((await call(app, carol.headers, 'GET', '/api/user/2fa/status')).body.data, { locked: true })

  // The address's counter: another user's codes from the same address.
  await app.redis.del('login:fail:carol')
  const dave = await userSession(app, 'dave')
  const daveFactor = await enable2fa(app, dave)
  const daveFlow = await passwordStep(app, 'dave', ip)
  let status = 200
  for (let i = 0; i < 12 && status === 200; i++) {
    status = (await call(app, {}, 'POST', '/api/user/login/2fa', { code: wrongCode(daveFactor.secret), flow_token: daveFlow.flowToken }, ip)).status
  }
  t.equal(status, 429, 'twenty failures from one address lock it whatever the name')
})

t.test('secure verification: required for disabling 2FA, granted by password or code, and it expires', async (t) => {
  const app = await build(t)
  const erin = await userSession(app, 'erin')
  const { secret, backupCodes } = await enable2fa(app, erin)

  const refused = await call(app, erin.headers, 'POST', '/api/user/2fa/disable', { code: backupCodes[0] })
  t.equal(refused.status, 403)
  t.same(refused.body.data, { require_verification: true }, 'a machine-readable flag')
  t.equal(refused.body.message, 'This operation needs a fresh verification: confirm your password or a two-factor code first')
  t.same((await call(app, erin.headers, 'GET', '/api/verify/status')).body.data, { verified: false, expires_at: 0, methods: ['password', '2fa'] })

  t.equal((await call(app, erin.headers, 'POST', '/api/verify', { method: 'password', value: 'wrong-password' })).body.message, 'Wrong password')
  t.equal((await call(app, erin.headers, 'POST', '/api/verify', { method: 'passkey', value: 'x' })).status, 400, 'an unknown method is refused')
  const ok = await call(app, erin.headers, 'POST', '/api/verify', { method: 'password', value: PASSWORD })
  t.equal(ok.body.success, true, ok.body.message)
  const now = Math.floor(Date.now() / 1000)
  t.ok(Math.abs(ok.body.data.expires_at - (now + VERIFICATION_TTL_S)) <= 2, 'verified for five minutes')
  const key = verifyKeyOf(app, erin)
  const ttl = await app.redis.ttl(key)
  t.ok(ttl > VERIFICATION_TTL_S - 5 && ttl <= VERIFICATION_TTL_S, `the Redis key expires on its own (${ttl} s)`)
  t.match((await call(app, erin.headers, 'GET', '/api/verify/status')).body.data, { verified: true })

  // Another session of the same user is not verified.
  const other = await login(app, 'erin', PASSWORD).catch(() => undefined)
  t.equal(other, undefined, 'a 2FA account does not sign in with the password alone')

  // Five minutes pass (the stored expiry is in the past; Redis may not have dropped the key yet).
  await app.redis.set(key, `${erin.user.id}:${now - 1}`, 'KEEPTTL')
  t.match((await call(app, erin.headers, 'GET', '/api/verify/status')).body.data, { verified: false })
  t.equal((await call(app, erin.headers, 'POST', '/api/user/2fa/disable', { code: backupCodes[0] })).status, 403, 'an expired verification no longer counts')
  await app.redis.expire(key, 0)
  t.equal((await call(app, erin.headers, 'POST', '/api/user/2fa/disable', { code: backupCodes[0] })).status, 403, 'nor a dropped one')

  const byCode = await call(app, erin.headers, 'POST', '/api/verify', { method: '2fa', value: await freshCode(app, erin.user.id, secret) })
  t.equal(byCode.body.success, true, 'a TOTP code verifies too')
  t.equal((await call(app, erin.headers, 'POST', '/api/user/2fa/disable', { code: wrongCode(secret) })).body.success, false, 'disabling still needs a right code')
  const disabled = await call(app, erin.headers, 'POST', '/api/user/2fa/disable', { code: backupCodes[0] })
  t.equal(disabled.body.success, true, disabled.body.message)
  t.match((await call(app, erin.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: false, pending: false, backup_codes_remaining: 0 })
  t.equal(await app.db.selectFrom('two_factor_backup_codes').select('id').where('user_id', '=', erin.user.id).executeTakeFirst(), undefined, 'backup codes removed')
  t.ok(await login(app, 'erin', PASSWORD), 'the password alone signs in again')
  t.same((await call(app, erin.headers, 'GET', '/api/verify/status')).body.data.methods, ['password'])
  t.equal((await call(app, erin.headers, 'POST', '/api/verify', { method: '2fa', value: '123456' })).body.message, 'This verification method is not available for your account')
})

t.test('wrong answers to a verification count toward the lockout', async (t) => {
  const app = await build(t)
  const frank = await userSession(app, 'frank')
  const ip = '198.51.100.20'
  for (let i = 0; i < 10; i++) {
    t.equal((await call(app, frank.headers, 'POST', '/api/verify', { method: 'password', value: `nope-${i}` }, ip)).body.success, false)
  }
  const locked = await call(app, frank.headers, 'POST', '/api/verify', { method: 'password', value: PASSWORD }, ip)
  t.equal(locked.status, 429, 'locked')
  t.ok(Number(locked.headers['retry-after']) > 0, 'with Retry-After')
  t.equal((await call(app, {}, 'POST', '/api/user/login', { username: 'frank', password: PASSWORD }, '203.0.113.50')).status, 429, 'and the sign-in of the name')
})

t.test('changing the password, the email or a credential option needs a fresh verification', async (t) => {
  const app = await build(t)
  const gina = await userSession(app, 'gina')
  const change = { password: 'new-password-1', original_password: PASSWORD }
  const refused = await call(app, gina.headers, 'PUT', '/api/user/self', change)
  t.equal(refused.status, 403)
  t.same(refused.body.data, { require_verification: true })
  const bind = await call(app, gina.headers, 'GET', '/api/oauth/email/bind?email=gina@example.com&code=123456')
  t.same([bind.status, bind.body.data], [403, { require_verification: true }], 'binding an email too')
  t.equal((await call(app, gina.headers, 'PUT', '/api/user/self', { display_name: 'Gina' })).body.success, true, 'other profile changes do not')

  t.equal((await call(app, gina.headers, 'POST', '/api/verify', { method: 'password', value: PASSWORD })).body.success, true)
  t.equal((await call(app, gina.headers, 'GET', '/api/oauth/email/bind?email=gina@example.com&code=123456')).body.message,
    'Verification code wrong or expired', 'verified: the binding goes on to check the mailed code')
  const changed = await call(app, gina.headers, 'PUT', '/api/user/self', change)
  t.equal(changed.body.success, true, changed.body.message)

  // An account with nothing to verify with (OAuth, no password) sets its first password directly.
  const oauthOnly = await createAccount(app, { username: 'gh_user', github_id: '4242' })
  const token = 'gh-user-access-token-0123456789'
  await app.db.updateTable('users').set({ access_token_hash: app.accessTokenHash(token) }).where('id', '=', oauthOnly.id).execute()
  const viaToken = { authorization: token, 'new-api-user': String(oauthOnly.id) }
  t.same((await call(app, viaToken, 'GET', '/api/verify/status')).body.data.methods, [])
  t.equal((await call(app, viaToken, 'PUT', '/api/user/self', { password: 'first-password' })).body.success, true, 'no verification possible: none asked')
  t.equal((await call(app, viaToken, 'PUT', '/api/user/self', { password: 'second-password', original_password: 'first-password' })).status, 403, 'once it has a password, it is asked')

  const root = await login(app, ROOT.username, ROOT.password)
  const secret = await call(app, root.headers, 'PUT', '/api/option/', { key: 'SMTPToken', value: 'smtp-secret' })
  t.same([secret.status, secret.body.data], [403, { require_verification: true }], 'replacing a credential option')
  t.same((await call(app, root.headers, 'PUT', '/api/option/', { key: 'SMTPToken', value: '', clear: true })).body.data, { require_verification: true }, 'clearing one')
  t.equal((await call(app, root.headers, 'PUT', '/api/option/', { key: 'SMTPToken', value: '' })).body.success, true, 'the blank a whole form sends back changes nothing and passes')
  t.equal((await call(app, root.headers, 'PUT', '/api/option/', { key: 'Notice', value: 'hello' })).body.success, true, 'other options need no verification')
  t.equal((await call(app, root.headers, 'POST', '/api/verify', { method: 'password', value: ROOT.password })).body.success, true)
  t.equal((await call(app, root.headers, 'PUT', '/api/option/', { key: 'SMTPToken', value: 'smtp-secret' })).body.success, true, 'verified: saved')
  const stored = await app.db.selectFrom('options').select('value').where('key', '=', 'SMTPToken').executeTakeFirst()
  t.equal(stored?.value, 'smtp-secret')
})

t.test('admins see 2FA statistics and reset it only for lower roles, with an audit entry', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const adminA = await userSession(app, 'admin_a', ROLES.admin)
  const adminB = await userSession(app, 'admin_b', ROLES.admin)
  const normal = await userSession(app, 'normal')
  await enable2fa(app, adminB)
  await enable2fa(app, normal)

  const stats = await call(app, adminA.headers, 'GET', '/api/user/2fa/stats')
  t.same(stats.body.data, { total_users: 4, enabled_users: 2, enabled_rate: 50 })
  t.equal((await call(app, normal.headers, 'GET', '/api/user/2fa/stats')).status, 403, 'not for normal users')

  const list = await call(app, adminA.headers, 'GET', '/api/user/?p=1&page_size=50')
  const byName = new Map((list.body.data.items as Array<{ username: string, two_fa_enabled: boolean }>).map((u) => [u.username, u.two_fa_enabled]))
  t.equal(byName.get('normal'), true, 'the user list shows 2FA status')
  t.equal(byName.get('admin_a'), false)
  t.equal((await call(app, adminA.headers, 'GET', `/api/user/${normal.user.id}`)).body.data.two_fa_enabled, true, 'and the user view')

  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${adminB.user.id}/2fa`)).status, 403, 'not on a peer admin')
  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${root.user.id}/2fa`)).status, 403, 'not on the super admin')
  t.equal((await call(app, normal.headers, 'DELETE', `/api/user/${adminA.user.id}/2fa`)).status, 403, 'not by a normal user')
  t.match((await call(app, adminB.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: true }, 'the peer keeps 2FA')

  const reset = await call(app, adminA.headers, 'DELETE', `/api/user/${normal.user.id}/2fa`)
  t.equal(reset.body.success, true, reset.body.message)
  t.equal((await call(app, normal.headers, 'GET', '/api/user/2fa/status')).status, 401, 'the user\'s sessions ended')
  const relogin = await login(app, 'normal', PASSWORD)
  t.match((await call(app, relogin.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: false }, 'the password alone signs in again')
  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${normal.user.id}/2fa`)).body.success, false, 'nothing left to reset')

  const audit = await app.db.selectFrom('audit_logs').selectAll().where('action', '=', '2fa.reset').execute()
  t.equal(audit.length, 1, 'one audit entry')
  t.match(audit[0], { actor_id: adminA.user.id, actor_name: 'admin_a', target_type: 'user', target_id: String(normal.user.id), changes: { two_fa_enabled: { before: true, after: false } } })

  const byRoot = await call(app, root.headers, 'DELETE', `/api/user/${adminB.user.id}/2fa`)
  t.equal(byRoot.body.success, true, 'the super admin resets an admin\'s')
})

t.test('TwoFactorRequiredForAdmins: admins without 2FA may only set it up', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const admin = await userSession(app, 'admin_c', ROLES.admin)
  const normal = await userSession(app, 'normal_c')
  t.equal((await call(app, root.headers, 'PUT', '/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'yes' })).body.success, false, 'a boolean option')
  t.equal((await call(app, root.headers, 'GET', '/api/channel/')).status, 200, 'off by default')
  t.equal((await call(app, root.headers, 'PUT', '/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'true' })).body.success, true)

  for (const [who, s] of [['root', root], ['an admin', admin]] as const) {
    const refused = await call(app, s.headers, 'GET', '/api/channel/')
    t.equal(refused.status, 403, `${who} without 2FA is refused`)
    t.same(refused.body.data, { require_2fa_setup: true }, 'with a machine-readable flag')
    t.equal(refused.body.message, 'Administrators must set up two-factor authentication before using the console')
    t.equal((await call(app, s.headers, 'GET', '/api/token/')).status, 403, 'every console call, not only admin ones')
    t.equal((await call(app, s.headers, 'GET', '/api/user/self')).status, 200, 'reading self is allowed')
    t.match((await call(app, s.headers, 'GET', '/api/user/2fa/status')).body.data, { enabled: false, setup_required: true })
  }
  t.equal((await call(app, normal.headers, 'GET', '/api/token/')).status, 200, 'normal users are not concerned')
  t.match((await call(app, normal.headers, 'GET', '/api/user/2fa/status')).body.data, { setup_required: false })

  await enable2fa(app, admin)
  t.equal((await call(app, admin.headers, 'GET', '/api/channel/')).status, 200, 'after setting up 2FA the admin gets through')
  t.equal((await call(app, root.headers, 'GET', '/api/channel/')).status, 403, 'root still does not')
  t.equal((await call(app, root.headers, 'GET', '/api/user/logout')).status, 200, 'signing out is allowed')
})
