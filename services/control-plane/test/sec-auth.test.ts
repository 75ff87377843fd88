import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'
import { ConfigError, loadControlPlaneConfig } from '@modelgate/config'
import { startTestSmtpServer } from '@modelgate/mail/testing'
import { EDGE_PROOF_HEADER, edgeProof, fastifyOptions } from '@modelgate/service'
import { TEST_SECRETS } from '@modelgate/testing'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import t from 'tap'
import controlPlane from '../src/app.js'
import { createAccount } from '../src/services/users.js'
import { login, ROOT, sharedEnv, userSession, verifySession } from './helpers.js'

const EN = { 'accept-language': 'en' }

/**
 * A control plane built the way server.ts builds it (trust proxy from TRUST_PROXY), with its log
 * lines kept in `logs`.
 */
async function replica (t: Test, env: Record<string, string>, logs: string[] = []): Promise<FastifyInstance> {
  const config = loadControlPlaneConfig(env)
  const base = fastifyOptions('control-plane', 'info', { trustRequestId: true })
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(chunk.toString()); done() } })
  const app = Fastify({ ...base, logger: { ...(base.logger as object), stream }, trustProxy: config.TRUST_PROXY })
  await app.register(controlPlane, { config })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

function sessionCookie (res: LightMyRequestResponse): string | undefined {
  return [res.headers['set-cookie']].flat().find((c) => c?.startsWith('session='))
}

const loginAs = async (app: FastifyInstance, username: string, password: string, extra: { remoteAddress?: string, headers?: Record<string, string> } = {}) =>
  await app.inject({ method: 'POST', url: '/api/user/login', payload: { username, password }, headers: { ...EN, ...extra.headers }, remoteAddress: extra.remoteAddress ?? '127.0.0.1' })

t.test('SEC-01 the default root account warns on every start and until its password changes, which ends its other sessions', async (t) => {
  const env = await sharedEnv(t)
  const logsA: string[] = []
  const a = await replica(t, env, logsA)
  const warnings = (logs: string[]) => logs.filter((l) => /default password/.test(l) && JSON.parse(l).level === 40)
  t.equal(warnings(logsA).length, 1, 'the first start warns once')
  for (const line of logsA) {
    t.notOk(line.includes(env['SESSION_SECRET']!) || line.includes(env['CRYPTO_SECRET']!) || line.includes('123456'), 'the start log prints no secret')
  }
  const logsB: string[] = []
  const b = await replica(t, env, logsB)
  t.equal(warnings(logsB).length, 1, 'a later start (another replica, a restart) warns again')

  const first = await loginAs(a, ROOT.username, ROOT.password)
  t.equal(first.json().success, true, 'root/123456 signs in')
  t.equal(first.json().data.password_is_default, true)
  t.equal(first.json().message, 'You are using the default password; change it at once')
  const current = { cookie: sessionCookie(first)!.split(';')[0]!, 'new-api-user': String(first.json().data.id) }
  const other = await login(b, ROOT.username, ROOT.password)
  const self = await a.inject({ url: '/api/user/self', headers: current })
  t.equal(self.json().data.password_is_default, true, 'the self view carries the flag the console shows on every page')
  t.equal((await a.inject({ url: '/api/status' })).statusCode, 200)

  await verifySession(a, current, ROOT.password)
  const change = await a.inject({ method: 'PUT', url: '/api/user/self', headers: { ...current, ...EN }, payload: { password: 'n3w-root-pass', original_password: ROOT.password } })
  t.equal(change.json().success, true)
  t.equal(change.json().data.password_is_default, false, 'the flag is gone')
  const renewed = sessionCookie(change)
  t.ok(renewed, 'the current session continues on a fresh cookie')
  const stillIn = await a.inject({ url: '/api/user/self', headers: { ...current, cookie: renewed!.split(';')[0]! } })
  t.equal(stillIn.statusCode, 200, 'the current session stays')
  t.equal(stillIn.json().data.password_is_default, false)
  t.equal((await b.inject({ url: '/api/user/self', headers: other.headers })).statusCode, 401, 'the other root session is revoked, on the other replica too')
  const old = await loginAs(b, ROOT.username, ROOT.password, { remoteAddress: '198.51.100.1' })
  t.same(old.json(), { success: false, message: 'Wrong username or password, or the user has been banned' }, '123456 no longer signs in')
  const fresh = await loginAs(b, ROOT.username, 'n3w-root-pass')
  t.equal(fresh.json().data.password_is_default, false)
  t.equal(fresh.json().message, 'Logged in')

  const logsC: string[] = []
  await replica(t, env, logsC)
  t.equal(warnings(logsC).length, 0, 'no warning once the password changed')

  t.test('INITIAL_ROOT_PASSWORD sets the first password instead of 123456', async (t) => {
    const logs: string[] = []
    const app = await replica(t, await sharedEnv(t, { INITIAL_ROOT_PASSWORD: 'Init1al-Passw0rd' }), logs)
    t.equal(warnings(logs).length, 0, 'nothing to warn about')
    t.notOk(logs.some((l) => l.includes('Init1al-Passw0rd')), 'the password is not logged')
    t.equal((await loginAs(app, ROOT.username, ROOT.password)).json().success, false, '123456 does not sign in')
    const res = await loginAs(app, ROOT.username, 'Init1al-Passw0rd')
    t.equal(res.json().data.password_is_default, false)
    t.equal(res.json().data.role, 100)
  })
})

t.test('SEC-02 login throttling per name and per address holds across replicas and X-Forwarded-For, and nothing tells accounts apart', async (t) => {
  const env = await sharedEnv(t)
  const a = await replica(t, env)
  const b = await replica(t, env)
  await createAccount(a, { username: 'alice', password: 'password123', email: 'alice@example.com' })
  const attacker = '198.51.100.7'

  const answers: Array<{ status: number, body: unknown }> = []
  for (let i = 0; i < 30; i++) {
    const res = await loginAs(i % 2 === 0 ? a : b, 'alice', `wrong-${i}`, { remoteAddress: attacker, headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } })
    answers.push({ status: res.statusCode, body: res.json() })
  }
  const wrong = { status: 200, body: { success: false, message: 'Wrong username or password, or the user has been banned' } }
  const locked = { status: 429, body: { success: false, message: 'Too many failed login attempts; try again in 15 minutes' } }
  t.same(answers.slice(0, 10), Array(10).fill(wrong), 'the first ten are wrong passwords')
  t.same(answers.slice(10), Array(20).fill(locked), 'then 429, whatever X-Forwarded-For says')

  const right = await loginAs(b, 'alice', 'password123', { remoteAddress: '198.51.100.8' })
  t.same({ status: right.statusCode, body: right.json() }, locked, 'the right password is refused during the lockout, from anywhere')
  t.notOk(sessionCookie(right))

  // An unknown name: the same answers, in the same order.
  const ghost: Array<{ status: number, body: unknown }> = []
  for (let i = 0; i < 11; i++) {
    const res = await loginAs(i % 2 === 0 ? b : a, 'nobody', `wrong-${i}`, { remoteAddress: '198.51.100.9' })
    ghost.push({ status: res.statusCode, body: res.json() })
  }
  t.same(ghost, [...Array(10).fill(wrong), locked], 'nobody gets the same status and message as alice')

  // Per address: a spray over many names from one address stops after 20 failures.
  const spray: number[] = []
  for (let i = 0; i < 22; i++) {
    const res = await loginAs(i % 2 === 0 ? a : b, `name${i}`, 'wrong-pass', { remoteAddress: '198.51.100.10', headers: { 'x-forwarded-for': `192.0.2.${i}` } })
    spray.push(res.statusCode)
  }
  t.same(spray, [...Array(20).fill(200), 429, 429], 'the address is locked, and rotating X-Forwarded-For does not help')
  t.equal((await loginAs(a, 'alice2', 'wrong-pass', { remoteAddress: '198.51.100.11' })).statusCode, 200, 'another address is not affected')

  t.test('a reset mail request answers the same for registered and unknown addresses', async (t) => {
    const get = async (email: string) => {
      const res = await a.inject({ url: `/api/reset_password?email=${encodeURIComponent(email)}`, headers: { ...EN, host: 'localhost:3001' }, remoteAddress: '198.51.100.20' })
      return { status: res.statusCode, body: res.json() }
    }
    const unset = await get('alice@example.com')
    t.same(unset.body, { success: false, message: 'SMTP is not configured; please contact the administrator' }, 'without SMTP the known address cannot be mailed')
    t.same(await get('unknown@example.com'), unset, 'and an unknown one answers the same')
    const smtp = await startTestSmtpServer()
    t.teardown(() => smtp.close())
    await a.saveOptions({ SMTPServer: smtp.host, SMTPPort: String(smtp.port), SMTPAccount: 'bot@modelgate.test', SMTPToken: 'smtp-secret', SMTPFrom: 'noreply@modelgate.test' })
    const known = await get('alice@example.com')
    t.same(known, { status: 200, body: { success: true, message: 'Password reset mail sent; please check your inbox', data: null } })
    t.same(await get('unknown@example.com'), known, 'an unknown address gets the same answer')
    const again = await get('alice@example.com')
    t.same(await get('unknown@example.com'), again, 'and the same cooldown answer when asked again at once')
    t.equal(smtp.messages.filter((m) => m.envelope.to.includes('alice@example.com')).length, 1, 'alice got her mail')
    t.equal(smtp.messages.filter((m) => m.envelope.to.includes('unknown@example.com')).length, 0, 'nothing went to the unknown address')
  })
})

t.test('SEC-03 passwords are argon2id hashes that no API returns, re-salted on change, and unknown names still cost a hash', async (t) => {
  const env = await sharedEnv(t)
  const app = await replica(t, env)
  const reg = await app.inject({ method: 'POST', url: '/api/user/register', payload: { username: 'hasher', password: 'password123', password2: 'password123' }, headers: EN })
  t.equal(reg.json().success, true, 'registered')
  const row = await app.db.selectFrom('users').selectAll().where('username', '=', 'hasher').executeTakeFirstOrThrow()
  t.match(row.password_hash, /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/)

  const root = await login(app, ROOT.username, ROOT.password)
  const user = await login(app, 'hasher', 'password123')
  const { token } = await (async () => ({ token: (await app.inject({ url: '/api/user/token', headers: user.headers })).json().data as string }))()
  const responses = [
    reg,
    await app.inject({ url: '/api/user/?p=0&page_size=100', headers: root.headers }),
    await app.inject({ url: '/api/user/search?keyword=hasher', headers: root.headers }),
    await app.inject({ url: `/api/user/${row.id}`, headers: root.headers }),
    await app.inject({ url: '/api/user/self', headers: user.headers }),
    await app.inject({ url: '/api/user/self', headers: { authorization: token, 'new-api-user': String(row.id) } }),
    await loginAs(app, 'hasher', 'password123')
  ]
  const hashed = await app.db.selectFrom('users').select(['password_hash', 'access_token_hash']).where('id', '=', row.id).executeTakeFirstOrThrow()
  for (const res of responses) {
    t.equal(res.statusCode, 200)
    t.notOk(res.body.includes(hashed.password_hash) || res.body.includes('$argon2'), `${res.raw.req.url ?? ''}: no password hash`)
    t.notOk(/"(password|password_hash|access_token|access_token_hash)"\s*:/.test(res.body), 'no password or token field')
    t.notOk(hashed.access_token_hash !== null && res.body.includes(hashed.access_token_hash), 'no access-token hash')
  }

  await verifySession(app, user.headers)
  const change = await app.inject({ method: 'PUT', url: '/api/user/self', headers: user.headers, payload: { password: 'password123', original_password: 'password123' } })
  t.equal(change.json().success, true, 'the same password set again')
  const after = await app.db.selectFrom('users').select('password_hash').where('id', '=', row.id).executeTakeFirstOrThrow()
  const salt = (h: string) => h.split('$')[4]
  t.not(after.password_hash, row.password_hash, 'a new hash')
  t.not(salt(after.password_hash), salt(row.password_hash), 'with a new salt')
  t.match(after.password_hash, /^\$argon2id\$/)

  // An unknown name costs an argon2 verification too: no fast path that tells names apart. Measured
  // as this process's CPU time (argon2 runs on libuv's pool, counted there too), which other
  // processes' load on a shared machine does not inflate as it does wall time.
  const cost = async (username: string, i: number) => {
    const start = process.cpuUsage()
    await loginAs(app, username, 'wrong-password', { remoteAddress: `198.51.100.${100 + i}` })
    const used = process.cpuUsage(start)
    return (used.user + used.system) / 1000
  }
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 6; i++) {
    known.push(await cost('hasher', i))
    unknown.push(await cost(`ghost${i}`, i + 10))
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  t.ok(median(unknown) > median(known) * 0.5, `unknown names cost as much CPU as known ones (median ${median(unknown).toFixed(1)} ms vs ${median(known).toFixed(1)} ms)`)
})

t.test('SEC-04 relay keys and access tokens are stored only as hashes and sealed copies, shown masked, revealed to the owner only', async (t) => {
  const env = await sharedEnv(t)
  const app = await replica(t, env)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const created = await app.inject({ method: 'POST', url: '/api/token/', headers: alice.headers, payload: { name: 'k1' } })
  const token = created.json().data
  const key: string = token.full_key
  const body = key.slice(3)
  t.match(key, /^sk-[A-Za-z0-9]{48}$/)
  const accessToken: string = (await app.inject({ url: '/api/user/token', headers: alice.headers })).json().data
  t.ok(accessToken.length >= 24)
  // Use both once, so whatever caches they fill is filled.
  t.equal((await app.inject({ url: '/api/user/self', headers: { authorization: accessToken, 'new-api-user': String(alice.user.id) } })).statusCode, 200)
  t.equal((await app.inject({ url: `/api/token/search?token=${key}`, headers: alice.headers })).statusCode, 200)

  const secrets = [body, accessToken]
  const tokenRow = await app.db.selectFrom('tokens').selectAll().where('id', '=', token.id).executeTakeFirstOrThrow()
  const userRow = await app.db.selectFrom('users').selectAll().where('id', '=', alice.user.id).executeTakeFirstOrThrow()
  for (const s of secrets) {
    t.notOk(JSON.stringify(tokenRow).includes(s), 'no tokens column holds a raw secret')
    t.notOk(JSON.stringify(userRow).includes(s), 'no users column holds a raw secret')
  }
  t.match(tokenRow.key_encrypted, /^v1:[\w-]+:[\w-]+:[\w-]+$/, 'the copy for reveal is sealed (AES-256-GCM, iv and tag)')
  t.equal(app.secrets.open(tokenRow.key_encrypted), key)
  t.not(userRow.access_token_hash, createHash('sha256').update(accessToken).digest('hex'), 'the access token hash is keyed, not a plain SHA-256')
  t.match(userRow.access_token_hash, /^[0-9a-f]{64}$/)

  // A token stored before keyed hashes (plain SHA-256) is upgraded on first use: 20 requests at
  // once with it are all served (none finds the row between its old and its new hash).
  const legacy = 'legacy-access-token-0123456789abcdef'
  await app.db.updateTable('users').set({ access_token_hash: createHash('sha256').update(legacy).digest('hex') }).where('id', '=', userRow.id).execute()
  const statuses = await Promise.all(Array.from({ length: 20 }, async () => (await app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: legacy, 'new-api-user': String(userRow.id) } })).statusCode))
  t.same(statuses, Array(20).fill(200), 'every concurrent request with the legacy token is served')
  const upgraded = await app.db.selectFrom('users').select('access_token_hash').where('id', '=', userRow.id).executeTakeFirstOrThrow()
  t.equal(upgraded.access_token_hash, app.accessTokenHash(legacy), 'and the stored hash is now the keyed one')

  const redis = new Redis(env['REDIS_URL']!)
  t.teardown(() => redis.quit())
  const prefix = env['REDIS_KEY_PREFIX'] ?? ''
  t.ok(prefix.length > 0, 'this test has its own Redis prefix')
  let dumped = ''
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
    cursor = next
    for (const k of keys) {
      const type = await redis.type(k)
      const value = type === 'string'
        ? await redis.getBuffer(k).then((b) => b?.toString('latin1') ?? '')
        : type === 'hash'
          ? JSON.stringify(await redis.hgetall(k))
          : type === 'list'
            ? JSON.stringify(await redis.lrange(k, 0, -1))
            : type === 'set'
              ? JSON.stringify(await redis.smembers(k))
              : type === 'zset'
                ? JSON.stringify(await redis.zrange(k, '0', '-1', 'WITHSCORES'))
                : type === 'stream' ? JSON.stringify(await redis.xrange(k, '-', '+')) : ''
      dumped += `${k}\n${value}\n`
    }
  } while (cursor !== '0')
  for (const s of secrets) t.notOk(dumped.includes(s), 'no Redis key or value holds a raw secret')

  const list = await app.inject({ url: '/api/token/?p=0&size=10', headers: alice.headers })
  const search = await app.inject({ url: `/api/token/search?token=${key}`, headers: alice.headers })
  const one = await app.inject({ url: `/api/token/${token.id}`, headers: alice.headers })
  for (const res of [list, search, one]) {
    t.notOk(res.body.includes(body), 'listings show the masked key only')
    t.ok(res.body.includes(`${key.slice(0, 7)}**********${key.slice(-4)}`), 'masked as sk-abcd**********wxyz')
  }
  const reveal = await app.inject({ method: 'POST', url: `/api/token/${token.id}/key`, headers: alice.headers })
  t.same(reveal.json(), { success: true, message: '', data: { key } }, 'the owner can reveal the key')
  const foreign = await app.inject({ method: 'POST', url: `/api/token/${token.id}/key`, headers: bob.headers })
  t.notOk(foreign.body.includes(body), 'another user cannot')
  t.equal(foreign.json().success, false)
  const root = await login(app, ROOT.username, ROOT.password)
  const byRoot = await app.inject({ method: 'POST', url: `/api/token/${token.id}/key`, headers: root.headers })
  t.notOk(byRoot.body.includes(body), 'not even the super admin')
})

t.test('SEC-05 session secret, user binding, CSRF header and cookie flags; a session works on every replica', async (t) => {
  const env = await sharedEnv(t)
  for (const [what, value] of [['unset', undefined], ['random_string', 'random_string'], ['16 characters', 'a'.repeat(16)]] as const) {
    const attempt = { ...env, NODE_ENV: 'production', SESSION_SECRET: value }
    t.throws(() => loadControlPlaneConfig(attempt), ConfigError, `SESSION_SECRET ${what}: refused`)
    try {
      loadControlPlaneConfig(attempt)
    } catch (err) {
      t.same((err as ConfigError).variables, ['SESSION_SECRET'], 'names the variable')
      t.match((err as Error).message, /SESSION_SECRET/)
      if (value !== undefined) t.notOk((err as Error).message.includes(value), 'without echoing the value')
    }
  }

  const a = await replica(t, env)
  const b = await replica(t, env)
  const alice = await userSession(a, 'alice')
  const bob = await userSession(a, 'bob')

  const swapped = await a.inject({ url: '/api/user/self', headers: { cookie: alice.headers.cookie!, 'new-api-user': String(bob.user.id), ...EN } })
  t.equal(swapped.statusCode, 401, "A's cookie with B's id is refused")
  t.notOk(swapped.body.includes('"bob"'))
  t.equal((await a.inject({ url: '/api/user/self', headers: { cookie: alice.headers.cookie! } })).statusCode, 401, 'no header at all: refused')

  const before = await a.db.selectFrom('tokens').select('id').where('user_id', '=', alice.user.id).execute()
  const csrf = await a.inject({
    method: 'POST',
    url: '/api/token/',
    headers: { cookie: alice.headers.cookie!, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=pwned&unlimited_quota=true'
  })
  t.ok([401, 403, 415].includes(csrf.statusCode), `a cross-site form POST is rejected (${csrf.statusCode})`)
  const csrfJson = await a.inject({ method: 'POST', url: '/api/token/', headers: { cookie: alice.headers.cookie!, 'content-type': 'text/plain' }, payload: '{"name":"pwned"}' })
  t.ok([401, 403, 415].includes(csrfJson.statusCode), `a text/plain "simple" POST is rejected (${csrfJson.statusCode})`)
  const after = await a.db.selectFrom('tokens').select('id').where('user_id', '=', alice.user.id).execute()
  t.equal(after.length, before.length, 'no token was created')

  const plain = await loginAs(a, 'alice', 'password123')
  const cookie = sessionCookie(plain)!
  t.match(cookie, /; HttpOnly/i)
  t.match(cookie, /; SameSite=(Lax|Strict)/i)
  t.notMatch(cookie, /; Secure/i, 'plain http: no Secure flag')
  const viaHttps = await loginAs(a, 'alice', 'password123', { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-proto': 'https', [EDGE_PROOF_HEADER]: edgeProof(TEST_SECRETS.SESSION_SECRET) } })
  t.match(sessionCookie(viaHttps)!, /; Secure/i, 'behind a trusted https proxy (the gateway, with its proof): Secure')
  const unproved = await loginAs(a, 'alice', 'password123', { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-proto': 'https' } })
  t.notMatch(sessionCookie(unproved)!, /; Secure/i, 'x-forwarded-proto from a trusted address without the gateway\'s proof (a smuggled request) is ignored')
  const spoofed = await loginAs(a, 'alice', 'password123', { remoteAddress: '198.51.100.30', headers: { 'x-forwarded-proto': 'https' } })
  t.notMatch(sessionCookie(spoofed)!, /; Secure/i, 'x-forwarded-proto from an untrusted client is ignored')

  const onB = await b.inject({ url: '/api/user/self', headers: { cookie: cookie.split(';')[0]!, 'new-api-user': String(alice.user.id) } })
  t.equal(onB.statusCode, 200, 'a session issued by one replica is valid on another')
  t.equal(onB.json().data.username, 'alice')
  const logout = await b.inject({ url: '/api/user/logout', headers: { cookie: cookie.split(';')[0]! } })
  t.equal(logout.statusCode, 200)
  t.equal((await a.inject({ url: '/api/user/self', headers: { cookie: cookie.split(';')[0]!, 'new-api-user': String(alice.user.id) } })).statusCode, 401, 'and logging out on one ends it on the other')
})
