import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { BALANCE_CHANNEL_TYPES } from '@modelgate/contracts'
import { balanceSupported, CHANNEL_TYPE_NAMES, CNY_PER_USD } from '@modelgate/providers'
import t, { type Test } from 'tap'
import { build, login, ROOT, userSession } from './helpers.js'

interface Seen { path: string, query: string, auth: string, organization?: string }

/** The accounts the fake providers know, by key. */
const OPENAI_KEY = 'sk-openai-account'
const DEEPSEEK_CNY_KEY = 'sk-deepseek-cny'
const DEEPSEEK_USD_KEY = 'sk-deepseek-usd'
const SILICON_KEY = 'sk-silicon-account'
const MOONSHOT_KEY = 'sk-moonshot-account'

const DAY_MS = 86_400_000
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * Real billing endpoints on 127.0.0.1, each speaking its provider's protocol and checking the
 * bearer key: OpenAI's dashboard billing API (subscription and usage), DeepSeek's /user/balance,
 * SiliconCloud's /v1/user/info and Moonshot's /v1/users/me/balance. A first path segment
 * `slow-<ms>` delays the answer; in-flight subscription queries are counted.
 */
async function billingUpstream (t: Test) {
  const seen: Seen[] = []
  const flight = { now: 0, max: 0 }
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const answer = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, auth: string) => {
    const key = auth.startsWith('Bearer ') ? auth.slice(7) : ''
    if (path === '/v1/dashboard/billing/subscription' || path === '/v1/dashboard/billing/usage') {
      if (key !== OPENAI_KEY) {
        // OpenAI echoes part of the key it refused; the gateway must not pass it on.
        json(res, 401, { error: { message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } })
        return
      }
      if (path.endsWith('/subscription')) {
        json(res, 200, { object: 'billing_subscription', has_payment_method: true, hard_limit_usd: 120, soft_limit_usd: 100, system_hard_limit_usd: 120, access_until: 0 })
        return
      }
      const start = query.get('start_date') ?? ''
      const end = query.get('end_date') ?? ''
      if (!/^\d{4}-\d\d-\d\d$/.test(start) || !/^\d{4}-\d\d-\d\d$/.test(end)) {
        json(res, 400, { error: { message: 'start_date and end_date are required (YYYY-MM-DD)', type: 'invalid_request_error' } })
        return
      }
      json(res, 200, { object: 'list', daily_costs: [], total_usage: 1234.5 })
      return
    }
    if (path === '/user/balance') {
      if (key !== DEEPSEEK_CNY_KEY && key !== DEEPSEEK_USD_KEY) {
        json(res, 401, { error: { message: 'Authentication Fails, Your api key is invalid', type: 'authentication_error', param: null, code: 'invalid_request_error' } })
        return
      }
      const infos = [{ currency: 'CNY', total_balance: '73.00', granted_balance: '3.00', topped_up_balance: '70.00' }]
      if (key === DEEPSEEK_USD_KEY) infos.push({ currency: 'USD', total_balance: '5.25', granted_balance: '0.00', topped_up_balance: '5.25' })
      json(res, 200, { is_available: true, balance_infos: infos })
      return
    }
    if (path === '/v1/user/info') {
      if (key !== SILICON_KEY) {
        json(res, 401, { code: 20015, message: 'Invalid token', data: null })
        return
      }
      json(res, 200, { code: 20000, message: 'OK', status: true, data: { id: 'u1', name: 'acct', email: '', isAdmin: false, balance: '4.60', status: 'normal', chargeBalance: '10.00', totalBalance: '14.60' } })
      return
    }
    if (path === '/v1/users/me/balance') {
      if (key !== MOONSHOT_KEY) {
        json(res, 401, { error: { message: 'Invalid Authentication', type: 'invalid_authentication_error' } })
        return
      }
      json(res, 200, { code: 0, data: { available_balance: 36.5, voucher_balance: 6.5, cash_balance: 30 }, scode: '0x0', status: true })
      return
    }
    json(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } })
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    let path = url.pathname
    let delay = 0
    const slow = /^\/slow-(\d+)(\/.*)$/.exec(path)
    if (slow !== null) {
      delay = Number(slow[1])
      path = slow[2]!
    }
    const auth = req.headers.authorization ?? ''
    const organization = req.headers['openai-organization']
    seen.push({ path, query: url.search, auth, ...(typeof organization === 'string' ? { organization } : {}) })
    const counted = path.endsWith('/subscription')
    if (counted) flight.max = Math.max(flight.max, ++flight.now)
    req.resume()
    setTimeout(() => {
      if (counted) flight.now--
      answer(req, res, path, url.searchParams, auth)
    }, delay)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, flight }
}

async function setup (t: Test) {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, lang = 'en') =>
    (await app.inject({ method, url, headers: { ...root.headers, 'accept-language': lang }, ...(payload === undefined ? {} : { payload }) })).json()
  const create = async (fields: Record<string, unknown>): Promise<{ id: number }> => {
    const res = await call('POST', '/api/channel/', { name: 'ch', type: 1, key: OPENAI_KEY, models: 'gpt-4o-mini', ...fields })
    if (res.success !== true) throw new Error(`create failed: ${res.message}`)
    return res.data[0]
  }
  const row = async (id: number) => await app.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  return { app, call, create, row }
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

t.test('an OpenAI channel\'s balance is its hard limit less the last 100 days of usage, stored with its time', async (t) => {
  const up = await billingUpstream(t)
  const { call, create, row } = await setup(t)
  const c = await create({ name: 'openai', base_url: up.base, openai_organization: 'org-billing' })
  const before = Date.now()
  const res = await call('GET', `/api/channel/update_balance/${c.id}`)
  const after = Date.now()
  t.same(res, { success: true, message: '', balance: 107.655 }, '120 USD less 1234.5 cents')
  const stored = await row(c.id)
  t.equal(stored.balance, 107.655)
  t.ok(stored.balance_updated_time >= Math.floor(before / 1000) && stored.balance_updated_time <= nowSeconds(), 'balance_updated_time is now')

  const usage = new URLSearchParams(up.seen.find((s) => s.path === '/v1/dashboard/billing/usage')?.query)
  const start = usage.get('start_date') ?? ''
  const end = usage.get('end_date') ?? ''
  t.ok([utcDate(before - 100 * DAY_MS), utcDate(after - 100 * DAY_MS)].includes(start), `usage from 100 days ago (${start})`)
  t.ok([utcDate(before + DAY_MS), utcDate(after + DAY_MS)].includes(end), `usage up to tomorrow (${end})`)
  t.same(up.seen.map((s) => [s.path, s.auth, s.organization]).sort(), [
    ['/v1/dashboard/billing/subscription', `Bearer ${OPENAI_KEY}`, 'org-billing'],
    ['/v1/dashboard/billing/usage', `Bearer ${OPENAI_KEY}`, 'org-billing']
  ].sort(), 'both billing calls carry the channel key and organization')

  const list = await call('GET', '/api/channel/')
  t.match(list.data.items.find((i: { id: number }) => i.id === c.id), { balance: 107.655, balance_updated_time: stored.balance_updated_time }, 'the list shows it')
})

t.test('a key the provider refuses answers success false without the key, and the stored balance stays', async (t) => {
  const up = await billingUpstream(t)
  const { call, create, row } = await setup(t)
  const c = await create({ name: 'openai', base_url: `${up.base}/v1` })
  t.match(await call('GET', `/api/channel/update_balance/${c.id}`), { success: true, balance: 107.655 }, 'a base URL ending in /v1 is not doubled')
  const good = await row(c.id)

  const wrongKey = 'sk-wrong-key-0123456789'
  t.match(await call('PUT', '/api/channel/', { id: c.id, key: wrongKey }), { success: true })
  const res = await call('GET', `/api/channel/update_balance/${c.id}`)
  t.equal(res.success, false)
  t.match(res.message, /^Failed to update the balance of channel openai: upstream answered HTTP 401: Incorrect API key provided/)
  t.notOk(res.message.includes(wrongKey), `the refused key is not echoed (${res.message})`)
  t.notOk(res.message.includes('platform.openai.com'), 'nor the provider\'s links')
  t.notOk('balance' in res, 'no balance on failure')
  t.ok(up.seen.some((s) => s.auth === `Bearer ${wrongKey}`), 'the new key was sent')
  const after = await row(c.id)
  t.equal(after.balance, good.balance, 'the balance is unchanged')
  t.equal(after.balance_updated_time, good.balance_updated_time, 'and so is its time')

  const zh = await call('GET', `/api/channel/update_balance/${c.id}`, undefined, 'zh')
  t.match(zh, { success: false, message: /^渠道 openai 余额更新失败：upstream answered HTTP 401/ }, 'the message follows the admin\'s language')
})

t.test('DeepSeek, SiliconCloud and Moonshot report yuan, converted to dollars; DeepSeek\'s dollar entry wins', async (t) => {
  const up = await billingUpstream(t)
  const { call, create, row } = await setup(t)
  const cases = [
    { type: 43, key: DEEPSEEK_CNY_KEY, usd: 73 / CNY_PER_USD, path: '/user/balance' },
    { type: 43, key: DEEPSEEK_USD_KEY, usd: 5.25, path: '/user/balance' },
    { type: 40, key: SILICON_KEY, usd: 14.6 / CNY_PER_USD, path: '/v1/user/info' },
    { type: 25, key: MOONSHOT_KEY, usd: 36.5 / CNY_PER_USD, path: '/v1/users/me/balance' }
  ]
  for (const { type, key, usd, path } of cases) {
    const c = await create({ name: `type${type}`, type, key, base_url: up.base })
    const res = await call('GET', `/api/channel/update_balance/${c.id}`)
    t.equal(res.success, true, `type ${type}: ${res.message}`)
    t.ok(Math.abs(res.balance - usd) < 1e-6, `type ${type} with ${key}: ${res.balance} USD`)
    t.ok(Math.abs((await row(c.id)).balance - usd) < 1e-6, 'stored')
    t.same(up.seen.at(-1), { path, query: '', auth: `Bearer ${key}` }, `type ${type} asks ${path} with its key`)

    const before = await row(c.id)
    await call('PUT', '/api/channel/', { id: c.id, key: 'sk-not-an-account' })
    const refused = await call('GET', `/api/channel/update_balance/${c.id}`)
    t.match(refused, { success: false, message: new RegExp(`^Failed to update the balance of channel type${type}: upstream answered HTTP 401`) }, `type ${type}: a wrong key fails (${refused.message})`)
    t.equal((await row(c.id)).balance, before.balance, 'the balance stays')
  }
})

t.test('a custom channel reads the billing API beside its base URL; a full endpoint URL, a missing channel or a type without billing is refused', async (t) => {
  const up = await billingUpstream(t)
  const { call, create, row } = await setup(t)
  const custom = await create({ name: 'reseller', type: 8, base_url: up.base })
  t.same(await call('GET', `/api/channel/update_balance/${custom.id}`), { success: true, message: '', balance: 107.655 })

  const endpoint = await create({ name: 'full', type: 8, base_url: `${up.base}/v1/chat/completions` })
  t.same(await call('GET', `/api/channel/update_balance/${endpoint.id}`), {
    success: false,
    message: 'Failed to update the balance of channel full: the channel URL is a full endpoint URL; a balance is read from a base URL'
  })

  const seen = up.seen.length
  const claude = await create({ name: 'claude', type: 14, models: 'claude-3-5-sonnet' })
  t.same(await call('GET', `/api/channel/update_balance/${claude.id}`), { success: false, message: 'Channel type 14 has no balance query' })
  t.same(await call('GET', `/api/channel/update_balance/${claude.id}`, undefined, 'zh'), { success: false, message: '渠道类型 14 不支持查询余额' })
  const azure = await create({ name: 'azure', type: 3, base_url: up.base })
  t.same(await call('GET', `/api/channel/update_balance/${azure.id}`), { success: false, message: 'Channel type 3 has no balance query' })
  t.equal(up.seen.length, seen, 'nothing was sent for them')
  t.match(await row(claude.id), { balance: 0, balance_updated_time: 0 })
  t.same(await call('GET', '/api/channel/update_balance/999999'), { success: false, message: 'Channel not found, refresh and retry' })
})

t.test('updating all balances reads every enabled channel with a billing endpoint, four at a time, past failures', async (t) => {
  const up = await billingUpstream(t)
  const { app, call, create, row } = await setup(t)
  const slow = `${up.base}/slow-200`
  const good = await Promise.all([1, 2, 3, 4, 5, 6].map(async (i) => await create({ name: `good${i}`, base_url: slow })))
  const wrong = await create({ name: 'wrong', base_url: slow, key: 'sk-not-an-account' })
  const deepseek = await create({ name: 'deepseek', type: 43, key: DEEPSEEK_USD_KEY, base_url: up.base })
  const disabled = await create({ name: 'off', base_url: up.base, key: 'sk-disabled-channel' })
  await call('PUT', '/api/channel/', { id: disabled.id, status: 2 })
  const claude = await create({ name: 'claude', type: 14, models: 'claude-3-5-sonnet' })
  const before = nowSeconds()

  const res = await call('GET', '/api/channel/update_balance')
  t.same(res, { success: true, message: '', data: { updated: 7, failed: 1 } }, 'answers once every channel is done')
  for (const c of good) t.match(await row(c.id), { balance: 107.655, balance_updated_time: Number }, `good channel ${c.id} updated`)
  t.ok((await row(good[0]!.id)).balance_updated_time >= before)
  t.equal((await row(deepseek.id)).balance, 5.25)
  t.match(await row(wrong.id), { balance: 0, balance_updated_time: 0 }, 'the failing channel keeps its balance')
  t.match(await row(disabled.id), { balance: 0, balance_updated_time: 0 }, 'a disabled channel is skipped')
  t.notOk(up.seen.some((s) => s.auth === 'Bearer sk-disabled-channel'), 'and never asked')
  t.match(await row(claude.id), { balance: 0, balance_updated_time: 0 })
  t.ok(up.flight.max > 1 && up.flight.max <= 4, `channels are read in parallel, at most four at a time (${up.flight.max})`)

  const user = await userSession(app, 'alice')
  for (const url of ['/api/channel/update_balance', `/api/channel/update_balance/${good[0]!.id}`]) {
    const refused = await app.inject({ method: 'GET', url, headers: user.headers })
    t.equal(refused.statusCode, 403, `${url} is for admins`)
  }
})

t.test('the console offers the balance update for exactly the types that have one', async (t) => {
  const supported = Object.keys(CHANNEL_TYPE_NAMES).map(Number).filter((type) => balanceSupported(type))
  t.same(supported, [...BALANCE_CHANNEL_TYPES].sort((a, b) => a - b))
})
