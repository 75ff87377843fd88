import type { AddressInfo } from 'node:net'
import { loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { startTestSmtpServer } from '@modelgate/mail/testing'
import { fastifyOptions } from '@modelgate/service'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import t from 'tap'
import gateway, { gatewayTrustProxy } from '../src/app.js'
import { buildGateway, fakeOpenAI, reload, secondGateway, seedChannel, seedToken, seedUser } from './fixtures.js'

type Answer = { status: number, retryAfter: string | null, body: { error?: { message: string, code: string | null } } }

async function post (base: string, key: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  })
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() as Answer['body'] }
}

/** A gateway replica built the way server.ts builds it: trust proxy from GATEWAY_TRUST_PROXY. */
async function edgeReplica (t: Test, env: Record<string, string>): Promise<{ app: FastifyInstance, url: string }> {
  const config = loadGatewayConfig(env)
  const app = Fastify({ ...fastifyOptions('gateway', 'silent', { trustRequestId: false }), trustProxy: gatewayTrustProxy(config) })
  await app.register(gateway, { config })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

/** A control plane built the way its server.ts builds it (trust proxy from TRUST_PROXY). */
async function consoleReplica (t: Test, env: Record<string, string>): Promise<{ app: FastifyInstance, url: string }> {
  const config = loadControlPlaneConfig(env)
  const app = Fastify({ ...fastifyOptions('control-plane', 'silent', { trustRequestId: true }), trustProxy: config.TRUST_PROXY })
  await app.register(controlPlane, { config })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

const retryAfterOk = (value: string | null, max: number) => value !== null && /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= max

t.test('SEC-29 relay limits per IP and per token hold across 3 replicas with 429 and Retry-After, spoofed X-Forwarded-For moves nothing, mail has a cooldown and hourly caps per address and per IP, a code dies after 5 wrong guesses', async (t) => {
  const { app, url, env } = await buildGateway(t, { RELAY_RATE_LIMIT_PER_MINUTE: '12' })
  const replicas = [await secondGateway(t, env), await secondGateway(t, env)]
  const urls = [url, ...replicas.map((r) => r.url)]
  const upstream = await fakeOpenAI(t)
  const user = await seedUser(app.db)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  for (const a of [app, ...replicas.map((r) => r.app)]) await reload(a)
  const prefix = env['REDIS_KEY_PREFIX'] ?? ''

  await t.test('per-token requests per minute across 3 replicas', async (t) => {
    const limited = await seedToken(app.db, user.id, { rpm: 3 })
    const answers: Answer[] = []
    for (let i = 0; i < 5; i++) answers.push(await post(urls[i % 3]!, limited.key))
    t.same(answers.map((a) => a.status), [200, 200, 200, 429, 429], 'three a minute, whichever replica answers')
    t.equal(answers[3]!.body.error?.code, 'rate_limit_exceeded')
    t.ok(retryAfterOk(answers[3]!.retryAfter, 120), `Retry-After: ${answers[3]!.retryAfter}`)
  })

  await t.test('per-IP relay limit across 3 replicas; X-Forwarded-For from the client is not believed', async (t) => {
    // 5 requests were counted above; 7 more fit in the 12 a minute, each claiming another address.
    const { key } = await seedToken(app.db, user.id)
    const answers: Answer[] = []
    for (let i = 0; i < 10; i++) answers.push(await post(urls[i % 3]!, key, { 'x-forwarded-for': `203.0.113.${i + 1}` }))
    t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200, 200, 429, 429, 429], 'one count for the socket address, on every replica')
    const refused = answers[7]!
    t.equal(refused.body.error?.code, 'rate_limit_exceeded', 'refused in OpenAI\'s error shape')
    t.ok(retryAfterOk(refused.retryAfter, 60), `Retry-After: ${refused.retryAfter}`)
    const counters = await app.redis.keys(`${prefix}ratelimit:relay:*`)
    t.equal(counters.length, 1, 'one shared counter in Redis, not one per replica or per claimed address')

    // A replica behind a load balancer listed in GATEWAY_TRUST_PROXY counts the address the
    // balancer reports: the rightmost entry not itself a trusted proxy, never one a client prepended.
    const behindLb = await edgeReplica(t, { ...env, GATEWAY_TRUST_PROXY: '127.0.0.1' })
    await reload(behindLb.app)
    const viaLb = async (xff: string) => await post(behindLb.url, key, { 'x-forwarded-for': xff })
    const fromOne: number[] = []
    for (let i = 0; i < 13; i++) fromOne.push((await viaLb(i % 2 === 0 ? '198.51.100.7' : `10.9.9.${i}, 198.51.100.7`)).status)
    t.same(fromOne, [...Array<number>(12).fill(200), 429], 'the client the balancer saw has its own 12, whatever chain it wrote in front')
    t.equal((await viaLb('198.51.100.8')).status, 200, 'another client behind the balancer is counted apart')
  })

  const smtp = await startTestSmtpServer()
  t.teardown(() => smtp.close())
  await app.db.insertInto('options').values([
    { key: 'SMTPServer', value: smtp.host },
    { key: 'SMTPPort', value: String(smtp.port) },
    { key: 'SMTPAccount', value: 'bot@modelgate.test' },
    { key: 'SMTPToken', value: 'smtp-secret' },
    { key: 'SMTPFrom', value: 'noreply@modelgate.test' },
    { key: 'EmailVerificationEnabled', value: 'true' }
  ]).onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))).execute()
  const cps = [await consoleReplica(t, env), await consoleReplica(t, env)]

  await t.test('mail: 30 s cooldown per address, hourly caps per address and per IP, counted in Redis across replicas', async (t) => {
    const front = await edgeReplica(t, { ...env, CONTROL_PLANE_URL: cps[0]!.url })
    const delivered = (to: string) => smtp.messages.filter((m) => m.envelope.to.includes(to)).length
    const ask = async (app: FastifyInstance, path: string, email: string, ip: string) => {
      const res = await app.inject({ url: `/api/${path}?email=${encodeURIComponent(email)}`, remoteAddress: ip, headers: { 'accept-language': 'en' } })
      return { status: res.statusCode, retryAfter: res.headers['retry-after'] ?? null, body: res.json<{ success: boolean, message: string }>() }
    }

    // 100 code requests for one address, from two clients on two replicas: one mail.
    const victim = 'victim@mail.test'
    const burst = []
    for (let i = 0; i < 100; i++) burst.push(await ask(cps[i % 2]!.app, 'verification', victim, i % 2 === 0 ? '198.51.100.21' : '198.51.100.22'))
    t.equal(burst.filter((a) => a.body.success).length, 1, 'one request sends')
    t.ok(burst.slice(1, 10).every((a) => !a.body.success && /^Please wait \d+ seconds before sending again$/.test(a.body.message)), 'the next ones are told to wait out the 30 s cooldown')
    t.ok(burst.filter((a) => a.status === 429).every((a) => retryAfterOk(a.retryAfter as string, 1200)), 'past the per-IP route limit: 429 with Retry-After')
    t.equal(delivered(victim), 1, 'one mail delivered')

    // Each time the 30 s pass (the cooldown key lapses), one more mail may go, up to 5 an hour
    // for the address, whoever asks (a fresh client address each time, so no per-IP limit applies).
    const hourly: Array<Awaited<ReturnType<typeof ask>>> = []
    for (let i = 0; i < 10; i++) {
      await app.redis.del('verify:cooldown:email:victim@mail.test', 'verify:cooldown:reset:victim@mail.test')
      hourly.push(await ask(cps[i % 2]!.app, i % 2 === 0 ? 'verification' : 'reset_password', victim, `198.51.100.${30 + i}`))
    }
    t.same(hourly.map((a) => a.body.success), [true, true, true, true, false, false, false, false, false, false], 'five mails an hour for one address, codes and reset links together')
    t.ok(hourly.slice(4).every((a) => a.status === 429 && retryAfterOk(a.retryAfter as string, 3600)), 'then 429 with Retry-After up to an hour')
    t.equal(hourly[4]!.body.message, 'Too many mails requested; try again in 60 minutes')
    t.equal(delivered(victim), 3, 'code mails delivered: the first and two more (reset requests for an address without an account mail nothing)')

    // 100 addresses from one client, through the gateway, each request claiming another address
    // in X-Forwarded-For, alternating the two mail routes (each has its own per-route limit).
    const sweep = []
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${front.url}/api/${i % 2 === 0 ? 'verification' : 'reset_password'}?email=sweep${i}@mail.test`, { headers: { 'x-forwarded-for': `192.0.2.${i + 1}`, 'accept-language': 'en' } })
      sweep.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() as { success: boolean } })
    }
    t.equal(sweep.filter((a) => a.body.success).length, 20, 'twenty mails an hour from one client address')
    t.ok(sweep.filter((a) => !a.body.success).every((a) => a.status === 429 && retryAfterOk(a.retryAfter, 3600)), 'the rest refused with 429 and Retry-After')
    t.equal(smtp.messages.filter((m) => m.envelope.to.some((to) => to.startsWith('sweep'))).length, 10, 'ten code mails delivered (the reset requests named no account)')
    t.equal(await app.redis.get('verify:hourly:ip:127.0.0.1'), '20', 'counted for the socket address, in Redis')
  })

  await t.test('a code is burnt by its 5th wrong guess: the right one then fails too', async (t) => {
    const cp = cps[1]!
    const codeFor = async (email: string, ip: string) => {
      const res = await cp.app.inject({ url: `/api/verification?email=${email}`, remoteAddress: ip })
      t.equal(res.json().success, true, `a code mailed to ${email}`)
      return /\b(\d{6})\b/.exec(smtp.lastTo(email)?.text ?? '')?.[1] ?? ''
    }
    const register = async (email: string, code: string, i: number) => (await cp.app.inject({
      method: 'POST',
      url: '/api/user/register',
      remoteAddress: `198.51.100.${100 + i}`,
      headers: { 'accept-language': 'en' },
      payload: { username: `g${i}${email.slice(0, 4)}`, password: 'long-enough-1', email, verification_code: code }
    })).json<{ success: boolean, message: string }>()

    const code = await codeFor('guess@mail.test', '198.51.100.90')
    t.match(code, /^\d{6}$/)
    const wrong = (n: number) => String((Number(code) + n) % 1_000_000).padStart(6, '0')
    const guesses = []
    for (let i = 1; i <= 20; i++) guesses.push(await register('guess@mail.test', wrong(i), i))
    t.ok(guesses.every((g) => !g.success && g.message === 'Verification code wrong or expired'), '20 wrong codes refused')
    t.equal((await register('guess@mail.test', code, 21)).success, false, 'the right code no longer works')

    const second = await codeFor('fourth@mail.test', '198.51.100.91')
    for (let i = 1; i <= 4; i++) t.equal((await register('fourth@mail.test', String((Number(second) + i) % 1_000_000).padStart(6, '0'), 30 + i)).success, false)
    t.equal((await register('fourth@mail.test', second, 40)).success, true, 'after 4 wrong guesses the right code still registers')
  })
})
