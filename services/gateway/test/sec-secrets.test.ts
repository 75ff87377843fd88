import { randomBytes } from 'node:crypto'
import { createServer as createHttpServer } from 'node:http'
import { type AddressInfo, createServer as createTcpServer } from 'node:net'
import { Writable } from 'node:stream'
import { loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { createDb, settleUsageBatch } from '@modelgate/db'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import t from 'tap'
import gateway from '../src/app.js'
import { reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

const secret = (prefix: string) => `${prefix}${randomBytes(20).toString('hex')}`

/** Fastify options of `service` logging at debug into `sink`, as `LOG_LEVEL=debug` would. */
function debugOptions (service: string, sink: Writable, trustRequestId: boolean): FastifyServerOptions {
  const base = fastifyOptions(service, 'debug', { trustRequestId })
  return { ...base, logger: { ...(base.logger as object), level: 'debug', stream: sink } }
}

async function listen (t: Test, app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** An upstream that refuses every call and echoes the credential it was sent, as some providers do. */
async function echoingUpstream (t: Test): Promise<string> {
  const server = createHttpServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const sent = String(req.headers.authorization ?? req.headers['x-goog-api-key'] ?? req.headers['x-api-key'] ?? '')
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('key') ?? ''
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${sent}${query}. You can find your API key at https://example.test/keys?key=${query}`, type: 'invalid_request_error', code: 'invalid_api_key', status: 'UNAUTHENTICATED' } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** An SMTP server that offers AUTH and refuses every login, quoting what it was given. */
async function refusingSmtp (t: Test): Promise<number> {
  const server = createTcpServer((socket) => {
    socket.write('220 refusing.test ESMTP\r\n')
    let buffer = ''
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      let end: number
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (/^(EHLO|HELO)/i.test(line)) socket.write('250-refusing.test\r\n250 AUTH PLAIN LOGIN\r\n')
        else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n')
        else if (/^AUTH/i.test(line)) socket.write(`535 5.7.8 Authentication failed for ${Buffer.from(line.split(' ')[2] ?? '', 'base64').toString('latin1').replace(/\0/g, ' ')}\r\n`)
        else socket.write('502 5.5.2 not here\r\n')
      }
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return (server.address() as AddressInfo).port
}

/** A GitHub OAuth endpoint that fails, echoing the client secret it received. */
async function failingGitHub (t: Test): Promise<string> {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: 'server_error', error_description: `could not check ${Buffer.concat(chunks).toString()} ${req.url ?? ''}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Every key under `prefix` with its value, whatever its type, as text. */
async function dumpRedis (url: string, prefix: string): Promise<string[]> {
  const redis = new Redis(url, { lazyConnect: true })
  await redis.connect()
  try {
    const out: string[] = []
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', '500')
      cursor = next
      for (const key of keys) {
        const type = await redis.type(key)
        let value: unknown
        if (type === 'string') value = await redis.getBuffer(key).then((b) => b?.toString('latin1'))
        else if (type === 'hash') value = await redis.hgetall(key)
        else if (type === 'list') value = await redis.lrange(key, '0', '-1')
        else if (type === 'set') value = await redis.smembers(key)
        else if (type === 'zset') value = await redis.zrange(key, '0', '-1', 'WITHSCORES')
        else if (type === 'stream') value = await redis.xrange(key, '-', '+')
        out.push(`${key} ${JSON.stringify(value)}`)
      }
    } while (cursor !== '0')
    return out
  } finally {
    redis.disconnect()
  }
}

t.test('SEC-32 at LOG_LEVEL=debug no credential reaches a log line, a queued job, the logs table, Redis or an error answer', async (t) => {
  const env: Record<string, string> = { ...await createServiceEnv(t), LOG_LEVEL: 'debug', UPSTREAM_TIMEOUT_MS: '3000' }
  const db = createDb(env.DATABASE_URL!, { max: 2 })
  t.teardown(() => db.destroy())

  const upstream = await echoingUpstream(t)
  const smtpPort = await refusingSmtp(t)
  const github = await failingGitHub(t)
  const secrets = {
    rootPassword: secret('Pw'),
    channelKey: secret('sk-chan'),
    geminiKey: secret('AIzaSy'),
    smtpPassword: secret('smtp-pass-'),
    epayKey: secret('epay-key-'),
    githubSecret: secret('gh-secret-')
  }
  await db.insertInto('options').values([
    { key: 'SMTPServer', value: '127.0.0.1' },
    { key: 'SMTPPort', value: String(smtpPort) },
    { key: 'SMTPAccount', value: 'bot@modelgate.test' },
    { key: 'SMTPToken', value: secrets.smtpPassword },
    { key: 'SMTPFrom', value: 'noreply@modelgate.test' },
    { key: 'GitHubOAuthEnabled', value: 'true' },
    { key: 'GitHubClientId', value: 'gh-client-id' },
    { key: 'GitHubClientSecret', value: secrets.githubSecret },
    { key: 'EpayId', value: '1001' },
    { key: 'EpayKey', value: secrets.epayKey },
    { key: 'PayAddress', value: 'http://127.0.0.1:9/' },
    { key: 'ServerAddress', value: 'http://127.0.0.1:3000' },
    { key: 'ModelRatio', value: JSON.stringify({ 'gemini-2.5-flash': 0.15 }) }
  ]).execute()

  const lines: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done() } })
  const cp = Fastify({ ...debugOptions('control-plane', sink, true), trustProxy: 'loopback' })
  await cp.register(controlPlane, { config: loadControlPlaneConfig({ ...env, INITIAL_ROOT_PASSWORD: secrets.rootPassword.slice(0, 20), GITHUB_OAUTH_URL: github, GITHUB_API_URL: github }) })
  const cpUrl = await listen(t, cp)
  // Seeded after the control plane started: the root account is made only in an empty database.
  const user = await seedUser(db)
  const token = await seedToken(db, user.id)
  await seedChannel(db, { baseUrl: upstream, models: ['gpt-4o-mini'], key: secrets.channelKey })
  await seedChannel(db, { type: 24, baseUrl: upstream, models: ['gemini-2.5-flash'], key: secrets.geminiKey })
  const gw = Fastify(debugOptions('gateway', sink, false))
  await gw.register(gateway, { config: loadGatewayConfig({ ...env, CONTROL_PLANE_URL: cpUrl }) })
  const url = await listen(t, gw)
  await reload(gw)

  // Every answer that is not a success is kept, headers and body.
  const answers: string[] = []
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${url}${path}`, init)
    const text = await res.text()
    if (res.status >= 400 || /"success":false|^fail$/.test(text)) answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`)
    return { res, text }
  }
  const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  const json = { 'content-type': 'application/json' }
  const gemini = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
  const unknownKey = secret('sk-')

  // Relay calls on every carrier of the relay key; the upstreams refuse and echo the channel key.
  t.equal((await call('/v1/chat/completions', { method: 'POST', headers: { ...json, authorization: `Bearer ${token.key}` }, body: chat })).res.status >= 400, true, 'the OpenAI channel fails (401 echoing its key)')
  await call('/v1/chat/completions', { method: 'POST', headers: { ...json, 'x-api-key': token.key }, body: chat })
  await call('/v1/chat/completions', { method: 'POST', headers: { ...json, authorization: `Bearer ${unknownKey}` }, body: chat })
  await call('/v1beta/models/gemini-2.5-flash:generateContent', { method: 'POST', headers: { ...json, 'x-goog-api-key': token.key }, body: gemini })
  await call(`/v1beta/models/gemini-2.5-flash:generateContent?key=${token.key}`, { method: 'POST', headers: json, body: gemini })
  await call(`/v1/chat/completions?key=${unknownKey}`, { method: 'POST', headers: json, body: chat })

  // The console: password login (cookie), a personal access token and its use.
  const login = await call('/api/user/login', { method: 'POST', headers: json, body: JSON.stringify({ username: 'root', password: secrets.rootPassword.slice(0, 20) }) })
  t.equal(login.res.status, 200)
  const cookie = login.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const rootId = String((JSON.parse(login.text) as { data: { id: number } }).data.id)
  t.match(cookie, /session=/)
  const issued = await call('/api/user/token', { headers: { cookie, 'new-api-user': rootId } })
  const accessToken = (JSON.parse(issued.text) as { data: string }).data
  t.ok(typeof accessToken === 'string' && accessToken.length >= 16, 'an access token was issued')
  t.equal((await call('/api/user/self', { headers: { authorization: `Bearer ${accessToken}`, 'new-api-user': rootId } })).res.status, 200, 'the access token works')
  await call('/api/user/self', { headers: { authorization: `Bearer ${accessToken}x`, 'new-api-user': rootId } })
  await call('/api/user/login', { method: 'POST', headers: json, body: JSON.stringify({ username: 'root', password: `${secrets.rootPassword}-wrong` }) })

  // SMTP refuses the login; GitHub fails echoing the client secret; an epay notify is forged.
  const mail = await call('/api/verification?email=someone@mail.test')
  t.match(mail.text, /"success":false/, 'the mail could not be sent')
  const state = await call('/api/oauth/state')
  const stateCookie = state.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const oauth = await call(`/api/oauth/github?code=abc&state=${encodeURIComponent((JSON.parse(state.text) as { data: string }).data)}`, { headers: { cookie: stateCookie } })
  t.match(oauth.text, /"success":false/, 'the GitHub login failed')
  const notify = await call(`/api/user/epay/notify?pid=1001&trade_no=T1&out_trade_no=O1&type=alipay&name=x&money=1.00&trade_status=TRADE_SUCCESS&sign=${'0'.repeat(32)}&sign_type=MD5`)
  t.equal(notify.text, 'fail', 'the forged notify is refused')

  // What was produced: queued usage events settled into the logs table as the worker does.
  await gw.usagePublisher.drain()
  const events = await usageEvents(gw)
  t.ok(events.length >= 1, `usage events were queued (${events.length})`)
  await settleUsageBatch(db, events, { writeLog: true })
  const logRows = await db.selectFrom('logs').select(['content', 'other']).execute()
  t.ok(logRows.length >= 2, 'the failed calls were logged')
  const redisDump = await dumpRedis(env.REDIS_URL!, env.REDIS_KEY_PREFIX ?? '')
  t.ok(redisDump.some((l) => l.includes('bull')), 'the BullMQ queue is in the dump')

  const credentials: Record<string, string> = {
    ...secrets,
    rootPassword: secrets.rootPassword.slice(0, 20),
    relayKey: token.key.slice(3),
    unknownKey: unknownKey.slice(3),
    accessToken,
    cookie: cookie.replace(/^.*?session=/, '').slice(0, 40)
  }
  const sources: Record<string, string[]> = {
    'service logs': lines,
    'Redis (queues included)': redisDump,
    'logs table': logRows.map((r) => JSON.stringify(r)),
    'error answers': answers
  }
  t.ok(gw.log.level === 'debug' && cp.log.level === 'debug' && lines.length > 20, `both services logged at debug (${lines.length} lines)`)
  for (const [where, texts] of Object.entries(sources)) {
    for (const [what, value] of Object.entries(credentials)) {
      const leaks = texts.filter((text) => text.includes(value))
      t.same(leaks, [], `no ${what} in ${where}`)
    }
  }
})
