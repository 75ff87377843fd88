import { createHash } from 'node:crypto'
import { ROLES, type TopUpView } from '@modelgate/contracts'
import { insertTopUp, LOG_TYPE } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
const KEY = 'merchant-secret-key'
const EPAY = { ServerAddress: 'https://gw.example.com', PayAddress: 'https://pay.example.com', EpayId: '1001', EpayKey: KEY, Price: '7.3' } as const

type Params = Record<string, string>

/** The provider's MD5 signature, written out here independently of the service's code. */
function providerSign (params: Params): string {
  const names = Object.keys(params).filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '').sort()
  return createHash('md5').update(names.map((k) => `${k}=${params[k]}`).join('&') + KEY).digest('hex')
}

/** What the provider sends once the payment of `fields` (the form `/api/user/pay` answered) went through. */
function notification (fields: Params): Params {
  const params: Params = { pid: fields['pid']!, trade_no: '2024abcdef', out_trade_no: fields['out_trade_no']!, type: fields['type']!, name: fields['name']!, money: fields['money']!, trade_status: 'TRADE_SUCCESS' }
  return { ...params, sign: providerSign(params), sign_type: 'MD5' }
}

async function setup (t: Test) {
  const app = await build(t)
  await app.saveOptions(EPAY)
  const root = await login(app, ROOT.username, ROOT.password)
  const call = async (method: 'GET' | 'POST', url: string, who: Session, payload?: object, lang = EN) => {
    const res = await app.inject({ method, url, headers: { ...who.headers, ...lang }, ...(payload === undefined ? {} : { payload }) })
    return { status: res.statusCode, body: res.json() }
  }
  return { app, root, call }
}

const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const rechargeLogs = async (app: FastifyInstance, userId: number) =>
  await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.topup).where('user_id', '=', userId).execute()

t.test('admins list every user\'s orders newest first, filtered by keyword, status, user and time', async (t) => {
  const { app, root, call } = await setup(t)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const order = async (userId: number, tradeNo: string, createTime: number, status: 'pending' | 'success' | 'failed' = 'pending') =>
    await insertTopUp(app.db, { user_id: userId, amount: 2, money: '14.60', quota: 1_000_000, trade_no: tradeNo, payment_method: 'alipay', status, create_time: createTime })
  await order(alice.user.id, 'USR-A-1', 1_700_000_000)
  await order(alice.user.id, 'USR-A-2', 1_700_000_100, 'success')
  await order(bob.user.id, 'USR-B-1', 1_700_000_200, 'failed')
  await order(bob.user.id, 'USR-B-2', 1_700_000_300)
  const list = async (query: string, who: Session = root) => {
    const res = await call('GET', `/api/user/topup?${query}`, who)
    t.equal(res.status, 200, query)
    return res.body.data as { items: TopUpView[], total: number, page: number, page_size: number }
  }
  const trades = (page: { items: TopUpView[] }) => page.items.map((o) => o.trade_no)

  const all = await list('p=1&page_size=10')
  t.same(trades(all), ['USR-B-2', 'USR-B-1', 'USR-A-2', 'USR-A-1'], 'every user\'s orders, newest first')
  t.same({ total: all.total, page: all.page, page_size: all.page_size }, { total: 4, page: 1, page_size: 10 }, 'the paging envelope of the console\'s lists')
  t.match(all.items[0], { user_id: bob.user.id, username: 'bob', amount: 2, money: '14.60', quota: 1_000_000, payment_method: 'alipay', status: 'pending', create_time: 1_700_000_300, complete_time: 0 })

  const second = await list('p=2&page_size=3')
  t.same(trades(second), ['USR-A-1'], 'the second page')
  t.equal(second.total, 4)
  t.same(trades(await list('keyword=a-2')), ['USR-A-2'], 'keyword: part of a trade number, any case')
  t.same(trades(await list('keyword=BOB')), ['USR-B-2', 'USR-B-1'], 'keyword: a username')
  t.same(trades(await list('keyword=%25')), [], 'keyword: % is a character, not a wildcard')
  t.same(trades(await list('status=pending')), ['USR-B-2', 'USR-A-1'], 'status')
  t.same(trades(await list('status=failed')), ['USR-B-1'])
  t.same(trades(await list(`user_id=${alice.user.id}`)), ['USR-A-2', 'USR-A-1'], 'user id')
  t.same(trades(await list('start_timestamp=1700000100&end_timestamp=1700000300')), ['USR-B-1', 'USR-A-2'], 'time range: start inclusive, end exclusive')
  t.same(trades(await list(`keyword=&start_timestamp=&end_timestamp=&user_id=${bob.user.id}&status=pending`)), ['USR-B-2'], 'filters combine, blank ones do not filter')
  t.equal((await call('GET', '/api/user/topup?status=paid', root)).status, 400, 'an unknown status is malformed')

  const own = await call('GET', '/api/user/topup/self?p=1&page_size=10', alice)
  t.same(trades(own.body.data), ['USR-A-2', 'USR-A-1'], 'a user sees their own orders')
  t.same(trades((await call('GET', `/api/user/topup/self?user_id=${bob.user.id}`, alice)).body.data), ['USR-A-2', 'USR-A-1'], 'and only theirs, whatever they ask')
  t.same(trades((await call('GET', '/api/user/topup/self?status=success', alice)).body.data), ['USR-A-2'])
})

t.test('users are refused the admin list and completion', async (t) => {
  const { app, call } = await setup(t)
  const alice = await userSession(app, 'alice')
  await insertTopUp(app.db, { user_id: alice.user.id, amount: 2, money: '14.60', quota: 1_000_000, trade_no: 'USR-A-1', payment_method: 'alipay' })
  t.equal((await call('GET', '/api/user/topup', alice)).status, 403, 'the admin list')
  t.equal((await call('POST', '/api/user/topup/complete', alice, { trade_no: 'USR-A-1' })).status, 403, 'completing even their own order')
  t.equal((await app.inject({ method: 'GET', url: '/api/user/topup' })).statusCode, 401, 'signed out')
  t.equal((await app.inject({ method: 'GET', url: '/api/user/topup/self' })).statusCode, 401)
  t.equal(await quotaOf(app, alice.user.id), 0, 'nothing credited')
  const admin = await userSession(app, 'helper', ROLES.admin)
  t.equal((await call('GET', '/api/user/topup', admin)).body.data.total, 1, 'an admin may list')
})

t.test('completing a pending order credits it once, audited; a second completion and a late notification credit nothing', async (t) => {
  const { app, root, call } = await setup(t)
  const admin = await userSession(app, 'helper', ROLES.admin)
  const payer = await userSession(app, 'payer')
  await app.db.updateTable('users').set({ quota: 1000 }).where('id', '=', payer.user.id).execute()
  await app.quota.setBalance('user', payer.user.id, 400)
  const pay = await call('POST', '/api/user/pay', payer, { amount: 3, payment_method: 'zfb' })
  const fields = pay.body.data as Params
  const tradeNo = fields['out_trade_no']!

  const done = await call('POST', '/api/user/topup/complete', admin, { trade_no: tradeNo })
  t.equal(done.body.success, true)
  t.equal(done.body.message, 'Order completed: $3.00 credited to payer')
  t.match(done.body.data, { trade_no: tradeNo, status: 'success', user_id: payer.user.id, username: 'payer', quota: 1_500_000 })
  t.ok(done.body.data.complete_time > 0)
  t.equal(await quotaOf(app, payer.user.id), 1000 + 1_500_000, 'Postgres credited the order\'s quota')
  t.equal(await app.quota.balance('user', payer.user.id), 400 + 1_500_000, 'the gateways\' cached balance moved by the same amount')
  const logs = await rechargeLogs(app, payer.user.id)
  t.equal(logs.length, 1, 'one recharge log row')
  t.match(logs[0], { username: 'payer', quota: 1_500_000 })
  t.match(logs[0]!.content, new RegExp(`order ${tradeNo}, completed by admin helper`))

  const audit = await app.db.selectFrom('audit_logs').selectAll().where('action', '=', 'topup.complete').execute()
  t.equal(audit.length, 1, 'one audit entry')
  t.match(audit[0], { actor_id: admin.user.id, actor_name: 'helper', actor_role: ROLES.admin, target_type: 'topup', target_id: tradeNo })
  t.same(audit[0]!.changes.status, { before: 'pending', after: 'success' })
  t.match(audit[0]!.note, /credited 1500000 quota/)

  t.same((await call('POST', '/api/user/topup/complete', root, { trade_no: tradeNo })).body, { success: false, message: 'This top-up order is already completed' }, 'a second completion is refused')
  t.same((await call('POST', '/api/user/topup/complete', root, { trade_no: tradeNo }, ZH)).body.message, '该充值订单已完成', 'in the caller\'s language')
  const late = await app.inject({ method: 'GET', url: `/api/user/epay/notify?${new URLSearchParams(notification(fields)).toString()}` })
  t.equal(late.body, 'success', 'the provider\'s late notification is acknowledged')
  t.equal(await quotaOf(app, payer.user.id), 1000 + 1_500_000, 'but credits nothing')
  t.equal(await app.quota.balance('user', payer.user.id), 400 + 1_500_000)
  t.equal((await rechargeLogs(app, payer.user.id)).length, 1)
  t.equal((await app.db.selectFrom('audit_logs').selectAll().where('action', '=', 'topup.complete').execute()).length, 1, 'refusals are not audited')
})

t.test('a notification first, then a completion: credited once; unknown and closed orders are refused', async (t) => {
  const { app, root, call } = await setup(t)
  const payer = await userSession(app, 'payer')
  const fields = (await call('POST', '/api/user/pay', payer, { amount: 2, payment_method: 'wx' })).body.data as Params
  const paid = await app.inject({ method: 'GET', url: `/api/user/epay/notify?${new URLSearchParams(notification(fields)).toString()}` })
  t.equal(paid.body, 'success')
  t.same((await call('POST', '/api/user/topup/complete', root, { trade_no: fields['out_trade_no']! })).body, { success: false, message: 'This top-up order is already completed' })
  t.equal(await quotaOf(app, payer.user.id), 1_000_000, 'credited once')

  t.same((await call('POST', '/api/user/topup/complete', root, { trade_no: 'USR0NOnothing' })).body, { success: false, message: 'Top-up order not found' })
  t.equal((await call('POST', '/api/user/topup/complete', root, { trade_no: 'USR0NOnothing' }, ZH)).body.message, '充值订单不存在')
  t.equal((await call('POST', '/api/user/topup/complete', root, { trade_no: '' })).status, 400, 'an empty trade number is malformed')
  await insertTopUp(app.db, { user_id: payer.user.id, amount: 2, money: '14.60', quota: 1_000_000, trade_no: 'USR-EXPIRED', payment_method: 'alipay', status: 'expired' })
  t.same((await call('POST', '/api/user/topup/complete', root, { trade_no: 'USR-EXPIRED' })).body, { success: false, message: 'Only a pending top-up order can be completed' })
  t.equal(await quotaOf(app, payer.user.id), 1_000_000)
})

t.test('concurrent completions and notifications of one order credit it once', async (t) => {
  const { app, root, call } = await setup(t)
  const payer = await userSession(app, 'payer')
  await app.quota.setBalance('user', payer.user.id, 0)
  const fields = (await call('POST', '/api/user/pay', payer, { amount: 2, payment_method: 'zfb' })).body.data as Params
  const query = new URLSearchParams(notification(fields)).toString()
  const results = await Promise.all([
    ...Array.from({ length: 4 }, async () => (await call('POST', '/api/user/topup/complete', root, { trade_no: fields['out_trade_no']! })).body.success as boolean),
    ...Array.from({ length: 4 }, async () => (await app.inject({ method: 'GET', url: `/api/user/epay/notify?${query}` })).body === 'success')
  ])
  t.ok(results.slice(0, 4).filter(Boolean).length <= 1, 'at most one completion succeeds')
  t.ok(results.slice(4).every(Boolean), 'every notification is acknowledged')
  t.equal(await quotaOf(app, payer.user.id), 1_000_000, 'credited once in Postgres')
  t.equal(await app.quota.balance('user', payer.user.id), 1_000_000, 'and in Redis')
  t.equal((await rechargeLogs(app, payer.user.id)).length, 1)
})
