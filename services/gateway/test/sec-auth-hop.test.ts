import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadControlPlaneConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { fastifyOptions } from '@modelgate/service'
import Fastify from 'fastify'
import t from 'tap'
import { buildGateway } from './fixtures.js'

/** POST /api/user/login through the gateway from `localAddress`, with a client-written X-Forwarded-For. */
async function loginFrom (url: string, localAddress: string, username: string, xff: string): Promise<number> {
  const body = JSON.stringify({ username, password: 'wrong-pass' })
  return await new Promise((resolve, reject) => {
    const req = request(`${url}/api/user/login`, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'x-forwarded-for': xff, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('SEC-02 through the gateway: a client-written X-Forwarded-For cannot move the login limit, and the real client address still arrives', async (t) => {
  const { env, url } = await buildGateway(t)
  // The control plane as server.ts builds it: default TRUST_PROXY, which trusts the gateway's hop.
  const config = loadControlPlaneConfig(env)
  const cp = Fastify({ ...fastifyOptions('control-plane', 'silent', { trustRequestId: true }), trustProxy: config.TRUST_PROXY })
  await cp.register(controlPlane, { config })
  await cp.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => cp.close())
  const { url: gw } = await buildGateway(t, { ...env, CONTROL_PLANE_URL: `http://127.0.0.1:${(cp.server.address() as AddressInfo).port}` })
  t.ok(url)

  const codes: number[] = []
  for (let i = 0; i < 22; i++) codes.push(await loginFrom(gw, '127.0.0.2', `name${i}`, `203.0.113.${i + 1}`))
  t.same(codes, [...Array(20).fill(200), 429, 429], 'the client is locked after 20 failures whatever X-Forwarded-For it sends')
  t.equal(await loginFrom(gw, '127.0.0.3', 'other', '127.0.0.2'), 200, 'another client (the real address arrived, not the gateway\'s) is not locked')
})
