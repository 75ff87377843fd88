import { randomUUID } from 'node:crypto'
import { revokedSessionKey } from '@modelgate/contracts'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { describeUserAgent, revokeSessions } from '../src/services/sessions.js'
import { build, type Session, userSession } from './helpers.js'

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'

interface SessionItem { id: string, browser: string, os: string, user_agent: string, ip: string, created_at: number, last_seen_at: number, expires_at: number, current: boolean }

const sessionCookie = (setCookie: string | string[] | undefined): string | undefined =>
  [setCookie].flat().find((c) => c?.startsWith('session=') === true && !c.startsWith('session=;'))?.split(';')[0]

/** Signs `username` in from a browser with `userAgent`; the session's headers. */
async function signIn (app: FastifyInstance, username: string, userAgent: string, ip = '127.0.0.1'): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/api/user/login', payload: { username, password: 'password123' }, headers: { 'user-agent': userAgent }, remoteAddress: ip })
  const body = res.json()
  if (body.success !== true) throw new Error(`login failed: ${body.message}`)
  return { user: body.data, headers: { cookie: sessionCookie(res.headers['set-cookie'])!, 'new-api-user': String(body.data.id), 'accept-language': 'en' } }
}

async function call (app: FastifyInstance, s: Session, method: 'GET' | 'DELETE' | 'PUT' | 'POST', url: string, payload?: object) {
  return await app.inject({ method, url, headers: s.headers, ...(payload === undefined ? {} : { payload }) })
}

const status = async (app: FastifyInstance, s: Session): Promise<number> => (await call(app, s, 'GET', '/api/user/self')).statusCode
const list = async (app: FastifyInstance, s: Session): Promise<SessionItem[]> => (await call(app, s, 'GET', '/api/user/sessions')).json().data as SessionItem[]
const rowOf = async (app: FastifyInstance, id: string) => await app.db.selectFrom('user_sessions').selectAll().where('id', '=', id).executeTakeFirst()

t.test('lists the signed-in sessions with their device, address and times, this one first', async (t) => {
  const app = await build(t)
  const { row } = await userSession(app, 'alice')
  const laptop = await signIn(app, 'alice', CHROME_WINDOWS, '203.0.113.7')
  const phone = await signIn(app, 'alice', SAFARI_IPHONE, '198.51.100.9')
  const res = await call(app, phone, 'GET', '/api/user/sessions')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const items = res.json().data as SessionItem[]
  t.equal(items.length, 3, 'the helper\'s sign-in, the laptop and the phone')
  t.match(items[0], { current: true, browser: 'Safari 17', os: 'iPhone', ip: '198.51.100.9', user_agent: SAFARI_IPHONE })
  t.equal(items.filter((i) => i.current).length, 1, 'only this device is marked current')
  const fromLaptop = items.find((i) => i.browser === 'Chrome 131')
  t.match(fromLaptop, { os: 'Windows', ip: '203.0.113.7', current: false })
  const now = Math.floor(Date.now() / 1000)
  for (const item of items) {
    t.ok(Math.abs(item.created_at - now) < 60 && Math.abs(item.last_seen_at - now) < 60, 'signed in and seen just now')
    t.ok(item.expires_at > now + 3600, 'expires with its cookie')
  }
  t.equal((await list(app, laptop)).find((i) => i.current)?.browser, 'Chrome 131', 'each device sees itself as current')

  const other = await userSession(app, 'bob')
  t.same((await list(app, other)).map((i) => i.current), [true], 'another user sees only their own session')
  t.equal((await app.db.selectFrom('user_sessions').select('user_id').where('user_id', '=', row.id).execute()).length, 3)
})

t.test('SEC-05 revoking one session ends that cookie at once, in Postgres whatever Redis forgets, and leaves the others', async (t) => {
  const app = await build(t)
  await userSession(app, 'alice')
  const laptop = await signIn(app, 'alice', CHROME_WINDOWS)
  const phone = await signIn(app, 'alice', SAFARI_IPHONE)
  const phoneId = (await list(app, phone)).find((i) => i.current)!.id

  const res = await call(app, laptop, 'DELETE', `/api/user/sessions/${phoneId}`)
  t.same(res.json(), { success: true, message: 'Session signed out', data: 1 })
  t.equal(await status(app, phone), 401, 'the revoked cookie is refused')
  t.equal(await status(app, laptop), 200, 'the revoking one goes on')
  t.notOk((await list(app, laptop)).some((i) => i.id === phoneId), 'and the list no longer shows it')
  t.ok((await rowOf(app, phoneId))?.revoked_at, 'the row records the revocation')

  t.same((await call(app, laptop, 'DELETE', `/api/user/sessions/${phoneId}`)).json(), { success: false, message: 'This session has already ended; refresh the list' })
  t.same((await call(app, laptop, 'DELETE', `/api/user/sessions/${randomUUID()}`)).json(), { success: false, message: 'This session has already ended; refresh the list' })

  const mallory = await userSession(app, 'mallory')
  const laptopId = (await list(app, laptop)).find((i) => i.current)!.id
  t.equal((await call(app, { ...mallory, headers: { ...mallory.headers, 'accept-language': 'en' } }, 'DELETE', `/api/user/sessions/${laptopId}`)).json().success, false, 'another user\'s session is not found')
  t.equal(await status(app, laptop), 200, 'and stays')

  // Revocations are kept in Postgres: Redis losing its keys brings nothing back.
  await app.redis.del(revokedSessionKey(phoneId))
  t.equal(await status(app, phone), 401, 'still refused without the Redis marker')

  const self = await call(app, laptop, 'DELETE', `/api/user/sessions/${laptopId}`)
  t.equal(self.json().success, true, 'revoking this very session signs out here')
  t.match([self.headers['set-cookie']].flat().join(), /session=;/)
  t.equal(await status(app, laptop), 401)
})

t.test('signing out every other session keeps this one, on a renewed cookie, with its history', async (t) => {
  const app = await build(t)
  await userSession(app, 'alice')
  const laptop = await signIn(app, 'alice', CHROME_WINDOWS)
  const phone = await signIn(app, 'alice', SAFARI_IPHONE)
  const tablet = await signIn(app, 'alice', FIREFOX_LINUX)
  const before = (await list(app, laptop)).find((i) => i.current)!

  const res = await call(app, laptop, 'DELETE', '/api/user/sessions')
  t.same(res.json(), { success: true, message: '3 other sessions signed out', data: 3 })
  const renewed = sessionCookie(res.headers['set-cookie'])
  t.ok(renewed, 'this session gets a fresh cookie')
  const current = { ...laptop, headers: { ...laptop.headers, cookie: renewed! } }
  t.equal(await status(app, phone), 401)
  t.equal(await status(app, tablet), 401)
  t.equal(await status(app, current), 200, 'this one goes on')
  const after = await list(app, current)
  t.equal(after.length, 1)
  t.match(after[0], { id: before.id, created_at: before.created_at, current: true }, 'the same session, signed in at the same time')
  t.same((await call(app, current, 'DELETE', '/api/user/sessions')).json(), { success: true, message: '0 other sessions signed out', data: 0 })
})

t.test('a password change ends the other sessions and keeps this one', async (t) => {
  const app = await build(t)
  await userSession(app, 'alice')
  const laptop = await signIn(app, 'alice', CHROME_WINDOWS)
  const phone = await signIn(app, 'alice', SAFARI_IPHONE)
  const laptopId = (await list(app, laptop)).find((i) => i.current)!.id
  const phoneId = (await list(app, phone)).find((i) => i.current)!.id

  const verified = await app.inject({ method: 'POST', url: '/api/verify', headers: laptop.headers, payload: { method: 'password', value: 'password123' } })
  t.equal(verified.json().success, true, 'a password change needs a fresh verification')
  const res = await call(app, laptop, 'PUT', '/api/user/self', { password: 'n3w-passw0rd', original_password: 'password123' })
  t.equal(res.json().success, true)
  const current = { ...laptop, headers: { ...laptop.headers, cookie: sessionCookie(res.headers['set-cookie'])! } }
  t.equal(await status(app, phone), 401, 'the phone is signed out')
  t.equal(await status(app, current), 200, 'this browser stays signed in')
  t.same((await list(app, current)).map((i) => i.id), [laptopId], 'one session is left: this one')
  t.ok((await rowOf(app, phoneId))?.revoked_at, 'the other row is marked revoked')
  t.equal(await app.redis.exists(revokedSessionKey(phoneId)), 1, 'and the gateway is told through Redis')
})

t.test('logout revokes its own session; a registered session without its row is refused', async (t) => {
  const app = await build(t)
  await userSession(app, 'alice')
  const laptop = await signIn(app, 'alice', CHROME_WINDOWS)
  const id = (await list(app, laptop)).find((i) => i.current)!.id
  t.equal((await call(app, laptop, 'GET', '/api/user/logout')).json().success, true)
  t.equal(await status(app, laptop), 401, 'the signed-out cookie is refused even though it is still valid')
  t.ok((await rowOf(app, id))?.revoked_at)

  const phone = await signIn(app, 'alice', SAFARI_IPHONE)
  const phoneId = (await list(app, phone)).find((i) => i.current)!.id
  await app.db.deleteFrom('user_sessions').where('id', '=', phoneId).execute()
  t.equal(await status(app, phone), 401, 'a cookie signed with its row is refused once the row is gone')
  t.notOk(await rowOf(app, phoneId), 'and not registered again')
})

t.test('a session from before sessions were kept is accepted and registered on first use', async (t) => {
  const app = await build(t)
  const { row } = await userSession(app, 'alice')
  // A cookie as sign-ins made them before: no `reg` claim, no row.
  const legacy = (jti: string) => ({
    user: { id: row.id, username: 'alice', role: 1 },
    headers: { cookie: `session=${app.jwt.sign({ uid: row.id, sv: row.session_version, jti })}`, 'new-api-user': String(row.id), 'accept-language': 'en', 'user-agent': FIREFOX_LINUX }
  })
  const old = legacy(randomUUID())
  t.equal(await status(app, old), 200, 'accepted')
  const listed = (await list(app, old)).find((i) => i.current)
  t.match(listed, { browser: 'Firefox 133', os: 'Linux' }, 'registered with the device it was first seen from')

  const loggedOut = legacy(randomUUID())
  await app.redis.set(revokedSessionKey(JSON.parse(Buffer.from(loggedOut.headers.cookie.split('.')[1]!, 'base64url').toString()).jti), '1', 'EX', 600)
  t.equal(await status(app, loggedOut), 401, 'one logged out back then (its Redis marker) stays refused')

  t.equal((await call(app, old, 'DELETE', `/api/user/sessions/${listed!.id}`)).json().success, true)
  t.equal(await status(app, old), 401, 'once registered it is revoked like any other')

  // A two-factor reset (and anything else revoking every session) ends the ones never registered too.
  const unseen = legacy(randomUUID())
  const fresh = await signIn(app, 'alice', CHROME_WINDOWS)
  t.equal(await revokeSessions(app, row.id), 2, 'the registered sessions still holding were ended')
  t.equal(await status(app, fresh), 401)
  t.equal(await status(app, unseen), 401, 'a session never seen since the change is ended by the version bump')
})

t.test('last seen is written at most once a minute per session', async (t) => {
  const app = await build(t)
  await userSession(app, 'alice')
  const laptop = await signIn(app, 'alice', CHROME_WINDOWS, '203.0.113.7')
  const id = (await list(app, laptop)).find((i) => i.current)!.id
  const now = Math.floor(Date.now() / 1000)
  const setSeen = async (at: number) => { await app.db.updateTable('user_sessions').set({ last_seen_at: at, ip: 'old' }).where('id', '=', id).execute() }

  await setSeen(now - 30)
  for (let i = 0; i < 3; i++) t.equal(await status(app, laptop), 200)
  t.match(await rowOf(app, id), { last_seen_at: now - 30, ip: 'old' }, 'requests within the minute write nothing')

  await setSeen(now - 61)
  const res = await app.inject({ method: 'GET', url: '/api/user/self', headers: laptop.headers, remoteAddress: '198.51.100.20' })
  t.equal(res.statusCode, 200)
  const seen = await rowOf(app, id)
  t.ok(seen!.last_seen_at >= now, 'a request after a minute records the time')
  t.equal(seen!.ip, '198.51.100.20', 'and the address it came from')
})

t.test('reads a device from common User-Agents', async (t) => {
  t.same(describeUserAgent(CHROME_WINDOWS), { browser: 'Chrome 131', os: 'Windows' })
  t.same(describeUserAgent(SAFARI_IPHONE), { browser: 'Safari 17', os: 'iPhone' })
  t.same(describeUserAgent(FIREFOX_LINUX), { browser: 'Firefox 133', os: 'Linux' })
  t.same(describeUserAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0'), { browser: 'Edge 131', os: 'macOS' })
  t.same(describeUserAgent('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36'), { browser: 'Chrome 131', os: 'Android 14' })
  t.same(describeUserAgent('curl/8.5.0'), { browser: 'curl 8.5.0', os: '' })
  t.same(describeUserAgent(''), { browser: '', os: '' })
})
