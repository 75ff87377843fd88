import { ROLES } from '@modelgate/contracts'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { testDns, type TestDns } from '@modelgate/testing'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

// SSRF (issue 18, SEC-22 and SEC-24). Every target that would reach a non-loopback address is
// refused before any packet leaves: these tests only ever connect to servers on 127.0.0.1.

const EN = { 'accept-language': 'en' }
/** What a target must never leak to the console: it is in every body our fake internal servers send. */
const INTERNAL_SECRET = 'INTERNAL-ONLY-5f2c'

interface Recorder {
  url: string
  port: number
  hits: Array<{ method: string, path: string, headers: IncomingMessage['headers'] }>
}

/** An HTTP server on 127.0.0.1 recording every request; `answer` decides the reply. */
async function recorder (t: Test, answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }], secret: INTERNAL_SECRET }))
}): Promise<Recorder> {
  const rec: Recorder = { url: '', port: 0, hits: [] }
  const server = createHttpServer((req, res) => {
    rec.hits.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers })
    req.resume()
    req.on('end', () => { answer(req, res) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  rec.port = (server.address() as AddressInfo).port
  rec.url = `http://127.0.0.1:${rec.port}`
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }))
  return rec
}

/** A TCP server that is not HTTP (a database or cache port): it writes a banner holding the secret and closes. */
async function bannerServer (t: Test): Promise<{ port: number, connections: () => number }> {
  let n = 0
  const sockets = new Set<Socket>()
  const server = createTcpServer((socket) => {
    n++
    sockets.add(socket)
    socket.on('error', () => {})
    socket.end(`-ERR ${INTERNAL_SECRET} unknown command\r\n`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy()
    server.close(() => { resolve() })
  }))
  return { port: (server.address() as AddressInfo).port, connections: () => n }
}

async function dns (t: Test): Promise<TestDns> {
  const d = await testDns()
  t.teardown(d.close)
  return d
}

async function api (app: FastifyInstance, s: Session, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown): Promise<{ status: number, body: { success: boolean, message: string, data?: unknown } }> {
  const res = await app.inject({ method, url, headers: { ...s.headers, ...EN }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
  return { status: res.statusCode, body: res.json() }
}

const channel = (baseUrl: string, extra: Record<string, unknown> = {}) => ({ name: 'ssrf', type: 1, key: 'sk-channel-secret-key', models: 'gpt-4o-mini', base_url: baseUrl, ...extra })

t.test('SEC-22 channel base URLs to internal targets: metadata and non-http refused on save, private ones only under OUTBOUND_PUBLIC_ONLY, checked again at connect time, never echoing the target', async (t) => {
  const names = await dns(t)
  names.answers.set('ten.internal.test', ['10.0.0.5'])
  const banner = await bannerServer(t)
  const upstream = await recorder(t)
  names.answers.set('loopback.internal.test', ['127.0.0.1'])

  const METADATA = ['http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal', 'http://100.100.100.200', 'http://[fd00:ec2::254]', 'http://[::ffff:169.254.169.254]']
  const NOT_HTTP = ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO']
  const LOOPBACK = ['http://127.0.0.1:5432', 'http://[::ffff:127.0.0.1]', 'http://0x7f000001', 'http://2130706433', `http://ten.internal.test:${upstream.port}`]

  await t.test('default mode (self-hosters: local model servers allowed)', async (t) => {
    const app = await build(t, { OUTBOUND_DNS_SERVERS: names.server })
    const root = await login(app, ROOT.username, ROOT.password)
    for (const url of [...METADATA, ...NOT_HTTP]) {
      const res = await api(app, root, 'POST', '/api/channel/', channel(url))
      t.equal(res.body.success, false, `${url} is refused on save`)
      t.match(res.body.message, /refused|http:\/\/ or https:\/\//, `${url}: a clear message`)
    }
    const saved = await app.db.selectFrom('channels').select('id').execute()
    t.equal(saved.length, 0, 'nothing was saved')

    // Editing an existing channel to a metadata address is refused the same way.
    const ok = await api(app, root, 'POST', '/api/channel/', channel(upstream.url))
    t.equal(ok.body.success, true, 'a loopback upstream (a local Ollama) saves in default mode')
    const id = (ok.body.data as Array<{ id: number }>)[0]!.id
    const edit = await api(app, root, 'PUT', '/api/channel/', { id, base_url: 'http://169.254.169.254' })
    t.match(edit.body, { success: false, message: /metadata/ }, 'an edit to a metadata address is refused')

    // 127.0.0.1:5432 saves; a test against a port that does not speak HTTP fails cleanly, without its bytes.
    const pg = await api(app, root, 'POST', '/api/channel/', channel('http://127.0.0.1:5432'))
    t.equal(pg.body.success, true, 'http://127.0.0.1:5432 saves in default mode')
    const raw = await api(app, root, 'POST', '/api/channel/', channel(`http://127.0.0.1:${banner.port}`))
    const rawId = (raw.body.data as Array<{ id: number }>)[0]!.id
    const tested = await api(app, root, 'GET', `/api/channel/test/${rawId}`)
    t.equal(tested.body.success, false, 'the test of a non-HTTP port fails')
    t.ok(banner.connections() >= 1, 'it did connect (loopback is allowed by default)')
    t.notOk(JSON.stringify(tested.body).includes(INTERNAL_SECRET), 'the failure does not echo what the port sent')
    const models = await api(app, root, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: `http://127.0.0.1:${banner.port}` })
    t.equal(models.body.success, false, 'listing its models fails')
    t.notOk(JSON.stringify(models.body).includes(INTERNAL_SECRET), 'without echoing what the port sent')

    // An internal HTTP answer that is not the provider's error shape is not reflected either.
    const html = await recorder(t, (_req, res) => { res.writeHead(403, { 'content-type': 'text/html' }).end(`<h1>${INTERNAL_SECRET}</h1>`) })
    const htmlModels = await api(app, root, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: html.url })
    t.equal(htmlModels.body.success, false)
    t.notOk(JSON.stringify(htmlModels.body).includes(INTERNAL_SECRET), 'an internal page is not reflected in the error')
  })

  await t.test('OUTBOUND_PUBLIC_ONLY: private and loopback refused on save and at connect time', async (t) => {
    const app = await build(t, { OUTBOUND_PUBLIC_ONLY: 'true', OUTBOUND_DNS_SERVERS: names.server })
    const root = await login(app, ROOT.username, ROOT.password)
    for (const url of [...METADATA, ...NOT_HTTP, ...LOOPBACK]) {
      const res = await api(app, root, 'POST', '/api/channel/', channel(url))
      t.equal(res.body.success, false, `${url} is refused on save`)
    }
    t.match((await api(app, root, 'POST', '/api/channel/', channel('http://2130706433'))).body.message, /127\.0\.0\.1 is refused: it is a private, loopback or reserved address/, 'the message names the address and why')
    t.match((await api(app, root, 'POST', '/api/channel/', channel(`http://ten.internal.test:${upstream.port}`))).body.message, /ten\.internal\.test is refused/, 'a name resolving to 10.0.0.5 is refused')
    t.equal((await app.db.selectFrom('channels').select('id').execute()).length, 0, 'nothing was saved')

    // A channel stored before the switch (or by a name that resolved elsewhere then) is refused when used.
    const rows = await app.db.insertInto('channels').values([
      `http://127.0.0.1:${upstream.port}`, `http://[::ffff:127.0.0.1]:${upstream.port}`, `http://0x7f000001:${upstream.port}`,
      `http://2130706433:${upstream.port}`, `http://loopback.internal.test:${upstream.port}`
    ].map((base) => ({
      type: 1, name: base, key: app.secrets.seal('sk-channel-secret-key'), base_url: base, models: 'gpt-4o-mini', group: 'default',
      priority: 0, weight: 0, auto_ban: 0, model_mapping: '', status_code_mapping: '', openai_organization: null, proxy_url: '', tag: null,
      max_input_tokens: 0, multi_key_mode: 'random', param_override: '', header_override: '', other_info: {}
    }))).returning(['id', 'base_url']).execute()
    for (const row of rows) {
      const tested = await api(app, root, 'GET', `/api/channel/test/${row.id}`)
      t.equal(tested.body.success, false, `testing ${row.base_url} fails`)
      t.match(tested.body.message, /refused/, `testing ${row.base_url} says it was refused`)
      const models = await api(app, root, 'GET', `/api/channel/fetch_models/${row.id}`)
      t.equal(models.body.success, false, `listing the models of ${row.base_url} fails`)
    }
    t.equal(upstream.hits.length, 0, 'the loopback upstream was never contacted')
  })

  await t.test('OUTBOUND_ALLOW re-enables listed private targets (a LAN model server) in public-only mode', async (t) => {
    const app = await build(t, { OUTBOUND_PUBLIC_ONLY: 'true', OUTBOUND_ALLOW: '127.0.0.0/8, metadata.google.internal', OUTBOUND_DNS_SERVERS: names.server })
    const root = await login(app, ROOT.username, ROOT.password)
    const res = await api(app, root, 'POST', '/api/channel/', channel(upstream.url))
    t.equal(res.body.success, true, 'a listed CIDR saves')
    const models = await api(app, root, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: upstream.url })
    t.same(models.body.data, ['gpt-4o-mini'], 'and is reached')
    t.equal((await api(app, root, 'POST', '/api/channel/', channel('http://metadata.google.internal'))).body.success, true, 'a listed host name saves')
    t.equal((await api(app, root, 'POST', '/api/channel/', channel(`http://ten.internal.test:${upstream.port}`))).body.success, false, 'an unlisted private one is still refused')
    t.equal((await api(app, root, 'POST', '/api/channel/', channel('http://169.254.169.254'))).body.success, false, 'an unlisted metadata address is still refused')
  })
})

t.test('SEC-24 other outbound URLs: fetch_models and proxies through the same guard, admins only; option addresses checked; the WeChat token only sent to its host', async (t) => {
  const names = await dns(t)
  names.answers.set('ten.internal.test', ['10.0.0.5'])
  const upstream = await recorder(t)

  await t.test('POST /api/channel/fetch_models', async (t) => {
    const app = await build(t, { OUTBOUND_PUBLIC_ONLY: 'true', OUTBOUND_DNS_SERVERS: names.server })
    const root = await login(app, ROOT.username, ROOT.password)
    const user = await userSession(app, 'plain', ROLES.common)
    const asUser = await api(app, user, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: upstream.url })
    t.equal(asUser.status, 403, 'a normal user may not call it')

    for (const base of ['http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal', upstream.url, `http://ten.internal.test:${upstream.port}`, 'file:///etc/passwd']) {
      const res = await api(app, root, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: base })
      t.equal(res.body.success, false, `base_url ${base} is refused`)
    }
    for (const proxy of ['socks5://127.0.0.1:6379', 'http://169.254.169.254', 'socks5h://[::ffff:127.0.0.1]:1080', `http://ten.internal.test:${upstream.port}`]) {
      const res = await api(app, root, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: 'https://api.openai.com', proxy_url: proxy })
      t.match(res.body, { success: false, message: /refused/ }, `proxy ${proxy} is refused`)
    }
    for (const proxy of ['ftp://proxy.example.com', 'file:///tmp/x', 'gopher://proxy.example.com']) {
      const res = await api(app, root, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: 'https://api.openai.com', proxy_url: proxy })
      t.match(res.body, { success: false, message: /socks5/ }, `a ${proxy.split(':')[0]}: proxy is refused`)
    }
    t.equal(upstream.hits.length, 0, 'nothing reached the internal server')
  })

  await t.test('a proxy at a metadata address is refused in default mode, a loopback one allowed', async (t) => {
    const app = await build(t, { OUTBOUND_DNS_SERVERS: names.server })
    const root = await login(app, ROOT.username, ROOT.password)
    const res = await api(app, root, 'POST', '/api/channel/', channel('https://api.openai.com', { proxy_url: 'http://169.254.169.254:3128' }))
    t.match(res.body, { success: false, message: /metadata/ }, 'a metadata proxy is refused')
    const local = await api(app, root, 'POST', '/api/channel/', channel('https://api.openai.com', { proxy_url: 'socks5://127.0.0.1:1080' }))
    t.equal(local.body.success, true, 'a local proxy saves in default mode')
  })

  await t.test('address options: metadata always refused; connected ones under public-only too', async (t) => {
    const app = await build(t, { OUTBOUND_PUBLIC_ONLY: 'true', OUTBOUND_DNS_SERVERS: names.server })
    const root = await login(app, ROOT.username, ROOT.password)
    await app.saveOptions({ ServerAddress: 'https://gateway.example.com' })
    const put = async (key: string, value: string) => (await api(app, root, 'PUT', '/api/option/', { key, value })).body
    for (const key of ['WeChatServerAddress', 'WorkerUrl', 'PayAddress', 'CustomCallbackAddress', 'ServerAddress']) {
      t.match(await put(key, 'http://169.254.169.254/latest'), { success: false, message: /metadata/ }, `${key} refuses a metadata address`)
    }
    t.match(await put('SMTPServer', '169.254.169.254'), { success: false, message: /metadata/ }, 'SMTPServer refuses a metadata address')
    t.match(await put('SMTPServer', 'metadata.google.internal'), { success: false }, 'and a metadata name')
    t.match(await put('WeChatServerAddress', `http://127.0.0.1:${upstream.port}`), { success: false, message: /private/ }, 'a loopback WeChat server is refused under public-only')
    t.match(await put('WorkerUrl', `http://ten.internal.test:${upstream.port}`), { success: false, message: /private/ }, 'a WorkerUrl resolving to 10.0.0.5 too')
    t.match(await put('SMTPServer', '127.0.0.1'), { success: false, message: /private/ }, 'and a loopback SMTP server')
    // The browser is sent to these, the server never connects: a private address stays possible.
    t.match(await put('PayAddress', 'http://192.168.1.10/pay'), { success: true }, 'PayAddress is only checked for metadata')
    t.match(await put('WeChatServerAddress', 'https://wechat.example.com'), { success: true }, 'a public WeChat server saves')
    const user = await userSession(app, 'admin2', ROLES.admin)
    t.equal((await api(app, user, 'PUT', '/api/option/', { key: 'WeChatServerAddress', value: 'https://x.example.com' })).status, 403, 'options are root-only')
  })

  await t.test('the WeChat server token goes only to the configured host: a redirect is not followed', async (t) => {
    const elsewhere = await recorder(t)
    const wechat = await recorder(t, (_req, res) => { res.writeHead(302, { location: `${elsewhere.url}/api/wechat/user?code=abc` }).end() })
    const app = await build(t)
    await app.saveOptions({ WeChatAuthEnabled: 'true', WeChatServerAddress: wechat.url, WeChatServerToken: 'wx-server-token-secret' })
    const res = await app.inject({ url: '/api/oauth/wechat?code=abc', headers: EN })
    t.equal(res.json().success, false, 'the sign-in fails')
    t.equal(wechat.hits.length, 1, 'the configured server was asked')
    t.equal(wechat.hits[0]!.headers.authorization, 'wx-server-token-secret', 'with the token')
    t.equal(elsewhere.hits.length, 0, 'the host it redirected to saw nothing')

    const meta = await build(t)
    await meta.saveOptions({ WeChatAuthEnabled: 'true', WeChatServerAddress: 'http://metadata.google.internal', WeChatServerToken: 'wx-server-token-secret' })
    const refused = await meta.inject({ url: '/api/oauth/wechat?code=abc', headers: EN })
    t.equal(refused.json().success, false, 'a WeChat server stored at a metadata name is refused when used')
  })
})
