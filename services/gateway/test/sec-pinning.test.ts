import type { AddressInfo } from 'node:net'
import { loadControlPlaneConfig, loadGatewayConfig } from '@modelgate/config'
import controlPlane from '@modelgate/control-plane'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import gateway from '../src/app.js'
import { fakeOpenAI, seedChannel } from './fixtures.js'

async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

t.test('SEC-11 token group and channel pinning: the console refuses groups the user may not use, the relay re-checks the group on every request and refuses every way of choosing a channel to non-admins', async (t) => {
  // The whole edge as a client meets it: the gateway relays /v1 and proxies /api to the control plane.
  const env = { ...await createServiceEnv(t), STATE_REFRESH_MS: '60000', UPSTREAM_TIMEOUT_MS: '5000' }
  const cp = Fastify(fastifyOptions('control-plane', 'silent', { trustRequestId: true }))
  await cp.register(controlPlane, { config: loadControlPlaneConfig(env) })
  t.teardown(() => cp.close())
  const cpUrl = await listen(cp)
  const gw = Fastify(fastifyOptions('gateway', 'silent', { trustRequestId: false }))
  await gw.register(gateway, { config: loadGatewayConfig({ ...env, CONTROL_PLANE_URL: cpUrl }) })
  t.teardown(() => gw.close())
  const url = await listen(gw)

  const open = await fakeOpenAI(t)
  const premium = await fakeOpenAI(t)
  await seedChannel(cp.db, { baseUrl: open.url, models: ['gpt-4o-mini'], groups: ['default', 'vip'], name: 'open' })
  const vipOnly = await seedChannel(cp.db, { baseUrl: premium.url, models: ['gpt-4o-mini', 'gpt-4o'], groups: ['svip'], name: 'premium', priority: 10 })
  await gw.relayState.loadAll()

  const api = async (headers: Record<string, string>, method: string, path: string, body?: object) => {
    const res = await fetch(`${url}${path}`, { method, headers: { ...headers, 'accept-language': 'en', ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    return { status: res.status, body: await res.json() as { success: boolean, message: string, data: { id: number, full_key: string } } }
  }
  const signIn = async (username: string, password: string) => {
    const res = await fetch(`${url}/api/user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
    const body = await res.json() as { data: { id: number } }
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0]!
    return { id: body.data.id, headers: { cookie, 'new-api-user': String(body.data.id) } }
  }
  const root = await signIn('root', '123456')
  const setUsable = async (groups: Record<string, string>) => {
    t.equal((await api(root.headers, 'PUT', '/api/option/', { key: 'UserUsableGroups', value: JSON.stringify(groups) })).body.success, true)
  }
  await setUsable({ default: 'default' })
  const made = await api(root.headers, 'POST', '/api/user/', { username: 'alice', password: 'password123' })
  t.equal(made.body.success, true)
  const alice = await signIn('alice', 'password123')
  t.equal((await api(root.headers, 'PUT', '/api/user/', { id: alice.id, quota: 50_000_000 })).body.success, true)
  const tokenGroup = async (id: number) => (await cp.db.selectFrom('tokens').select('group').where('id', '=', id).executeTakeFirstOrThrow()).group
  const createToken = async (who: { headers: Record<string, string> }, body: object) => await api(who.headers, 'POST', '/api/token/', { name: 'tok', unlimited_quota: true, ...body })

  // Console: a group outside the user's usable groups is refused on create and on update.
  for (const group of ['svip', 'vip', 'admin', 'constructor', '__proto__', 'toString']) {
    const res = await createToken(alice, { group })
    t.equal(res.status, 403, `POST /api/token/ with group ${group} is refused`)
    t.same(res.body, { success: false, message: `You cannot use group ${group}` })
  }
  t.equal(await cp.db.selectFrom('tokens').select('id').where('user_id', '=', alice.id).executeTakeFirst(), undefined, 'no token was made')
  const plain = await createToken(alice, { group: 'default' })
  t.equal(plain.body.success, true, 'a usable group is accepted')
  const key: string = plain.body.data.full_key
  for (const group of ['svip', 'constructor']) {
    const res = await api(alice.headers, 'PUT', '/api/token/', { id: plain.body.data.id, name: 'tok', group })
    t.equal(res.status, 403, `PUT /api/token/ to group ${group} is refused`)
  }
  t.equal(await tokenGroup(plain.body.data.id), 'default', 'the token keeps its group')

  const chat = async (credential: Record<string, string>, opts: { path?: string, query?: string, body?: object, headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${url}${opts.path ?? '/v1/chat/completions'}${opts.query ?? ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...credential, ...opts.headers },
      body: JSON.stringify(opts.body ?? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    })
    return { status: res.status, body: await res.json() as { error?: { code?: string, message?: string } } }
  }
  const bearer = (k: string) => ({ authorization: `Bearer ${k}` })
  t.equal((await chat(bearer(key))).status, 200, 'the plain token works')
  t.equal(open.requests.length, 1)

  // Pinning: sk-KEY-CHANNELID on every key carrier is refused to a normal user, on every protocol.
  const pinned = `${key}-${vipOnly.id}`
  for (const [carrier, credential, query] of [
    ['Authorization', bearer(pinned), ''],
    ['x-api-key', { 'x-api-key': pinned }, ''],
    ['x-goog-api-key', { 'x-goog-api-key': pinned }, ''],
    ['?key=', {}, `?key=${encodeURIComponent(pinned)}`]
  ] as const) {
    const res = await chat(credential, { query })
    t.equal(res.status, 403, `a pin in ${carrier} is refused`)
    t.equal(res.body.error?.code, 'channel_pin_not_allowed')
    t.equal(res.body.error?.message, 'Only administrators may choose a channel')
  }
  const messages = await chat({ 'x-api-key': pinned, 'anthropic-version': '2023-06-01' }, { path: '/v1/messages', body: { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } })
  t.equal(messages.status, 403, 'the pin is refused on the Anthropic route too')
  const gemini = await chat({ 'x-goog-api-key': pinned }, { path: '/v1beta/models/gpt-4o-mini:generateContent', body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } })
  t.equal(gemini.status, 403, 'and on the Gemini route')
  const models = await fetch(`${url}/v1/models`, { headers: bearer(pinned) })
  t.equal(models.status, 403, 'and on the model list')

  // Any other way of naming a channel is not a way: headers, query and body fields are ignored ...
  const named = String(vipOnly.id)
  for (const header of ['x-channel-id', 'channel-id', 'channel', 'specific-channel-id', 'x-specific-channel-id', 'new-api-channel']) {
    const res = await chat(bearer(key), { headers: { [header]: named } })
    t.equal(res.status, 200, `header ${header} is ignored (answered by the user's own channel)`)
  }
  const viaQuery = await chat(bearer(key), { query: `?channel=${named}&channel_id=${named}&specific_channel_id=${named}&channelId=${named}` })
  t.equal(viaQuery.status, 200, 'query parameters naming a channel are ignored')
  const viaBody = await chat(bearer(key), { body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], channel: vipOnly.id, channel_id: vipOnly.id, specific_channel_id: vipOnly.id, group: 'svip' } })
  t.equal(viaBody.status, 200, 'body fields naming a channel or a group are ignored')
  // ... paths with a channel id are not relay routes ...
  for (const path of [`/v1/channels/${named}/chat/completions`, `/v1/chat/completions/${named}`, `/v1/${named}/chat/completions`]) {
    const res = await chat(bearer(key), { path })
    t.equal(res.status, 404, `${path} is no route`)
  }
  // ... and a model name carrying a channel or group is just an unknown model.
  for (const model of [`gpt-4o-mini-${named}`, `gpt-4o-mini@${named}`, `gpt-4o-mini:${named}`, `gpt-4o-mini#${named}`, `gpt-4o-mini/${named}`, `${named}/gpt-4o-mini`, 'gpt-4o-mini?channel=' + named, 'svip/gpt-4o-mini', 'gpt-4o-mini-svip', 'gpt-4o-mini:svip', 'gpt-4o']) {
    const res = await chat(bearer(key), { body: { model, messages: [{ role: 'user', content: 'hi' }] } })
    t.not(res.status, 200, `model ${JSON.stringify(model)} is refused (${res.status} ${String(res.body.error?.code)})`)
  }
  // The playground names its group in the body: the same usable-group check applies.
  const pg = await chat(alice.headers, { path: '/pg/chat/completions', body: { model: 'gpt-4o-mini', group: 'svip', messages: [{ role: 'user', content: 'hi' }] } })
  t.equal(pg.status, 403, 'the playground refuses a group the user may not use')
  t.equal(pg.body.error?.code, 'group_not_allowed')
  t.equal(premium.requests.length, 0, 'the premium channel was never reached by the normal user')

  // An administrator's pin works (the refusals above are about who asks, not a broken feature).
  const adminToken = (await createToken(root, { group: '' })).body.data.full_key
  t.equal((await chat(bearer(`${adminToken}-${vipOnly.id}`))).status, 200, 'root pins the premium channel')
  t.equal(premium.requests.length, 1)

  // At request time the token's group is checked against the usable groups of the moment. The
  // gateway learns of a change through the config push, a moment after the control plane: the
  // first answer with the expected status within a deadline, or the last one.
  const answerWithin = async (k: string, status: number) => {
    const deadline = Date.now() + 15_000
    let last = await chat(bearer(k))
    while (last.status !== status && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      last = await chat(bearer(k))
    }
    return last
  }
  await setUsable({ default: 'default', vip: 'vip' })
  const vip = await createToken(alice, { group: 'vip' })
  t.equal(vip.body.success, true, 'vip is usable now')
  const vipKey: string = vip.body.data.full_key
  t.equal((await answerWithin(vipKey, 200)).status, 200, 'the vip token works while vip is usable')
  await setUsable({ default: 'default' })
  const refusedWithin = async (k: string, what: string) => {
    const last = await answerWithin(k, 403)
    t.equal(last.status, 403, what)
    t.equal(last.body.error?.code, 'group_not_allowed')
    return last
  }
  const removed = await refusedWithin(vipKey, 'the vip token stops once the admin removes vip from the usable groups')
  t.equal(removed.body.error?.message, 'The group vip is not available to this user', 'with a clear message')
  t.equal((await fetch(`${url}/v1/models`, { headers: bearer(vipKey) })).status, 403, 'its model list is refused too')
  t.equal((await chat(bearer(key))).status, 200, 'the default token still works')

  // A token in the user's own group stops when the admin moves the user out of that group.
  t.equal((await api(root.headers, 'PUT', '/api/user/', { id: alice.id, group: 'svip' })).body.success, true)
  const own = await createToken(alice, { group: 'svip' })
  t.equal(own.body.success, true, 'the user\'s own group is usable')
  const ownKey: string = own.body.data.full_key
  t.equal((await answerWithin(ownKey, 200)).status, 200, 'it works while the user is in svip')
  t.equal(premium.requests.length, 2, 'served by the svip channel')
  t.equal((await api(root.headers, 'PUT', '/api/user/', { id: alice.id, group: 'default' })).body.success, true)
  await refusedWithin(ownKey, 'the svip token stops once the user is moved back to default')
  t.equal(premium.requests.length, 2, 'and never reached the svip channel again')
})
