import { ROLES } from '@modelgate/contracts'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Secret, TOTP } from 'otpauth'
import t from 'tap'
import { failuresKey, ipFailuresKey, MAX_FAILURES } from '../src/services/login-guard.js'
import { challengeKey, loginFlowKey } from '../src/services/passkeys.js'
import { build, login, ROOT, type Session, userSession, verifySession } from './helpers.js'
import { type Ceremony, type CreationOptions, type RequestOptions, SoftAuthenticator } from './soft-authenticator.js'

const ORIGIN = 'https://console.example.com'
const RP_ID = 'example.com'
const PAGE = { origin: ORIGIN }

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers of many shapes, checked field by field
interface Answer { status: number, body: { success: boolean, message: string, data?: any }, headers: LightMyRequestResponse['headers'] }

async function call (app: FastifyInstance, headers: Record<string, string>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, remoteAddress?: string): Promise<Answer> {
  const res = await app.inject({ method, url, headers: { 'accept-language': 'en', ...headers }, ...(payload !== undefined ? { payload: payload as object } : {}), ...(remoteAddress !== undefined ? { remoteAddress } : {}) })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

/** A control plane with passkeys on for `https://console.example.com` under the RP ID `example.com`. */
async function buildWithPasskeys (test: Parameters<typeof build>[0]): Promise<FastifyInstance> {
  const app = await build(test)
  await app.saveOptions({ PasskeyEnabled: 'true', PasskeyRPID: RP_ID, PasskeyOrigins: ORIGIN })
  return app
}

/** Registers a new passkey of `auth` for the session's user (verifying the session with the password first). */
async function register (app: FastifyInstance, s: Session, auth: SoftAuthenticator, ceremony: Ceremony = PAGE, name?: string) {
  await verifySession(app, s.headers)
  const begin = await call(app, s.headers, 'POST', '/api/user/passkey/register/begin')
  if (begin.body.success !== true) throw new Error(`register/begin failed: ${begin.body.message}`)
  const options = begin.body.data.options as CreationOptions
  const { credential, response } = auth.register(options, ceremony)
  const finish = await call(app, s.headers, 'POST', '/api/user/passkey/register/finish', { ...(name !== undefined ? { name } : {}), response })
  return { options, credential, response, finish }
}

/** A passwordless sign-in with `auth`: begin, the authenticator's answer, finish. */
async function passkeyLogin (app: FastifyInstance, auth: SoftAuthenticator, ceremony: Ceremony = PAGE, remoteAddress?: string) {
  const begin = await call(app, {}, 'POST', '/api/user/passkey/login/begin', undefined, remoteAddress)
  if (begin.body.success !== true) throw new Error(`login/begin failed: ${begin.body.message}`)
  const options = begin.body.data.options as RequestOptions
  const response = auth.assert(options, ceremony)
  const body = { flow_id: begin.body.data.flow_id as string, response }
  const finish = await call(app, {}, 'POST', '/api/user/passkey/login/finish', body, remoteAddress)
  return { options, body, finish }
}

/** The session a sign-in answer started (cookie plus New-Api-User), or undefined when none. */
function sessionOf (a: Answer): Session | undefined {
  const cookie = [a.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))
  if (cookie === undefined || a.body.success !== true) return undefined
  return { user: a.body.data, headers: { cookie: cookie.split(';')[0]!, 'new-api-user': String(a.body.data.id) } }
}

/** A secure verification with a passkey through verify/begin and verify/finish. */
async function passkeyVerify (app: FastifyInstance, s: Session, auth: SoftAuthenticator, ceremony: Ceremony = PAGE) {
  const begin = await call(app, s.headers, 'POST', '/api/user/passkey/verify/begin')
  if (begin.body.success !== true) throw new Error(`verify/begin failed: ${begin.body.message}`)
  const options = begin.body.data.options as RequestOptions
  const body = { response: auth.assert(options, ceremony) }
  return { options, body, finish: await call(app, s.headers, 'POST', '/api/user/passkey/verify/finish', body) }
}

t.test('the options: passkeys are off by default, PasskeyRPID and PasskeyOrigins are checked and normalised, /api/status tells the login page', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  t.equal((await call(app, {}, 'GET', '/api/status')).body.data.passkey_login, false, 'off by default')
  const off = await call(app, {}, 'POST', '/api/user/passkey/login/begin')
  t.same(off.body, { success: false, message: 'Passkeys are not enabled on this site' }, 'no ceremony while off')
  await verifySession(app, alice.headers)
  t.equal((await call(app, alice.headers, 'POST', '/api/user/passkey/register/begin')).body.message, 'Passkeys are not enabled on this site')
  t.match((await call(app, alice.headers, 'GET', '/api/user/passkey')).body.data, { enabled: false, available: false, items: [] }, 'the list still answers')

  const put = async (key: string, value: string) => await call(app, root.headers, 'PUT', '/api/option/', { key, value })
  for (const bad of ['https://example.com', 'example.com:443', 'example.com/path', '1.2.3.4', '-bad.example.com']) {
    const res = await put('PasskeyRPID', bad)
    t.equal(res.body.success, false, `RP ID ${bad} refused`)
    t.match(res.body.message, /must be a domain name/)
  }
  t.equal((await put('PasskeyRPID', ' Example.COM ')).body.success, true)
  for (const bad of ['https://console.example.com/login', 'ftp://example.com', 'console.example.com', 'https://console.example.com?x=1']) {
    const res = await put('PasskeyOrigins', `https://ok.example.com,${bad}`)
    t.equal(res.body.success, false, `origin ${bad} refused`)
    t.match(res.body.message, /is not an origin/)
  }
  t.equal((await put('PasskeyOrigins', 'https://console.example.com/, http://localhost:8080 https://console.example.com')).body.success, true)
  t.equal((await put('PasskeyEnabled', 'yes')).body.success, false, 'a boolean')
  t.equal((await put('PasskeyEnabled', 'true')).body.success, true)
  const stored = new Map((await app.db.selectFrom('options').selectAll().where('key', 'like', 'Passkey%').execute()).map((r) => [r.key, r.value]))
  t.same(Object.fromEntries(stored), { PasskeyEnabled: 'true', PasskeyRPID: 'example.com', PasskeyOrigins: 'https://console.example.com,http://localhost:8080' }, 'stored normalised')
  t.equal((await call(app, {}, 'GET', '/api/status')).body.data.passkey_login, true, 'the login page offers passkeys')

  // An allowed origin outside the RP ID is a configuration error, said at the first ceremony.
  const outside = await call(app, {}, 'POST', '/api/user/passkey/login/begin')
  t.equal(outside.body.message, 'The passkey origin http://localhost:8080 does not belong to the relying party ID example.com: the administrator must correct PasskeyOrigins or PasskeyRPID')
})

t.test('a user adds a passkey after a fresh verification and signs in with it alone: no username, no password, no second factor', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')

  const unverified = await call(app, alice.headers, 'POST', '/api/user/passkey/register/begin')
  t.equal(unverified.status, 403, 'adding a sign-in credential needs a fresh verification')
  t.same(unverified.body.data, { require_verification: true })

  const auth = new SoftAuthenticator()
  const { options, finish } = await register(app, alice, auth, PAGE, '  My laptop  ')
  t.match(options, { rp: { id: RP_ID, name: 'ModelGate' }, user: { name: 'alice' }, attestation: 'none', authenticatorSelection: { residentKey: 'required', userVerification: 'required' } }, 'a discoverable credential with user verification')
  t.equal(finish.body.success, true, finish.body.message)
  t.equal(finish.body.message, 'Passkey added')
  t.match(finish.body.data, { name: 'My laptop', last_used_at: null, backed_up: false, device_type: 'singleDevice', transports: ['internal'] })

  const rows = await app.db.selectFrom('passkeys').selectAll().execute()
  t.equal(rows.length, 1)
  t.ok(rows[0]!.public_key.equals(auth.credentials[0]!.publicKeyCose), 'the COSE public key is stored as the authenticator gave it')
  t.equal(rows[0]!.credential_id, auth.credentials[0]!.id.toString('base64url'))
  t.equal(rows[0]!.counter, 0)

  // A second registration must not offer the same authenticator again.
  await verifySession(app, alice.headers)
  const again = await call(app, alice.headers, 'POST', '/api/user/passkey/register/begin')
  t.same(again.body.data.options.excludeCredentials.map((c: { id: string }) => c.id), [rows[0]!.credential_id], 'the existing passkey is excluded')
  t.equal(again.body.data.options.user.id, options.user.id, 'the same user handle for every passkey of the account')

  const { options: loginOpts, finish: signedIn } = await passkeyLogin(app, auth)
  t.notOk('allowCredentials' in loginOpts && (loginOpts.allowCredentials?.length ?? 0) > 0, 'no username and no credential list: discoverable')
  t.equal(signedIn.body.success, true, signedIn.body.message)
  t.equal(signedIn.body.data.username, 'alice')
  const session = sessionOf(signedIn)
  t.ok(session, 'a session cookie')
  t.equal((await call(app, session!.headers, 'GET', '/api/user/self')).body.data.username, 'alice', 'the session works')
  const used = await app.db.selectFrom('passkeys').selectAll().executeTakeFirstOrThrow()
  t.equal(used.counter, 1, 'the signature counter moved forward')
  t.ok(used.last_used_at !== null, 'last used recorded')

  const list = (await call(app, alice.headers, 'GET', '/api/user/passkey')).body.data
  t.match(list, { enabled: true, available: true, last_used_at: used.last_used_at, items: [{ id: used.id, name: 'My laptop', last_used_at: used.last_used_at, backed_up: false }] })
  t.notOk(JSON.stringify(list).includes(used.public_key.toString('base64url')), 'the list never shows the key')

  // With 2FA on, the password needs a code; the passkey is a complete sign-in.
  const setup = await call(app, alice.headers, 'POST', '/api/user/2fa/setup')
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(setup.body.data.secret as string) })
  t.equal((await call(app, alice.headers, 'POST', '/api/user/2fa/enable', { code: totp.generate() })).body.success, true)
  t.equal((await call(app, {}, 'POST', '/api/user/login', { username: 'alice', password: 'password123' })).body.data.require_2fa, true, 'the password alone is not enough')
  const direct = (await passkeyLogin(app, auth)).finish
  t.ok(sessionOf(direct), 'the passkey signs in without the second step')

  // Renaming.
  t.equal((await call(app, alice.headers, 'PUT', `/api/user/passkey/${used.id}`, { name: 'Work laptop' })).body.message, 'Passkey renamed')
  t.equal((await call(app, alice.headers, 'PUT', `/api/user/passkey/${used.id}`, { name: '   ' })).body.success, false, 'not to nothing')
  const bob = await userSession(app, 'bob')
  t.equal((await call(app, bob.headers, 'PUT', `/api/user/passkey/${used.id}`, { name: 'mine' })).body.message, 'This passkey no longer exists; refresh the list', 'not someone else\'s')
  t.equal((await app.db.selectFrom('passkeys').select('name').executeTakeFirstOrThrow()).name, 'Work laptop')
})

t.test('a passkey verifies the session like POST /api/verify, through verify/finish or the passkey method of /api/verify, bound to its session', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')
  const auth = new SoftAuthenticator({ synced: true })
  t.equal((await register(app, alice, auth)).finish.body.success, true)
  t.match((await app.db.selectFrom('passkeys').selectAll().executeTakeFirstOrThrow()), { device_type: 'multiDevice', backed_up: true }, 'a synced passkey is recorded as backed up')

  const fresh = await login(app, 'alice', 'password123')
  const bystander = await login(app, 'alice', 'password123')
  const status = async (s: Session) => (await call(app, s.headers, 'GET', '/api/verify/status')).body.data
  t.match(await status(fresh), { verified: false, methods: ['password', 'passkey'] }, 'the passkey is a verification method')

  const { options, finish } = await passkeyVerify(app, fresh, auth)
  t.same(options.allowCredentials?.map((c) => c.id), [auth.credentials[0]!.id.toString('base64url')], 'only the user\'s own passkeys are asked for')
  t.equal(finish.body.success, true, finish.body.message)
  t.match(finish.body.data, { verified: true, methods: ['password', 'passkey'] })
  t.equal((await status(fresh)).verified, true, 'the session is verified')
  t.equal((await status(bystander)).verified, false, 'another session of the same user is not')

  // The union member of POST /api/verify.
  const other = await login(app, 'alice', 'password123')
  const begin = await call(app, other.headers, 'POST', '/api/user/passkey/verify/begin')
  const response = auth.assert(begin.body.data.options as RequestOptions, PAGE)
  const viaVerify = await call(app, other.headers, 'POST', '/api/verify', { method: 'passkey', response })
  t.equal(viaVerify.body.success, true, viaVerify.body.message)
  t.equal((await status(other)).verified, true)

  // A challenge made for one session cannot verify another.
  const third = await login(app, 'alice', 'password123')
  const forFresh = await call(app, fresh.headers, 'POST', '/api/user/passkey/verify/begin')
  const stolen = auth.assert(forFresh.body.data.options as RequestOptions, PAGE)
  const elsewhere = await call(app, third.headers, 'POST', '/api/user/passkey/verify/finish', { response: stolen })
  t.equal(elsewhere.body.message, 'The passkey request has expired or was already used; try again')
  t.equal((await status(third)).verified, false)

  // Someone else's passkey does not verify alice.
  const bob = await userSession(app, 'bob')
  const bobAuth = new SoftAuthenticator()
  await register(app, bob, bobAuth)
  const aliceBegin = await call(app, third.headers, 'POST', '/api/user/passkey/verify/begin')
  const opts = aliceBegin.body.data.options as RequestOptions
  const bobs = bobAuth.assert({ ...opts, allowCredentials: [] }, { ...PAGE, rpId: RP_ID })
  t.equal((await call(app, third.headers, 'POST', '/api/user/passkey/verify/finish', { response: bobs })).body.message, 'This passkey does not belong to your account')

  // Without a passkey there is nothing to ask for.
  const carol = await userSession(app, 'carol')
  t.equal((await call(app, carol.headers, 'POST', '/api/user/passkey/verify/begin')).body.message, 'Your account has no passkey')
  t.equal((await call(app, carol.headers, 'POST', '/api/verify', { method: 'passkey', response: bobs })).body.message, 'This verification method is not available for your account')
})

t.test('a cloned authenticator is refused: the signature counter must grow once it is not zero', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')
  const auth = new SoftAuthenticator()
  await register(app, alice, auth)
  t.ok(sessionOf((await passkeyLogin(app, auth)).finish), 'counter 1 accepted')
  const clone = auth.clone()
  t.ok(sessionOf((await passkeyLogin(app, auth)).finish), 'the original moves on to counter 2')

  const cloned = (await passkeyLogin(app, clone)).finish
  t.equal(clone.credentials[0]!.counter, 2, 'the clone signs with counter 2 again')
  t.notOk(sessionOf(cloned), 'no session')
  t.equal(cloned.body.message, 'This passkey\'s signature counter did not increase: the authenticator may have been cloned, so it was refused')
  const stuck = await app.db.selectFrom('passkeys').select('counter').executeTakeFirstOrThrow()
  t.equal(stuck.counter, 2, 'the stored counter is unchanged')
  // Set back to 0, the clone signs with 1: lower still.
  clone.credentials[0]!.counter = 0
  t.notOk(sessionOf((await passkeyLogin(app, clone)).finish), 'a lower counter is refused too')
  t.ok(sessionOf((await passkeyLogin(app, auth)).finish), 'the original still signs in (counter 3)')

  // Synced passkeys keep no counter (always 0): accepted each time, the challenge guards them.
  const bob = await userSession(app, 'bob')
  const synced = new SoftAuthenticator({ counts: false, synced: true })
  await register(app, bob, synced)
  for (let i = 0; i < 3; i++) t.ok(sessionOf((await passkeyLogin(app, synced)).finish), `counterless sign-in ${i + 1}`)
})

t.test('a replayed assertion is refused: each challenge is answered once', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')
  // Counterless, so only the challenge stops a replay.
  const auth = new SoftAuthenticator({ counts: false, synced: true })
  await register(app, alice, auth)

  const { body, finish } = await passkeyLogin(app, auth)
  t.ok(sessionOf(finish), 'the first answer signs in')
  const replay = await call(app, {}, 'POST', '/api/user/passkey/login/finish', body)
  t.notOk(sessionOf(replay), 'the same answer again does not')
  t.equal(replay.body.message, 'The passkey request has expired or was already used; try again')

  // The captured answer brought to a fresh flow signed the old challenge.
  const begin = await call(app, {}, 'POST', '/api/user/passkey/login/begin')
  const moved = await call(app, {}, 'POST', '/api/user/passkey/login/finish', { flow_id: begin.body.data.flow_id, response: body.response })
  t.notOk(sessionOf(moved), 'nor with another flow')
  t.equal(moved.body.message, 'The passkey request has expired or was already used; try again')
  t.equal(await app.redis.exists(loginFlowKey(begin.body.data.flow_id as string)), 0, 'and that flow is spent too')

  // Verification and registration answers are single use as well.
  const verified = await passkeyVerify(app, alice, auth)
  t.equal(verified.finish.body.success, true)
  const again = await call(app, alice.headers, 'POST', '/api/user/passkey/verify/finish', verified.body)
  t.equal(again.body.message, 'The passkey request has expired or was already used; try again')

  const second = new SoftAuthenticator()
  const reg = await register(app, alice, second)
  t.equal(reg.finish.body.success, true)
  const regAgain = await call(app, alice.headers, 'POST', '/api/user/passkey/register/finish', { response: reg.response })
  t.equal(regAgain.body.message, 'The passkey request has expired or was already used; try again')
  t.equal(await app.db.selectFrom('passkeys').select('id').execute().then((r) => r.length), 2, 'registered once')
})

t.test('an expired challenge is refused, whether Redis dropped it or its recorded expiry passed', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')
  const auth = new SoftAuthenticator()

  // Registration: the challenge's own expiry has passed though Redis still holds it.
  await verifySession(app, alice.headers)
  const begin = await call(app, alice.headers, 'POST', '/api/user/passkey/register/begin')
  const options = begin.body.data.options as CreationOptions
  const key = challengeKey(options.challenge)
  t.ok(await app.redis.ttl(key) > 250, 'kept about five minutes')
  const ceremony = JSON.parse(await app.redis.get(key) ?? '{}') as { exp: number }
  await app.redis.set(key, JSON.stringify({ ...ceremony, exp: Math.floor(Date.now() / 1000) - 1 }), 'KEEPTTL')
  const late = await call(app, alice.headers, 'POST', '/api/user/passkey/register/finish', { response: new SoftAuthenticator().register(options, PAGE).response })
  t.equal(late.body.message, 'The passkey request has expired or was already used; try again')
  t.equal(await app.db.selectFrom('passkeys').select('id').execute().then((r) => r.length), 0, 'nothing registered')

  t.equal((await register(app, alice, auth)).finish.body.success, true, 'a fresh challenge works')

  // Sign-in: Redis expired the flow.
  const loginBegin = await call(app, {}, 'POST', '/api/user/passkey/login/begin')
  const flowId = loginBegin.body.data.flow_id as string
  t.ok(await app.redis.ttl(loginFlowKey(flowId)) > 250)
  await app.redis.pexpire(loginFlowKey(flowId), 1)
  while (await app.redis.exists(loginFlowKey(flowId)) === 1) await new Promise((resolve) => setImmediate(resolve))
  const expired = await call(app, {}, 'POST', '/api/user/passkey/login/finish', { flow_id: flowId, response: auth.assert(loginBegin.body.data.options as RequestOptions, PAGE) })
  t.notOk(sessionOf(expired))
  t.equal(expired.body.message, 'The passkey request has expired or was already used; try again')

  // Sign-in: the recorded expiry passed.
  const other = await call(app, {}, 'POST', '/api/user/passkey/login/begin')
  const otherKey = loginFlowKey(other.body.data.flow_id as string)
  const flow = JSON.parse(await app.redis.get(otherKey) ?? '{}') as { exp: number }
  await app.redis.set(otherKey, JSON.stringify({ ...flow, exp: Math.floor(Date.now() / 1000) - 1 }), 'KEEPTTL')
  const stale = await call(app, {}, 'POST', '/api/user/passkey/login/finish', { flow_id: other.body.data.flow_id, response: auth.assert(other.body.data.options as RequestOptions, PAGE) })
  t.notOk(sessionOf(stale))
  t.equal(stale.body.message, 'The passkey request has expired or was already used; try again')
})

t.test('a foreign origin or another RP ID is refused on every ceremony, each with its own message', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')
  const evil = { origin: 'https://console.example.com.evil.example' }
  const foreign = 'Passkeys are not accepted from https://console.example.com.evil.example: it is not one of this site\'s allowed origins (https://console.example.com)'

  // The browser's Origin header on the request that asks for a challenge.
  t.equal((await call(app, { origin: evil.origin }, 'POST', '/api/user/passkey/login/begin')).body.message, foreign, 'no challenge for a foreign page')
  t.equal((await call(app, { origin: ORIGIN }, 'POST', '/api/user/passkey/login/begin')).body.success, true, 'the allowed page gets one')

  // Registration answers.
  const auth = new SoftAuthenticator()
  const fromEvil = await register(app, alice, auth, evil)
  t.equal(fromEvil.finish.body.message, foreign, 'registration made on a foreign page')
  const otherRp = await register(app, alice, auth, { origin: ORIGIN, rpId: 'evil.example' })
  t.equal(otherRp.finish.body.message, 'This passkey answer was made for another site (its relying party ID is not example.com)', 'registration for another RP ID')
  const noUv = await register(app, alice, auth, { origin: ORIGIN, userVerified: false })
  t.equal(noUv.finish.body.message, 'The authenticator did not verify you (PIN, fingerprint or face); passkeys here need it')
  t.equal(await app.db.selectFrom('passkeys').select('id').execute().then((r) => r.length), 0, 'none of them registered')

  const good = new SoftAuthenticator()
  t.equal((await register(app, alice, good)).finish.body.success, true)

  // Sign-in answers.
  const evilLogin = (await passkeyLogin(app, good, evil)).finish
  t.equal(evilLogin.body.message, foreign)
  const rpLogin = (await passkeyLogin(app, good, { origin: ORIGIN, rpId: 'evil.example' })).finish
  t.equal(rpLogin.body.message, 'This passkey answer was made for another site (its relying party ID is not example.com)')
  t.equal((await passkeyLogin(app, good, { origin: ORIGIN, userVerified: false })).finish.body.message, 'The authenticator did not verify you (PIN, fingerprint or face); passkeys here need it')
  t.notOk(sessionOf(evilLogin) ?? sessionOf(rpLogin), 'no session')

  // Verification answers.
  t.equal((await passkeyVerify(app, alice, good, evil)).finish.body.message, foreign)
  t.equal((await passkeyVerify(app, alice, good, { origin: ORIGIN, rpId: 'evil.example' })).finish.body.message, 'This passkey answer was made for another site (its relying party ID is not example.com)')
  t.equal((await call(app, alice.headers, 'GET', '/api/verify/status')).body.data.verified, true, 'still verified from the password step only')

  // Each of those refusals counted toward alice's lockout (the sign-ins and verifications with her passkey).
  t.equal(Number(await app.redis.get(failuresKey('alice'))), 5)
  t.ok(sessionOf((await passkeyLogin(app, good)).finish), 'the right page and RP ID still sign in, and clear the count')
  t.equal(await app.redis.exists(failuresKey('alice')), 0)
})

t.test('without PasskeyRPID and PasskeyOrigins the relying party is the request\'s own host and origin', async (t) => {
  const app = await build(t)
  await app.saveOptions({ PasskeyEnabled: 'true' })
  const alice = await userSession(app, 'alice')
  const host = { host: 'console.example.org' }
  const headers = { ...alice.headers, ...host }
  await verifySession(app, alice.headers)
  const begin = await call(app, headers, 'POST', '/api/user/passkey/register/begin')
  t.equal(begin.body.data.options.rp.id, 'console.example.org', 'the RP ID is the host the request was made to')
  const auth = new SoftAuthenticator()
  const { response } = auth.register(begin.body.data.options as CreationOptions, { origin: 'http://console.example.org' })
  t.equal((await call(app, headers, 'POST', '/api/user/passkey/register/finish', { response })).body.success, true, 'the request\'s own origin is allowed')

  const loginBegin = await call(app, host, 'POST', '/api/user/passkey/login/begin')
  const assertion = auth.assert(loginBegin.body.data.options as RequestOptions, { origin: 'http://console.example.org' })
  t.ok(sessionOf(await call(app, host, 'POST', '/api/user/passkey/login/finish', { flow_id: loginBegin.body.data.flow_id, response: assertion })), 'and it signs in there')

  // Reached by another name, the same passkey is for another site.
  const elsewhere = await call(app, { host: 'other.example.net' }, 'POST', '/api/user/passkey/login/begin')
  const wrong = auth.assert({ ...(elsewhere.body.data.options as RequestOptions), rpId: 'console.example.org' }, { origin: 'http://other.example.net' })
  t.equal((await call(app, { host: 'other.example.net' }, 'POST', '/api/user/passkey/login/finish', { flow_id: elsewhere.body.data.flow_id, response: wrong })).body.message,
    'This passkey answer was made for another site (its relying party ID is not other.example.net)')

  const byAddress = await call(app, { host: '127.0.0.1:3000' }, 'POST', '/api/user/passkey/login/begin')
  t.match(byAddress.body.message, /^Passkeys need a domain name as relying party ID, and "127\.0\.0\.1" is not one/, 'an IP address cannot be an RP ID')
})

t.test('a removed passkey can no longer sign in; removing needs a fresh verification', async (t) => {
  const app = await buildWithPasskeys(t)
  const alice = await userSession(app, 'alice')
  const auth = new SoftAuthenticator()
  const { finish } = await register(app, alice, auth)
  const id = finish.body.data.id as number
  const session = sessionOf((await passkeyLogin(app, auth)).finish)!

  const unverified = await call(app, session.headers, 'DELETE', `/api/user/passkey/${id}`)
  t.equal(unverified.status, 403)
  t.same(unverified.body.data, { require_verification: true }, 'the console opens its verification dialog')
  const bob = await userSession(app, 'bob')
  await verifySession(app, bob.headers)
  t.equal((await call(app, bob.headers, 'DELETE', `/api/user/passkey/${id}`)).body.message, 'This passkey no longer exists; refresh the list', 'not someone else\'s')

  t.equal((await passkeyVerify(app, session, auth)).finish.body.success, true, 'verified with the passkey itself')
  const removed = await call(app, session.headers, 'DELETE', `/api/user/passkey/${id}`)
  t.equal(removed.body.message, 'Passkey removed')
  t.same((await call(app, alice.headers, 'GET', '/api/user/passkey')).body.data.items, [])

  const after = (await passkeyLogin(app, auth, PAGE, '203.0.113.7')).finish
  t.notOk(sessionOf(after), 'the authenticator still holds the key, the site no longer accepts it')
  t.equal(after.body.message, 'This passkey is not registered here (it may have been removed); sign in another way')
  t.equal(Number(await app.redis.get(ipFailuresKey('203.0.113.7'))), 1, 'counted against the address')
  t.match((await call(app, session.headers, 'GET', '/api/verify/status')).body.data, { methods: ['password'] }, 'no passkey to verify with any more')
})

t.test('passkey sign-in: a disabled account is refused, and refusals lock the name like wrong passwords', async (t) => {
  const app = await buildWithPasskeys(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  const auth = new SoftAuthenticator()
  await register(app, alice, auth)

  for (let i = 0; i < MAX_FAILURES; i++) {
    const refused = (await passkeyLogin(app, auth, { origin: ORIGIN, rpId: 'evil.example' }, '198.51.100.1')).finish
    t.equal(refused.body.success, false)
  }
  const locked = (await passkeyLogin(app, auth, PAGE, '198.51.100.2')).finish
  t.equal(locked.status, 429, 'the right passkey is refused while the name is locked')
  t.ok(locked.headers['retry-after'])
  t.equal((await call(app, {}, 'POST', '/api/user/login', { username: 'alice', password: 'password123' }, '198.51.100.3')).status, 429, 'and so is the password')
  await app.redis.del(failuresKey('alice'))

  t.equal((await call(app, root.headers, 'POST', '/api/user/manage', { id: alice.user.id, action: 'disable' })).body.success, true)
  const banned = (await passkeyLogin(app, auth, PAGE, '198.51.100.4')).finish
  t.notOk(sessionOf(banned))
  t.equal(banned.body.message, 'This user has been banned')
})

t.test('admins reset a lower-role user\'s passkeys, which ends the user\'s sessions and is audited; never a peer or a superior', async (t) => {
  const app = await buildWithPasskeys(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const adminA = await userSession(app, 'admin_a', ROLES.admin)
  const adminB = await userSession(app, 'admin_b', ROLES.admin)
  const normal = await userSession(app, 'normal')
  const normalAuth = new SoftAuthenticator()
  await register(app, normal, normalAuth)
  await register(app, normal, new SoftAuthenticator())
  const peerAuth = new SoftAuthenticator()
  await register(app, adminB, peerAuth)

  t.match((await call(app, adminA.headers, 'GET', `/api/user/${normal.user.id}/passkey`)).body.data, { enabled: true, items: [{}, {}] }, 'the admin sees the user\'s passkeys')
  t.equal((await call(app, adminA.headers, 'GET', `/api/user/${adminB.user.id}/passkey`)).status, 403, 'not a peer\'s')
  t.equal((await call(app, normal.headers, 'GET', `/api/user/${normal.user.id}/passkey`)).status, 403, 'not for normal users')

  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${adminB.user.id}/passkey`)).status, 403, 'not on a peer admin')
  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${root.user.id}/passkey`)).status, 403, 'not on the super admin')
  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${root.user.id}/reset_passkey`)).status, 403, 'nor through new-api\'s route')
  t.equal((await call(app, normal.headers, 'DELETE', `/api/user/${adminA.user.id}/passkey`)).status, 403, 'not by a normal user')
  t.ok(sessionOf((await passkeyLogin(app, peerAuth)).finish), 'the peer keeps theirs')

  const reset = await call(app, adminA.headers, 'DELETE', `/api/user/${normal.user.id}/passkey`)
  t.equal(reset.body.success, true, reset.body.message)
  t.same(reset.body.data, { removed: 2 })
  t.equal((await call(app, normal.headers, 'GET', '/api/user/self')).status, 401, 'the user\'s sessions ended')
  t.equal((await passkeyLogin(app, normalAuth)).finish.body.message, 'This passkey is not registered here (it may have been removed); sign in another way')
  t.equal((await call(app, adminA.headers, 'DELETE', `/api/user/${normal.user.id}/passkey`)).body.message, 'This user has no passkey', 'nothing left to reset')

  const audit = await app.db.selectFrom('audit_logs').selectAll().where('action', '=', 'passkey.reset').execute()
  t.equal(audit.length, 1, 'one audit entry')
  t.match(audit[0], { actor_id: adminA.user.id, actor_name: 'admin_a', actor_role: ROLES.admin, target_type: 'user', target_id: String(normal.user.id), note: 'normal', changes: { passkey_count: { before: 2, after: 0 } } })

  const byRoot = await call(app, root.headers, 'DELETE', `/api/user/${adminB.user.id}/reset_passkey`)
  t.equal(byRoot.body.success, true, 'the super admin resets an admin\'s (new-api\'s route)')
  t.notOk(sessionOf((await passkeyLogin(app, peerAuth)).finish), 'that passkey no longer signs in')
  t.equal((await app.db.selectFrom('audit_logs').select('id').where('action', '=', 'passkey.reset').execute()).length, 2)
})
