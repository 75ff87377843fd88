import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import gateway from '../src/app.js'

async function buildGateway (t: Test, env: Record<string, string>) {
  const app = Fastify(fastifyOptions('gateway', 'silent', { trustRequestId: false }))
  await app.register(gateway, { config: loadGatewayConfig(env) })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

t.test('serves the control plane\'s /api/status through the proxy', async (t) => {
  const env = await createServiceEnv(t)
  const cp = Fastify()
  await cp.register(controlPlane, { config: loadControlPlaneConfig(env) })
  await cp.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => cp.close())
  const gw = await buildGateway(t, { ...env, CONTROL_PLANE_URL: `http://127.0.0.1:${(cp.server.address() as AddressInfo).port}` })
  const res = await gw.inject('/api/status')
  t.equal(res.statusCode, 200)
  t.match(res.json(), { success: true, data: { system_name: 'ModelGate', quota_per_unit: 500000 } })
  const missing = await gw.inject({ url: '/api/missing', headers: { 'accept-language': 'en' } })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { success: false, message: 'Not found' }, 'control plane errors pass through unchanged')
})

t.test('forwards method, body, query and the client address', async (t) => {
  let seen: { method?: string, url?: string, headers?: IncomingHttpHeaders, body?: string } = {}
  const upstream = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => {
      seen = { method: req.method, url: req.url, headers: req.headers, body }
      res.writeHead(201, { 'content-type': 'application/json', 'set-cookie': 'session=abc; HttpOnly' })
      res.end('{"success":true,"message":"","data":1}')
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => upstream.close())
  const env = await createServiceEnv(t)
  const gw = await buildGateway(t, { ...env, CONTROL_PLANE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` })
  const res = await gw.inject({
    method: 'POST',
    url: '/api/user/login?turnstile=x',
    headers: { 'content-type': 'application/json', 'x-request-id': 'abc-123' },
    payload: '{"username":"root","password":"123456"}',
    remoteAddress: '203.0.113.9'
  })
  t.equal(res.statusCode, 201)
  t.same([res.headers['set-cookie']].flat(), ['session=abc; HttpOnly'], 'cookies come back to the browser')
  t.equal(seen.method, 'POST')
  t.equal(seen.url, '/api/user/login?turnstile=x')
  t.equal(seen.body, '{"username":"root","password":"123456"}', 'the body arrives untouched')
  t.equal(seen.headers?.['x-forwarded-for'], '203.0.113.9')
  const forwardedId = seen.headers?.['x-request-id']
  t.match(forwardedId, /^[0-9a-f-]{36}$/, 'the gateway mints its own request id and passes it on')
  t.not(forwardedId, 'abc-123', 'a client-chosen request id is not trusted')
})

t.test('relay paths never fall through to the control plane', async (t) => {
  const env = await createServiceEnv(t)
  const gw = await buildGateway(t, { ...env, CONTROL_PLANE_URL: 'http://127.0.0.1:1' })
  for (const url of ['/v1/does-not-exist', '/mj/unknown', '/v1']) {
    const res = await gw.inject({ method: 'POST', url })
    t.equal(res.statusCode, 404, url)
    t.same(res.json().error, { message: `Invalid URL (POST ${url})`, type: 'invalid_request_error', param: null, code: 'unknown_url' }, url)
  }
  // Gemini's paths answer in Google's error shape.
  const gemini = await gw.inject({ method: 'POST', url: '/v1beta/models/x:nothing' })
  t.equal(gemini.statusCode, 404)
  t.same(gemini.json().error, { code: 404, message: 'Invalid URL (POST /v1beta/models/x:nothing)', status: 'NOT_FOUND' })
})

t.test('answers 503 with Retry-After in the console envelope when the control plane is down', async (t) => {
  const env = await createServiceEnv(t)
  const gw = await buildGateway(t, { ...env, CONTROL_PLANE_URL: 'http://127.0.0.1:1' })
  const res = await gw.inject('/api/status')
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
  t.equal(res.json().success, false)
})

t.test('health and readiness are the gateway\'s own', async (t) => {
  const env = await createServiceEnv(t)
  const gw = await buildGateway(t, { ...env, CONTROL_PLANE_URL: 'http://127.0.0.1:1' })
  t.same((await gw.inject('/healthz')).json(), { status: 'ok' })
  const ready = await gw.inject('/readyz')
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().ready, true)
})
