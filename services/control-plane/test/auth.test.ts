import { configChannel, ROLES } from '@modelgate/contracts'
import { Redis } from 'ioredis'
import t from 'tap'
import { build, login, ROOT, sharedEnv, userSession, verifySession } from './helpers.js'

t.test('root signs in with the default password and is told to change it until it does', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/api/user/login', payload: ROOT, headers: { 'accept-language': 'en' } })
  const body = res.json()
  t.equal(body.success, true)
  t.equal(body.message, 'You are using the default password; change it at once')
  t.equal(body.data.password_is_default, true)
  t.equal(body.data.role, 100)
  t.notOk('password_hash' in body.data, 'no password hash in the answer')
  t.notOk('access_token_hash' in body.data)
  const cookie = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))!
  t.match(cookie, /HttpOnly/)
  t.match(cookie, /SameSite=Lax/)

  const session = await login(app, ROOT.username, ROOT.password)
  const again = await app.inject({ method: 'POST', url: '/api/user/login', payload: ROOT })
  t.equal(again.json().data.password_is_default, true, 'the flag stays until the password changes')
  await verifySession(app, session.headers, ROOT.password)
  const change = await app.inject({ method: 'PUT', url: '/api/user/self', headers: session.headers, payload: { password: 'n3w-passw0rd', original_password: '123456' } })
  t.equal(change.json().success, true)
  const after = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: 'n3w-passw0rd' }, headers: { 'accept-language': 'en' } })
  t.equal(after.json().data.password_is_default, false)
  t.equal(after.json().message, 'Logged in')
})

t.test('login answers the same for an unknown name and a wrong password, in the caller\'s language', async (t) => {
  const app = await build(t)
  const unknown = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'nobody', password: 'whatever1' } })
  const wrong = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: 'whatever1' } })
  t.same(unknown.json(), wrong.json())
  t.same(wrong.json(), { success: false, message: '用户名或密码错误，或用户已被封禁' }, 'Chinese when no language is given')
  const en = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: 'whatever1' }, headers: { 'accept-language': 'en' } })
  t.equal(en.json().message, 'Wrong username or password, or the user has been banned')
  const cookieLang = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: 'x' }, headers: { 'accept-language': 'zh', cookie: 'lang=en' } })
  t.equal(cookieLang.json().message, 'Wrong username or password, or the user has been banned', 'the console\'s saved language wins')
  const empty = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: '', password: '' }, headers: { 'accept-language': 'en' } })
  t.equal(empty.json().message, 'Username and password cannot be empty')
  const malformed = await app.inject({ method: 'POST', url: '/api/user/login', payload: '{"username":', headers: { 'content-type': 'application/json' } })
  t.equal(malformed.statusCode, 400)
  t.equal(malformed.json().success, false)
  const wrongType = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 5, password: ['x'] }, headers: { 'accept-language': 'en' } })
  t.equal(wrongType.statusCode, 400)
  t.match(wrongType.json().message, /^Invalid parameter/)
})

t.test('email works as the login name', async (t) => {
  const app = await build(t)
  const { row } = await userSession(app, 'mailer')
  await app.db.updateTable('users').set({ email: 'mailer@example.com' }).where('id', '=', row.id).execute()
  const s = await login(app, 'mailer@example.com', 'password123')
  t.equal(s.user.username, 'mailer')
})

t.test('a console call needs the session cookie and the matching New-Api-User header', async (t) => {
  const app = await build(t)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  t.equal((await app.inject({ url: '/api/user/self', headers: alice.headers })).json().data.username, 'alice')
  const noHeader = await app.inject({ url: '/api/user/self', headers: { cookie: alice.headers.cookie! } })
  t.equal(noHeader.statusCode, 401, 'cookie without the header (a cross-site request) is refused')
  const otherId = await app.inject({ url: '/api/user/self', headers: { cookie: alice.headers.cookie!, 'new-api-user': String(bob.user.id) } })
  t.equal(otherId.statusCode, 401, 'the header must name the session\'s own user')
  const noCookie = await app.inject({ url: '/api/user/self', headers: { 'new-api-user': String(alice.user.id) } })
  t.equal(noCookie.statusCode, 401)
  t.equal(noCookie.json().success, false)
  const forged = await app.inject({ url: '/api/user/self', headers: { cookie: 'session=eyJhbGciOiJIUzI1NiJ9.eyJ1aWQiOjEsInN2IjowLCJqdGkiOiJ4In0.bad', 'new-api-user': '1' } })
  t.equal(forged.statusCode, 401, 'a forged session token is refused')
})

t.test('logout ends the session for good', async (t) => {
  const app = await build(t)
  const s = await userSession(app, 'leaver')
  const out = await app.inject({ url: '/api/user/logout', headers: s.headers })
  t.equal(out.json().success, true)
  t.match([out.headers['set-cookie']].flat().join(), /session=;/, 'the cookie is cleared')
  t.equal((await app.inject({ url: '/api/user/self', headers: s.headers })).statusCode, 401, 'the old cookie no longer works')
})

t.test('a banned or deleted user\'s session stops working at once', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const victim = await userSession(app, 'victim')
  const other = await userSession(app, 'other')
  t.equal((await app.inject({ url: '/api/user/self', headers: victim.headers })).statusCode, 200)
  await app.inject({ method: 'POST', url: '/api/user/manage', headers: root.headers, payload: { id: victim.user.id, action: 'disable' } })
  t.equal((await app.inject({ url: '/api/user/self', headers: victim.headers })).statusCode, 401, 'banned')
  const relogin = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'victim', password: 'password123' }, headers: { 'accept-language': 'en' } })
  t.equal(relogin.json().message, 'This user has been banned')
  await app.inject({ method: 'POST', url: '/api/user/manage', headers: root.headers, payload: { id: other.user.id, action: 'delete' } })
  t.equal((await app.inject({ url: '/api/user/self', headers: other.headers })).statusCode, 401, 'deleted')
})

t.test('changing the password ends the other sessions but keeps the current one', async (t) => {
  const app = await build(t)
  const first = await userSession(app, 'carol')
  const second = await login(app, 'carol', 'password123')
  await verifySession(app, first.headers)
  const wrong = await app.inject({ method: 'PUT', url: '/api/user/self', headers: first.headers, payload: { password: 'another-pass', original_password: 'nope' }, cookies: {} })
  t.equal(wrong.json().success, false, 'the original password is required')
  const res = await app.inject({ method: 'PUT', url: '/api/user/self', headers: first.headers, payload: { password: 'another-pass', original_password: 'password123' } })
  t.equal(res.json().success, true)
  const fresh = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))!.split(';')[0]!
  t.equal((await app.inject({ url: '/api/user/self', headers: { ...first.headers, cookie: fresh } })).statusCode, 200, 'the current browser stays signed in')
  t.equal((await app.inject({ url: '/api/user/self', headers: second.headers })).statusCode, 401, 'other sessions end')
  const short = await app.inject({ method: 'PUT', url: '/api/user/self', headers: { ...first.headers, cookie: fresh }, payload: { password: 'short', original_password: 'another-pass' } })
  t.equal(short.json().success, false, 'password length is enforced')
})

t.test('a personal access token works for scripts and a new one replaces the old', async (t) => {
  const app = await build(t)
  const s = await userSession(app, 'scripter')
  const token1 = (await app.inject({ url: '/api/user/token', headers: s.headers })).json().data as string
  t.ok(token1.length >= 32)
  const id = String(s.user.id)
  t.equal((await app.inject({ url: '/api/user/self', headers: { authorization: token1, 'new-api-user': id } })).json().data.username, 'scripter')
  t.equal((await app.inject({ url: '/api/user/self', headers: { authorization: `Bearer ${token1}`, 'new-api-user': id } })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/user/self', headers: { authorization: token1 } })).statusCode, 401, 'New-Api-User is required with a token too')
  const token2 = (await app.inject({ url: '/api/user/token', headers: s.headers })).json().data as string
  t.not(token2, token1)
  t.equal((await app.inject({ url: '/api/user/self', headers: { authorization: token1, 'new-api-user': id } })).statusCode, 401, 'the old token stops working')
  t.equal((await app.inject({ url: '/api/user/self', headers: { authorization: token2, 'new-api-user': id } })).statusCode, 200)
  const stored = await app.db.selectFrom('users').select('access_token_hash').where('id', '=', s.user.id).executeTakeFirstOrThrow()
  t.not(stored.access_token_hash, token2, 'only a hash is stored')
})

t.test('failed logins lock a username across replicas without revealing whether it exists', async (t) => {
  const env = await sharedEnv(t)
  const a = await build(t, {}, env)
  const b = await build(t, {}, env)
  await userSession(a, 'target')
  for (let i = 0; i < 10; i++) {
    const app = i % 2 === 0 ? a : b
    const res = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'target', password: `bad-${i}` }, remoteAddress: `198.51.100.${i + 1}` })
    t.equal(res.json().success, false)
  }
  const locked = await b.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'target', password: 'password123' }, headers: { 'accept-language': 'en' }, remoteAddress: '198.51.100.99' })
  t.match(locked.json().message, /Too many failed login attempts/, 'even the right password is refused while locked, on the other replica too')
  for (let i = 0; i < 10; i++) await a.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'ghost', password: `bad-${i}` }, remoteAddress: `198.51.100.${i + 1}` })
  const ghost = await a.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'ghost', password: 'x' }, headers: { 'accept-language': 'en' } })
  t.same(ghost.json(), locked.json(), 'an unknown name locks the same way')
})

t.test('logins per IP are rate limited across replicas', async (t) => {
  const env = await sharedEnv(t)
  const a = await build(t, {}, env)
  const b = await build(t, {}, env)
  const codes: number[] = []
  for (let i = 0; i < 32; i++) {
    const res = await (i % 2 === 0 ? a : b).inject({ method: 'POST', url: '/api/user/login', payload: { username: `u${i}`, password: 'x' }, remoteAddress: '203.0.113.7' })
    codes.push(res.statusCode)
  }
  // 20 failures lock the address (login throttling); from the 31st request on, the per-minute limit answers first.
  t.same(codes, [...Array(20).fill(200), ...Array(12).fill(429)], 'from the 21st failure on, one address is refused, whichever replica answers')
  const other = await a.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'x', password: 'x' }, remoteAddress: '203.0.113.8' })
  t.equal(other.statusCode, 200, 'another address is not affected')
  const limited = await a.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'x', password: 'x' }, remoteAddress: '203.0.113.7', headers: { 'accept-language': 'en' } })
  t.same(limited.json(), { success: false, message: 'Too many requests, please try again later' })
})

t.test('a user change is announced on the config channel', async (t) => {
  const env = await sharedEnv(t)
  const app = await build(t, {}, env)
  const root = await login(app, ROOT.username, ROOT.password)
  const u = await userSession(app, 'watched', ROLES.common)
  const sub = new Redis(env.REDIS_URL!)
  t.teardown(() => { sub.disconnect() })
  await sub.subscribe(configChannel(env.REDIS_KEY_PREFIX!))
  const got = new Promise<string>((resolve) => sub.on('message', (_c: string, m: string) => resolve(m)))
  await app.inject({ method: 'POST', url: '/api/user/manage', headers: root.headers, payload: { id: u.user.id, action: 'disable' } })
  t.same(JSON.parse(await got), { kind: 'user', id: u.user.id })
})
