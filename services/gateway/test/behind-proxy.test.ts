import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { fastifyOptions, trustProxyOption } from '@modelgate/service'
import { freePort, until } from '@modelgate/testing'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import gateway, { gatewayTrustProxy } from '../src/app.js'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser, usageEvents } from './fixtures.js'

// The system behind a real reverse proxy: nginx from the distribution (installed by .ci/run), in
// front of gateways built the way server.ts builds them, forwarding as a load balancer does:
// X-Forwarded-For extended with the peer's address, X-Forwarded-Proto https (TLS ends at nginx).

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0)
const ROOT_PASSWORD = 'proxy-test-pw'

/** nginx in the foreground, one `server` per backend: returns each one's base URL. */
async function nginx (t: Test, backends: string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-nginx-'))
  const ports = await Promise.all(backends.map(async () => await freePort()))
  const servers = backends.map((backend, i) => `
    server {
      listen 127.0.0.1:${ports[i]};
      location / {
        proxy_pass ${backend};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto https;
        proxy_buffering off;
      }
    }`).join('\n')
  writeFileSync(join(dir, 'nginx.conf'), `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${servers}
}
`)
  const child = spawn(NGINX!, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString() })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const urls = ports.map((p) => `http://127.0.0.1:${p}`)
  const up = await until(async () => {
    if (child.exitCode !== null) return false
    const codes = await Promise.all(urls.map(async (u) => await fetch(`${u}/healthz`).then((r) => r.status, () => 0)))
    return codes.every((c) => c === 200)
  })
  if (!up) {
    let log = ''
    try { log = readFileSync(join(dir, 'error.log'), 'utf8') } catch { /* none written */ }
    throw new Error(`nginx did not come up: ${stderr} ${log}`)
  }
  return urls
}

/** A gateway built the way server.ts builds it: trustProxy from GATEWAY_TRUST_PROXY. */
async function edgeGateway (t: Test, env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadGatewayConfig(env)
  const app = Fastify({ ...fastifyOptions('gateway', 'silent', { trustRequestId: false }), trustProxy: gatewayTrustProxy(config) })
  await app.register(gateway, { config })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  await reload(app)
  return app
}

const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

interface Answer { status: number, code: string | null }

async function chat (base: string, key: string, xff?: string): Promise<Answer> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(xff === undefined ? {} : { 'x-forwarded-for': xff }) },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  })
  const body = await res.json() as { error?: { code: string | null } }
  return { status: res.status, code: body.error?.code ?? null }
}

async function login (base: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${base}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD })
  })
  const body = await res.json() as { success: boolean, message?: string }
  if (!body.success) throw new Error(`login failed: ${res.status} ${body.message ?? ''}`)
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session='))
  if (cookie === undefined) throw new Error('no session cookie')
  return cookie
}

const secure = (cookie: string) => cookie.split(';').some((a) => a.trim().toLowerCase() === 'secure')

t.test('behind nginx: client addresses and HTTPS come through a trusted proxy, and only through one', { skip: NGINX === undefined ? 'nginx is not installed (apt-get install nginx; .ci/run installs it)' : false }, async (t) => {
  // The database and Redis of an ordinary test gateway; the edges below share them.
  const { app: seeder, env } = await buildGateway(t, {})
  const cpConfig = loadControlPlaneConfig({ ...env, INITIAL_ROOT_PASSWORD: ROOT_PASSWORD })
  // The control plane as its server.ts builds it: TRUST_PROXY (default) trusts the gateway's hop.
  const cp = Fastify({ ...fastifyOptions('control-plane', 'silent', { trustRequestId: true }), trustProxy: trustProxyOption(cpConfig.TRUST_PROXY) })
  await cp.register(controlPlane, { config: cpConfig })
  await cp.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => cp.close())

  const upstream = await fakeOpenAI(t)
  const user = await seedUser(seeder.db)
  await seedChannel(seeder.db, { baseUrl: upstream.url, models: ['gpt-4o-mini'] })
  const { key } = await seedToken(seeder.db, user.id)
  const allowed = await seedToken(seeder.db, user.id, { allowIps: '198.51.100.7' })

  const common = { ...env, CONTROL_PLANE_URL: urlOf(cp) }
  const trusting = await edgeGateway(t, { ...common, GATEWAY_TRUST_PROXY: 'loopback', RELAY_RATE_LIMIT_PER_MINUTE: '3' })
  const untrusting = await edgeGateway(t, { ...common, GATEWAY_TRUST_PROXY: '', RELAY_RATE_LIMIT_PER_MINUTE: '5' })
  const hops = await edgeGateway(t, { ...common, GATEWAY_TRUST_PROXY: '2', RELAY_RATE_LIMIT_PER_MINUTE: '3' })
  const [viaTrusting, viaUntrusting, viaHops] = await nginx(t, [urlOf(trusting), urlOf(untrusting), urlOf(hops)]) as [string, string, string]

  await t.test('GATEWAY_TRUST_PROXY=loopback: the address nginx reports is the client', async (t) => {
    const a: Answer[] = []
    for (let i = 0; i < 4; i++) a.push(await chat(viaTrusting, key, '198.51.100.1'))
    t.same(a.map((x) => x.status), [200, 200, 200, 429], 'client 198.51.100.1: three a minute, then 429')
    t.equal(a[3]!.code, 'rate_limit_exceeded', 'the per-IP relay limit')
    const b = await chat(viaTrusting, key, '198.51.100.2')
    t.equal(b.status, 200, 'client 198.51.100.2 has a limit of its own')
    // A client that writes its own X-Forwarded-For: nginx appends, the gateway reads the entry
    // nginx added (the rightmost untrusted one), so the forged one in front changes nothing.
    const forged = await chat(viaTrusting, key, '10.9.9.9, 198.51.100.1')
    t.equal(forged.status, 429, 'a forged entry before the real one does not escape the limit')

    t.equal((await chat(viaTrusting, allowed.key, '198.51.100.7')).status, 200, 'token allow list: the allowed client is admitted')
    const refused = await chat(viaTrusting, allowed.key, '198.51.100.8')
    t.same(refused, { status: 403, code: 'ip_not_allowed' }, 'another client is refused')

    t.equal((await chat(viaTrusting, key, '198.51.100.9')).status, 200, 'a request from 198.51.100.9')
    const events = await usageEvents(trusting)
    t.ok(events.some((e) => e.ip === '198.51.100.9'), 'its usage event carries the client\'s address')
    t.notOk(events.some((e) => e.ip === '127.0.0.1'), 'no event carries nginx\'s address')

    const viaNginx = await login(viaTrusting)
    t.ok(secure(viaNginx), `a console login through nginx (X-Forwarded-Proto https) sets a Secure cookie: ${viaNginx.split(';').slice(1).join(';')}`)
    const direct = await login(urlOf(trusting))
    t.notOk(secure(direct), 'the same gateway reached over plain HTTP without a proxy: no Secure')
    const forgedProto = await login(urlOf(untrusting), { 'x-forwarded-proto': 'https' })
    t.notOk(secure(forgedProto), 'X-Forwarded-Proto from a client that is not a trusted proxy is ignored')
  })

  await t.test('GATEWAY_TRUST_PROXY=2 (a hop count): the same, whatever the proxies\' addresses', async (t) => {
    // Two proxies: the test's client plays an outer one (a CDN, writing X-Forwarded-For), nginx the
    // load balancer (appending the CDN's address). The client is the entry before those two hops.
    const a: Answer[] = []
    for (let i = 0; i < 4; i++) a.push(await chat(viaHops, key, '198.51.100.61'))
    t.same(a.map((x) => x.status), [200, 200, 200, 429], 'client 198.51.100.61: three a minute, then 429')
    t.equal((await chat(viaHops, key, '198.51.100.62')).status, 200, 'client 198.51.100.62 has a limit of its own')
    t.equal((await chat(viaHops, allowed.key, '198.51.100.7')).status, 200, 'token allow list: the allowed client is admitted')
    t.same(await chat(viaHops, allowed.key, '198.51.100.8'), { status: 403, code: 'ip_not_allowed' }, 'another client is refused')
    t.equal((await chat(viaHops, key, '10.1.1.1, 198.51.100.61')).status, 429, 'only two hops are believed: a forged entry in front of the client\'s is not the client')
    const cookie = await login(viaHops)
    t.ok(secure(cookie), 'a console login through nginx sets a Secure cookie')
  })

  await t.test('GATEWAY_TRUST_PROXY empty: a spoofed X-Forwarded-For moves nothing', async (t) => {
    const refused = await chat(viaUntrusting, allowed.key, '198.51.100.7')
    t.same(refused, { status: 403, code: 'ip_not_allowed' }, 'claiming the allowed address does not pass the allow list')
    // The gateways queue to the same Redis: the new event is the one not there before (the
    // others' buffered events flushed first).
    for (const g of [trusting, hops]) await usageEvents(g)
    const before = new Set((await usageEvents(untrusting)).map((e) => e.request_id))
    t.equal((await chat(viaUntrusting, key, '198.51.100.40')).status, 200, 'a request claiming 198.51.100.40')
    const mine = (await usageEvents(untrusting)).filter((e) => !before.has(e.request_id))
    t.same(mine.map((e) => e.ip), ['127.0.0.1'], 'its usage event has the socket address (nginx), not the claimed one')
    const a: Answer[] = []
    for (let i = 0; i < 4; i++) a.push(await chat(viaUntrusting, key, `198.51.100.${50 + i}`))
    t.same(a.map((x) => x.status), [200, 200, 200, 429], 'one per-IP counter whatever each request claims (5 a minute: 2 above, 3 here)')
    const cookie = await login(viaUntrusting)
    t.notOk(secure(cookie), 'X-Forwarded-Proto https from an untrusted peer: no Secure')
  })
})
