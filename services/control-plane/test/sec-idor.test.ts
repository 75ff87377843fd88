import { ROLES } from '@modelgate/contracts'
import { randomUUID } from 'node:crypto'
import { settleUsageBatch } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

async function call (app: FastifyInstance, headers: Record<string, string>, method: Method, url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: { ...headers, ...EN }, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: res.json(), text: res.body }
}

/** The caller as a script: the personal access token in Authorization plus New-Api-User, no cookie. */
async function accessTokenHeaders (app: FastifyInstance, s: Session): Promise<{ authorization: string, 'new-api-user': string }> {
  const res = await call(app, s.headers, 'GET', '/api/user/token')
  if (res.body.success !== true) throw new Error(`no access token for ${s.user.username}`)
  return { authorization: String(res.body.data), 'new-api-user': String(s.user.id) }
}

/** Every string and number found anywhere in a JSON value. */
function leaves (value: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string' && value !== '') out.add(value)
  else if (typeof value === 'number') out.add(String(value))
  else if (Array.isArray(value)) for (const v of value) leaves(v, out)
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) leaves(v, out)
  return out
}

t.test('SEC-09 no credentials in admin listings: list, search and get by id carry no secret, and no value in them signs anyone in', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const alice = await userSession(app, 'alice')
  await app.db.updateTable('users').set({ email: 'alice@example.com', github_id: 'gh-4242', telegram_id: 'tg-77', linuxdo_id: 'ld-9', wechat_id: 'wx-1' })
    .where('id', '=', alice.user.id).execute()
  // Every account holds a live access token, and alice an invite code, so there is something to leak.
  const tokens = {
    root: await accessTokenHeaders(app, root),
    admin: await accessTokenHeaders(app, admin),
    alice: await accessTokenHeaders(app, alice)
  }
  t.equal((await call(app, alice.headers, 'GET', '/api/user/aff')).body.success, true)
  for (const [who, headers] of Object.entries(tokens)) {
    t.equal((await call(app, headers, 'GET', '/api/user/self')).status, 200, `${who}'s access token works (the replays below are meaningful)`)
  }

  const answers = [
    ['admin lists users', await call(app, admin.headers, 'GET', '/api/user/?p=1&page_size=100')],
    ['admin searches users', await call(app, admin.headers, 'GET', '/api/user/search?keyword=a&page_size=100')],
    ['admin searches by id', await call(app, admin.headers, 'GET', `/api/user/search?keyword=${alice.user.id}`)],
    ['admin gets a user', await call(app, admin.headers, 'GET', `/api/user/${alice.user.id}`)],
    ['admin gets itself', await call(app, admin.headers, 'GET', `/api/user/${admin.user.id}`)],
    ['root lists users', await call(app, root.headers, 'GET', '/api/user/?p=1&page_size=100')],
    ['root searches users', await call(app, root.headers, 'GET', '/api/user/search?keyword=root')],
    ['root gets root by id', await call(app, root.headers, 'GET', `/api/user/${root.user.id}`)],
    ['root gets an admin', await call(app, root.headers, 'GET', `/api/user/${admin.user.id}`)]
  ] as const
  const rootByAdmin = await call(app, admin.headers, 'GET', `/api/user/${root.user.id}`)
  t.equal(rootByAdmin.status, 403, 'an admin cannot read root by id')
  t.notOk(rootByAdmin.text.includes('"username"'), 'the refusal carries no user record')

  const rows = await app.db.selectFrom('users').select(['id', 'password_hash', 'access_token_hash']).execute()
  const secrets = [
    ...Object.values(tokens).map((h) => h.authorization),
    ...rows.flatMap((r) => [r.password_hash, r.access_token_hash]).filter((v): v is string => typeof v === 'string' && v !== ''),
    ...[root, admin, alice].map((s) => s.headers.cookie!.slice('session='.length))
  ]
  t.ok(secrets.length >= 9, 'three access tokens, password hashes, access-token hashes and session tokens to look for')
  const values = new Set<string>()
  for (const [what, res] of answers) {
    t.equal(res.body.success, true, `${what}: answered`)
    const records = Array.isArray(res.body.data?.items) ? res.body.data.items : [res.body.data]
    t.ok(records.length > 0, `${what}: at least one user`)
    for (const record of records) {
      const credentialFields = Object.keys(record).filter((k) => /pass|token|hash|secret|session|cookie|salt|otp|totp/i.test(k) && k !== 'password_is_default')
      t.same(credentialFields, [], `${what}: no credential field in user ${record.id}`)
    }
    for (const secret of secrets) t.notOk(res.text.includes(secret), `${what}: no access token, hash or session in the answer`)
    leaves(res.body.data, values)
  }
  t.ok(values.has('gh-4242') && values.has('alice@example.com'), 'the bindings the user screen shows are there (the replay covers them)')

  // Every value of every answer, replayed as a credential for each account, on both credential edges.
  const ids = [root.user.id, admin.user.id, alice.user.id]
  let replays = 0
  const unexpected: string[] = []
  for (const v of values) {
    for (const authorization of [v, `Bearer ${v}`]) {
      for (const id of ids) {
        const res = await app.inject({ url: '/api/user/self', headers: { authorization, 'new-api-user': String(id) } })
        replays++
        if (res.statusCode !== 401) unexpected.push(`/api/user/self as ${id} with ${JSON.stringify(authorization)}: ${res.statusCode}`)
      }
      const usage = await app.inject({ url: '/api/usage/token', headers: { authorization } })
      replays++
      if (usage.statusCode !== 401) unexpected.push(`/api/usage/token with ${JSON.stringify(authorization)}: ${usage.statusCode}`)
    }
  }
  t.ok(replays > 100, `${replays} replays made`)
  t.same(unexpected, [], 'no value from the admin listings signs anyone in')
})

t.test('SEC-12 tokens of other users: through an access token, every token route answers "not found" as for a missing id, and searches by key prefix stay own', async (t) => {
  const app = await build(t)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const a = await accessTokenHeaders(app, alice)
  const mine = (await call(app, a, 'POST', '/api/token/', { name: 'mine' })).body.data
  const created = await call(app, bob.headers, 'POST', '/api/token/', { name: 'bobs', remain_quota: 700, model_limits_enabled: true, model_limits: 'gpt-4o' })
  t.equal(created.body.success, true)
  const theirs = created.body.data as { id: number, key: string, full_key: string }
  const before = await app.db.selectFrom('tokens').selectAll().where('id', '=', theirs.id).executeTakeFirstOrThrow()
  const missing = theirs.id + 1000

  const attempts: Array<[string, Method, (id: number) => string, (id: number) => object | undefined]> = [
    ['GET /api/token/{id}', 'GET', (id) => `/api/token/${id}`, () => undefined],
    ['POST /api/token/{id}/key (reveal)', 'POST', (id) => `/api/token/${id}/key`, () => undefined],
    ['PUT /api/token/', 'PUT', () => '/api/token/', (id) => ({ id, name: 'stolen', remain_quota: 1, unlimited_quota: true, model_limits_enabled: false })],
    ['PUT /api/token/?status_only=true', 'PUT', () => '/api/token/?status_only=true', (id) => ({ id, status: 2 })],
    ['DELETE /api/token/{id}/', 'DELETE', (id) => `/api/token/${id}/`, () => undefined],
    ['DELETE /api/token/{id}', 'DELETE', (id) => `/api/token/${id}`, () => undefined]
  ]
  for (const [what, method, url, payload] of attempts) {
    const other = await call(app, a, method, url(theirs.id), payload(theirs.id))
    const none = await call(app, a, method, url(missing), payload(missing))
    t.same(other.body, { success: false, message: 'Token not found' }, `${what}: bob's token is not found`)
    t.same([other.status, other.text], [none.status, none.text], `${what}: byte for byte the answer for a missing id`)
    t.notOk(other.text.includes(theirs.full_key.slice(3)), `${what}: no key in the answer`)
  }
  const after = await app.db.selectFrom('tokens').selectAll().where('id', '=', theirs.id).executeTakeFirstOrThrow()
  t.same(after, before, 'bob\'s token row is exactly as it was')

  const search = async (headers: Record<string, string>, query: string) =>
    (await call(app, headers, 'GET', `/api/token/search?${query}&size=100`)).body.data.items.map((x: { id: number }) => x.id)
  const prefix = theirs.full_key.slice(0, 7)
  const suffix = theirs.full_key.slice(-4)
  t.same(await search(bob.headers, `token=${prefix}`), [theirs.id], 'the owner finds it by its visible prefix (the probe below is meaningful)')
  for (const query of [
    `token=${prefix}`, `token=${prefix.slice(3)}`, `token=${suffix}`, `token=${encodeURIComponent(theirs.key)}`, `token=${theirs.full_key}`,
    'token=sk-', 'token=%25', 'token=_', 'keyword=bobs', 'keyword=', 'keyword=%25'
  ]) {
    const found: number[] = await search(a, query)
    t.ok(found.every((id) => id === mine.id), `search ${query} returns alice's tokens only`)
  }
  t.same(await search(a, 'keyword='), [mine.id], 'an empty search lists exactly alice\'s token')
})

t.test('SEC-13 logs, tasks, usage and top-ups of other users: self routes ignore another user\'s names, channels and ids; self logs carry no channel, admin_info, upstream error or client header', async (t) => {
  const app = await build(t)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const a = await accessTokenHeaders(app, alice)
  const now = Math.floor(Date.now() / 1000)
  const other = (channel: number) => JSON.stringify({ model_ratio: 2, frt: 120, admin_info: { use_channel: [channel] } })
  await app.db.deleteFrom('logs').execute()
  const [aliceLog, , bobError] = await app.db.insertInto('logs').values([
    { created_at: now - 20, type: 2, user_id: alice.user.id, username: 'alice', token_name: 'a-key', model_name: 'gpt-4o', channel_id: 4, quota: 100, prompt_tokens: 10, completion_tokens: 5, ip: '10.0.0.1', other: other(4) },
    { created_at: now - 10, type: 2, user_id: bob.user.id, username: 'bob', token_name: 'b-key', model_name: 'gpt-4o', channel_id: 5, quota: 900, prompt_tokens: 90, completion_tokens: 50, ip: '10.0.0.2', other: other(5) },
    { created_at: now - 5, type: 5, user_id: bob.user.id, username: 'bob', token_name: 'b-key', model_name: 'gpt-4o', channel_id: 5, quota: 0, content: 'bob secret upstream failure', other: other(5) }
  ]).returning('id').execute()
  t.ok(aliceLog !== undefined && bobError !== undefined)

  for (const url of [
    '/api/log/self/?username=bob', '/api/log/self?username=bob&channel=5', '/api/log/self/?channel=5&type=0', '/api/log/self/?token_name=b-key',
    '/api/log/self/?type=5', `/api/log/self/?username=bob&start_timestamp=${now - 3600}`
  ]) {
    const res = await call(app, a, 'GET', url)
    t.equal(res.status, 200, url)
    const ids = (res.body.data.items as Array<{ id: number }>).map((i) => i.id)
    t.ok(ids.every((id) => id === aliceLog!.id), `${url}: alice's rows only`)
    t.notOk(res.text.includes('bob'), `${url}: nothing of bob's`)
  }
  const own = await call(app, a, 'GET', '/api/log/self/?username=bob&channel=5')
  t.same(own.body.data.items.map((i: { id: number }) => i.id), [aliceLog!.id], 'the bob filters are ignored, not applied')
  const item = own.body.data.items[0] as Record<string, unknown> & { other: Record<string, unknown> }
  t.notOk('channel_id' in item || 'channel_name' in item || 'channel' in item, 'no channel in a self log')
  t.notOk('admin_info' in item.other, 'no admin_info in a self log')
  t.notOk(own.text.includes('use_channel'), 'no channel ids anywhere in the answer')

  const stat = async (query: string) => (await call(app, a, 'GET', `/api/log/self/stat?${query}`)).body.data
  const aliceStat = { quota: 100, rpm: 1, tpm: 15 }
  t.same(await stat(''), aliceStat, 'alice\'s own stat')
  for (const query of ['username=bob', 'channel=5', 'username=bob&channel=5']) {
    t.same(await stat(query), aliceStat, `stat ${query}: the bob filters are ignored, alice's figures only`)
  }
  t.same(await stat('token_name=b-key'), { quota: 0, rpm: 0, tpm: 0 }, 'bob\'s token name counts nothing of bob\'s')

  await app.db.insertInto('midjourneys').values([
    { user_id: bob.user.id, mj_id: 'mj-bob', action: 'IMAGINE', status: 'SUCCESS', code: 1, channel_id: 5, submit_time: now - 30, prompt: 'bob prompt', buttons: null, properties: null }
  ]).execute()
  await app.db.insertInto('tasks').values([
    { user_id: bob.user.id, task_id: 'suno-bob', platform: 'suno', action: 'MUSIC', status: 'SUCCESS', channel_id: 5, submit_time: now - 30, properties: null, data: { audio_url: 'https://bob.example/a.mp3' } },
    { user_id: alice.user.id, task_id: 'suno-alice', platform: 'suno', action: 'MUSIC', status: 'QUEUED', channel_id: 4, submit_time: now - 20, properties: null, data: null }
  ]).execute()
  for (const url of ['/api/mj/self?mj_id=mj-bob', '/api/mj/self/?mj_id=mj-bob&channel_id=5', '/api/mj/self/']) {
    const res = await call(app, a, 'GET', url)
    t.equal(res.status, 200, url)
    t.equal(res.body.data.total, 0, `${url}: bob's drawing is not found`)
    t.notOk(res.text.includes('bob'), `${url}: nothing of bob's`)
  }
  for (const url of ['/api/task/self?task_id=suno-bob', '/api/task/self/?task_id=suno-bob&channel_id=5']) {
    const res = await call(app, a, 'GET', url)
    t.equal(res.status, 200, url)
    t.equal(res.body.data.total, 0, `${url}: bob's task is not found`)
    t.notOk(res.text.includes('bob'), `${url}: nothing of bob's`)
  }
  const tasks = await call(app, a, 'GET', '/api/task/self/')
  t.same(tasks.body.data.items.map((i: { task_id: string }) => i.task_id), ['suno-alice'], 'alice\'s own task list')
  t.notOk('channel_id' in tasks.body.data.items[0], 'without the channel')

  const hour = now - (now % 3600) - 3600
  await app.db.insertInto('quota_data').values([
    { user_id: bob.user.id, username: 'bob', model_name: 'gpt-4o', created_at: hour, count: 9, quota: 900, token_used: 140 },
    { user_id: alice.user.id, username: 'alice', model_name: 'gpt-4o', created_at: hour, count: 1, quota: 100, token_used: 15 }
  ]).execute()
  const usage = await call(app, a, 'GET', `/api/data/self/?username=bob&start_timestamp=${hour - 3600}&end_timestamp=${now}`)
  t.equal(usage.status, 200)
  t.same(usage.body.data.map((b: { quota: number }) => b.quota), [100], 'the dashboard ignores username: alice\'s bucket only')

  // Alice's own failed request, logged as the billing worker logs the gateway's usage event: its
  // channel refused with a distinctive upstream error. The event carries what alice was told and,
  // for admins, the classification (the gateway cleans it and never puts a raw body in it: the
  // relay's side is proved by the gateway's upstream-errors test, with real upstreams).
  const failedId = randomUUID()
  const told = `The upstream provider failed to answer (request id: ${failedId})`
  const upstream = { status: 401, code: 'invalid_api_key', message: 'UPSTREAM-ERROR-7f3a: Incorrect API key provided: sk-***' }
  await settleUsageBatch(app.db, [{
    request_id: failedId, created_at: now - 15, user_id: alice.user.id, username: 'alice', token_id: 0, token_name: 'a-key', unlimited_token: false,
    channel_id: 4, model_name: 'gpt-4o', upstream_model: 'gpt-4o', group: 'default', is_stream: false, ip: '10.0.0.1', use_time_ms: 300, first_response_ms: 0,
    prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, quota: 0, outcome: 'failed', usage_source: 'none', price: { model_ratio: 2 }, retried_channels: [3],
    error: { status: 401, message: told, upstream }
  }], { writeLog: true })
  const selfFailed = await call(app, a, 'GET', '/api/log/self/?type=5')
  const failed = (selfFailed.body.data.items as Array<Record<string, unknown> & { other: Record<string, unknown> }>).find((i) => i.request_id === failedId)
  t.equal(failed?.content, told, 'the self log says what alice was told, with the request id')
  for (const never of ['UPSTREAM-ERROR-7f3a', 'Incorrect API key', 'invalid_api_key', 'admin_info', 'use_channel']) {
    t.notOk(selfFailed.text.includes(never), `the self log never carries "${never}"`)
  }
  t.notOk(Object.keys(failed ?? {}).some((k) => /channel|header|agent|admin/i.test(k)), 'nor a channel, a client header or an admin field')
  const root = await login(app, ROOT.username, ROOT.password)
  const adminLogs = await call(app, root.headers, 'GET', '/api/log/?type=5')
  const adminRow = (adminLogs.body.data.items as Array<{ request_id: string, other: Record<string, unknown> }>).find((i) => i.request_id === failedId)
  t.same(adminRow?.other['admin_info'], { use_channel: [3, 4], error: upstream }, 'the admin log view shows the channels and the classified upstream error')

  // Top-up orders: nothing reads one by its trade_no but the provider's signed notification, and
  // a user's own list is the user's whatever it is asked for.
  await app.db.insertInto('top_ups').values({ user_id: bob.user.id, amount: 10, money: '72.00', quota: 5_000_000, trade_no: 'USR-bob-trade-42', payment_method: 'alipay' }).execute()
  for (const url of ['/api/user/topup/status?trade_no=USR-bob-trade-42', '/api/user/topup?trade_no=USR-bob-trade-42', '/api/user/topup/USR-bob-trade-42']) {
    const res = await call(app, a, 'GET', url)
    t.ok(res.status === 404 || res.status === 403, `${url}: not found, or an admin route refused (${res.status})`)
    t.equal(res.body.success, false)
    t.notOk(res.text.includes('USR-bob') || res.text.includes('72.00') || res.text.includes('bob'), `${url}: nothing of bob's order`)
  }
  for (const url of ['/api/user/topup/self?keyword=USR-bob-trade-42', `/api/user/topup/self?user_id=${bob.user.id}`, '/api/user/topup/self?keyword=bob']) {
    const res = await call(app, a, 'GET', url)
    t.equal(res.status, 200, `${url}: the caller's own list`)
    t.same(res.body.data.items, [], `${url}: none of bob's orders`)
    t.notOk(res.text.includes('USR-bob') || res.text.includes('72.00'), `${url}: nothing of bob's order`)
  }
  const forged = await app.inject({ method: 'GET', url: '/api/user/epay/notify?trade_no=USR-bob-trade-42&out_trade_no=USR-bob-trade-42&trade_status=TRADE_SUCCESS&money=72.00', headers: a })
  t.equal(forged.body, 'fail', 'an unsigned notification naming bob\'s order fails')
  t.match(await app.db.selectFrom('top_ups').selectAll().where('trade_no', '=', 'USR-bob-trade-42').executeTakeFirstOrThrow(), { status: 'pending', complete_time: 0 }, 'and leaves it as it was')
  // The relay's task fetches (/mj/task/{id}/fetch, Suno's fetch, a video's content) with bob's ids
  // answer as for a missing id: the gateway's mj, suno and video tests.
})

t.test('SEC-13 subscriptions of other users: a user\'s own routes never read or change another user\'s subscription, and admin routes taking ids refuse a normal user', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const a = await accessTokenHeaders(app, alice)
  const plan = await call(app, root.headers, 'POST', '/api/subscription/admin/plans', {
    plan: { title: 'Pro', price_amount: 1, currency: 'USD', duration_unit: 'month', duration_value: 1 },
    items: [{ model_name: 'gpt-4o', quota_type: 0, amount_total: 1000 }]
  })
  t.equal(plan.body.success, true)
  const bind = async (userId: number) => (await call(app, root.headers, 'POST', '/api/subscription/admin/bind', { user_id: userId, plan_id: plan.body.data.plan.id })).body.data.subscription.id as number
  const mine = await bind(alice.user.id)
  const theirs = await bind(bob.user.id)
  const before = await app.db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', bob.user.id).execute()
  const missing = theirs + 1000

  for (const headers of [alice.headers, a]) {
    const other = await call(app, headers, 'PUT', `/api/subscription/self/${theirs}/auto_renew`, { auto_renew: true })
    const none = await call(app, headers, 'PUT', `/api/subscription/self/${missing}/auto_renew`, { auto_renew: true })
    t.same(other.body, { success: false, message: 'Subscription not found' }, 'bob\'s subscription is not found')
    t.same([other.status, other.text], [none.status, none.text], 'byte for byte the answer for a missing id')
    const self = await call(app, headers, 'GET', `/api/subscription/self?user_id=${bob.user.id}&id=${theirs}`)
    t.same(self.body.data.subscriptions.map((e: { subscription: { id: number } }) => e.subscription.id), [mine], 'the own listing is the caller\'s whatever it is asked for')
    for (const [method, url] of [
      ['GET', `/api/subscription/admin/users/${bob.user.id}/subscriptions`],
      ['POST', `/api/subscription/admin/user_subscriptions/${theirs}/invalidate`]
    ] as const) {
      const res = await call(app, headers, method, url)
      t.equal(res.status, 403, `${method} ${url}: an admin route`)
      t.notOk(res.text.includes('Pro'), 'with nothing of bob\'s subscription')
    }
  }
  t.same(await app.db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', bob.user.id).execute(), before, 'bob\'s subscription is exactly as it was')
})
