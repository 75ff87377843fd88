import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ConfigChange } from '@modelgate/contracts'
import { LOG_TYPE, updateUser } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { sha256 } from '../src/plugins/app/auth.js'
import { epaySign, formatCents, parseCents, payableCents, verifyEpaySign } from '../src/services/epay.js'
import { createAccount } from '../src/services/users.js'
import { build, buildLogged, sharedEnv } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
const KEY = 'merchant-secret-key'
const PID = '1001'
const EPAY = {
  ServerAddress: 'https://gw.example.com',
  PayAddress: 'https://pay.example.com',
  EpayId: PID,
  EpayKey: KEY,
  Price: '7.3',
  MinTopUp: '2',
  TopupGroupRatio: '{"vip":0.8}'
} as const
const DISABLED = { success: false, message: 'Online top-up is not enabled by the administrator' }

type Params = Record<string, string>
interface Caller { id: number, headers: Record<string, string> }

/** The provider's MD5 signature, written out here independently of the service's code. */
function providerSign (params: Params, key = KEY): string {
  const names = Object.keys(params).filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '').sort()
  return createHash('md5').update(names.map((k) => `${k}=${params[k]}`).join('&') + key).digest('hex')
}

/** A user signed in with a personal access token, optionally in `group`. */
async function caller (app: FastifyInstance, username: string, group?: string): Promise<Caller> {
  const row = await createAccount(app, { username })
  const token = randomBytes(24).toString('base64url')
  await updateUser(app.db, row.id, { access_token_hash: sha256(token), ...(group === undefined ? {} : { group }) })
  return { id: row.id, headers: { authorization: token, 'new-api-user': String(row.id) } }
}

async function post (app: FastifyInstance, who: Caller, url: string, payload: object, lang = EN) {
  const res = await app.inject({ method: 'POST', url, headers: { ...who.headers, ...lang }, payload })
  return { status: res.statusCode, body: res.json() }
}

async function pay (app: FastifyInstance, who: Caller, amount: number, method: 'zfb' | 'wx' = 'zfb'): Promise<{ fields: Params, url: string }> {
  const res = await post(app, who, '/api/user/pay', { amount, top_up_code: '', payment_method: method })
  if (res.body.success !== true) throw new Error(`pay failed: ${res.body.message}`)
  return { fields: res.body.data, url: res.body.url }
}

/** What the provider sends once the payment of `fields` went through, signed with `key`. */
function notification (fields: Params, change: Params = {}, key = KEY): Params {
  const params: Params = {
    pid: fields['pid']!,
    trade_no: `2024${randomBytes(6).toString('hex')}`,
    out_trade_no: fields['out_trade_no']!,
    type: fields['type']!,
    name: fields['name']!,
    money: fields['money']!,
    trade_status: 'TRADE_SUCCESS',
    ...change
  }
  return { ...params, sign: providerSign(params, key), sign_type: 'MD5' }
}

async function notify (app: FastifyInstance, params: Params, how: 'GET' | 'POST' = 'GET'): Promise<string> {
  const query = new URLSearchParams(params).toString()
  const res = how === 'GET'
    ? await app.inject({ method: 'GET', url: `/api/user/epay/notify?${query}` })
    : await app.inject({ method: 'POST', url: '/api/user/epay/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: query })
  if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/plain')) {
    throw new Error(`notify answered ${res.statusCode} ${String(res.headers['content-type'])}: ${res.body}`)
  }
  return res.body
}

const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const order = async (app: FastifyInstance, tradeNo: string) =>
  await app.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()
const orders = async (app: FastifyInstance) => await app.db.selectFrom('top_ups').selectAll().orderBy('id').execute()
const rechargeLogs = async (app: FastifyInstance) =>
  await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.topup).orderBy('id').execute()

t.test('the epay signature follows the protocol', async (t) => {
  const params = {
    pid: '1001',
    type: 'alipay',
    out_trade_no: 'T1',
    notify_url: 'https://a.example/n?x=1&y=2',
    return_url: 'https://a.example/r',
    name: 'TUC1',
    money: '7.30',
    param: '',
    sign_type: 'MD5'
  }
  // md5 of 'money=7.30&name=TUC1&notify_url=https://a.example/n?x=1&y=2&out_trade_no=T1&pid=1001&return_url=https://a.example/r&type=alipay' + 'secret'
  const expected = '66540d1d0e5a840f232fbc830da39b5d'
  t.equal(epaySign(params, 'secret'), expected, 'sorted, raw values, empties and sign_type left out, key appended')
  t.equal(epaySign({ ...params, sign: 'whatever' }, 'secret'), expected, 'sign itself is left out')
  t.ok(verifyEpaySign({ ...params, sign: expected }, 'secret'))
  t.ok(verifyEpaySign({ ...params, sign: expected.toUpperCase() }, 'secret'))
  t.notOk(verifyEpaySign({ ...params, sign: expected }, 'other'))
  t.notOk(verifyEpaySign({ ...params, money: '7.31', sign: expected }, 'secret'))
  t.notOk(verifyEpaySign({ ...params, sign: expected.slice(1) }, 'secret'))
  t.notOk(verifyEpaySign(params, 'secret'), 'no sign, no trust')
})

t.test('money is computed exactly in cents', async (t) => {
  t.equal(formatCents(payableCents(3, 7.3, 1)), '21.90')
  t.equal(formatCents(payableCents(3, 7.3, 0.8)), '17.52')
  t.equal(formatCents(payableCents(1, 1.005, 1)), '1.01', 'half up on the decimal value, where 1.005 * 100 in floating point is 100.4999...')
  t.equal(formatCents(payableCents(7, 0.1, 0.7)), '0.49')
  t.equal(formatCents(payableCents(1, 0.004, 1)), '0.00')
  t.equal(formatCents(payableCents(3, 1e-7, 1e21)), '300000000000000.00', 'exponent forms are exact too')
  t.equal(formatCents(payableCents(10_000_000, 7.3, 1)), '73000000.00')
  t.equal(parseCents('21.9'), 2190n)
  t.equal(parseCents('21.90'), 2190n)
  t.equal(parseCents('21.900'), 2190n)
  t.equal(parseCents('21'), 2100n)
  t.equal(parseCents('21.905'), undefined, 'fractions of a cent are not a sum of money')
  t.equal(parseCents('-1.00'), undefined)
  t.equal(parseCents('1e3'), undefined)
  t.equal(parseCents(''), undefined)
})

t.test('online top-up is refused until the administrator configures it', async (t) => {
  const app = await build(t)
  const u = await caller(app, 'alice')
  t.same((await post(app, u, '/api/user/amount', { amount: 5 })).body, DISABLED)
  t.same((await post(app, u, '/api/user/pay', { amount: 5, payment_method: 'zfb' })).body, DISABLED)
  t.equal((await post(app, u, '/api/user/pay', { amount: 5, payment_method: 'zfb' }, ZH)).body.message, '管理员未开启在线充值')
  await app.saveOptions({ ServerAddress: EPAY.ServerAddress, PayAddress: EPAY.PayAddress, EpayId: PID })
  t.same((await post(app, u, '/api/user/pay', { amount: 5, payment_method: 'wx' })).body, DISABLED, 'the key is missing')
  await app.saveOptions({ EpayKey: KEY, EpayId: '' })
  t.same((await post(app, u, '/api/user/amount', { amount: 5 })).body, DISABLED, 'the merchant id is missing')
  await app.saveOptions({ EpayId: PID, ServerAddress: '' })
  t.same((await post(app, u, '/api/user/pay', { amount: 5, payment_method: 'wx' })).body, {
    success: false,
    message: 'Online top-up needs the server address; ask the administrator to set it in the system settings'
  }, 'no address for the callback')
  t.equal((await orders(app)).length, 0, 'no order was created')
  await app.saveOptions({ ServerAddress: EPAY.ServerAddress })
  t.equal((await post(app, u, '/api/user/amount', { amount: 5 })).body.data, '36.50', 'configured: it works')
  t.equal((await app.inject({ method: 'POST', url: '/api/user/amount', payload: { amount: 5 } })).statusCode, 401, 'signed-in users only')
})

t.test('the payable sum is amount x Price x the group\'s top-up ratio, above the minimum', async (t) => {
  const app = await build(t)
  await app.saveOptions(EPAY)
  const plain = await caller(app, 'plain')
  const vip = await caller(app, 'vipuser', 'vip')
  const amount = async (who: Caller, n: number, lang = EN) => (await post(app, who, '/api/user/amount', { amount: n, top_up_code: 'ignored' }, lang)).body

  t.same(await amount(plain, 3), { success: true, message: '', data: '21.90' })
  t.same(await amount(vip, 3), { success: true, message: '', data: '17.52' }, '0.8 for the vip group')
  t.equal((await amount(vip, 10)).data, '58.40')
  t.equal((await amount(plain, 2)).data, '14.60', 'the minimum itself is allowed')
  t.same(await amount(plain, 1), { success: false, message: 'The top-up amount cannot be less than 2' })
  t.equal((await amount(plain, 1, ZH)).message, '充值数量不能小于 2')
  t.equal((await post(app, plain, '/api/user/amount', { amount: 2.5 })).status, 400, 'whole units only')
  t.equal((await post(app, plain, '/api/user/amount', { amount: 10_000_001 })).status, 400, 'bounded')

  await app.saveOptions({ MinTopUp: '0', Price: '1.005', TopupGroupRatio: '{"vip":0}' })
  t.equal((await post(app, plain, '/api/user/amount', { amount: 0 })).status, 400, 'at least one unit whatever the minimum')
  t.equal((await amount(plain, 1)).data, '1.01', 'no floating-point drift')
  t.equal((await amount(vip, 1)).data, '1.01', 'a ratio of 0 counts as 1: top-up is never free')
  await app.saveOptions({ Price: '0.001' })
  t.same(await amount(plain, 1), { success: false, message: 'The payable sum is too low' })
})

t.test('paying creates a pending order and a form signed for the provider', async (t) => {
  const app = await build(t)
  await app.saveOptions(EPAY)
  const vip = await caller(app, 'vipuser', 'vip')
  const res = await post(app, vip, '/api/user/pay', { amount: 3, top_up_code: '', payment_method: 'zfb' })
  t.equal(res.body.success, true)
  t.equal(res.body.message, 'success')
  t.equal(res.body.url, 'https://pay.example.com/submit.php')
  const fields: Params = res.body.data
  t.match(fields.out_trade_no, new RegExp(`^USR${vip.id}NO[0-9a-f]{32}$`))
  t.same({ ...fields, out_trade_no: 'X', sign: 'X' }, {
    pid: PID,
    type: 'alipay',
    out_trade_no: 'X',
    notify_url: 'https://gw.example.com/api/user/epay/notify',
    return_url: 'https://gw.example.com/log',
    name: 'TUC3',
    money: '17.52',
    sign_type: 'MD5',
    sign: 'X'
  })
  t.equal(fields['sign'], providerSign(fields), 'the provider can verify the form with the merchant key')
  t.match(await order(app, fields['out_trade_no']!), { user_id: vip.id, amount: 3, money: '17.52', quota: 1_500_000, status: 'pending', payment_method: 'alipay', complete_time: 0 })

  await app.saveOptions({ CustomCallbackAddress: 'https://callback.example.com' })
  const wx = await pay(app, vip, 5, 'wx')
  t.equal(wx.fields['type'], 'wxpay')
  t.equal(wx.fields['notify_url'], 'https://callback.example.com/api/user/epay/notify', 'the custom callback address wins')
  t.equal(wx.fields['return_url'], 'https://gw.example.com/log')
  t.equal(wx.fields['money'], '29.20')
  t.equal(wx.fields['sign'], providerSign(wx.fields))
  t.not(wx.fields['out_trade_no'], fields['out_trade_no'], 'every order has its own number')
  t.match(await order(app, wx.fields['out_trade_no']!), { amount: 5, quota: 2_500_000, payment_method: 'wxpay', status: 'pending' })

  t.equal((await post(app, vip, '/api/user/pay', { amount: 3, payment_method: 'card' })).status, 400)
  t.same((await post(app, vip, '/api/user/pay', { amount: 1, payment_method: 'zfb' })).body, { success: false, message: 'The top-up amount cannot be less than 2' })
  t.equal((await orders(app)).length, 2, 'refused requests leave no order')
  t.equal(await quotaOf(app, vip.id), 0, 'nothing is credited before the payment')
})

t.test('a genuine notification credits the order once, however often it comes', async (t) => {
  const app = await build(t)
  await app.saveOptions(EPAY)
  const u = await caller(app, 'payer')
  await app.db.updateTable('users').set({ quota: 1000 }).where('id', '=', u.id).execute()
  await app.quota.setBalance('user', u.id, 400)
  const changes: ConfigChange[] = []
  app.onChange((c) => changes.push(c))
  const { fields } = await pay(app, u, 3)
  const tradeNo = fields['out_trade_no']!
  const paid = notification(fields)

  t.equal(await notify(app, paid), 'success')
  t.equal(await quotaOf(app, u.id), 1000 + 1_500_000)
  t.equal(await app.quota.balance('user', u.id), 400 + 1_500_000, 'the cached balance moved by the same amount')
  const settled = await order(app, tradeNo)
  t.equal(settled.status, 'success')
  t.ok(settled.complete_time >= Math.floor(Date.now() / 1000) - 5)
  const logs = await rechargeLogs(app)
  t.equal(logs.length, 1)
  t.match(logs[0], { type: LOG_TYPE.topup, user_id: u.id, username: 'payer', quota: 1_500_000 })
  t.match(logs[0]!.content, /21\.90/)
  for (let i = 0; i < 200 && !changes.some((c) => c.kind === 'user' && c.id === u.id); i++) await sleep(10)
  t.ok(changes.some((c) => c.kind === 'user' && c.id === u.id), 'the gateways are told to reload the user')

  t.equal(await notify(app, paid), 'success', 'a replay is acknowledged')
  t.equal(await notify(app, paid, 'POST'), 'success', 'as a form post too')
  t.equal(await notify(app, notification(fields)), 'success', 'and with another provider trade number')
  t.equal(await quotaOf(app, u.id), 1000 + 1_500_000, 'but credits nothing more')
  t.equal(await app.quota.balance('user', u.id), 400 + 1_500_000)
  t.equal((await rechargeLogs(app)).length, 1)

  const second = await pay(app, u, 2, 'wx')
  t.equal(await notify(app, notification(second.fields, { money: '14.6' }), 'POST'), 'success', 'a form post with the sum written without the trailing zero')
  t.equal(await quotaOf(app, u.id), 1000 + 1_500_000 + 1_000_000)
  t.equal((await rechargeLogs(app)).length, 2)
})

t.test('SEC-18 forged epay notify: wrong, missing or re-typed signatures, extra parameters, another merchant, an unpaid status: `fail`, order pending, no credit, one warning without the key', async (t) => {
  const { app, lines } = await buildLogged(t)
  await app.saveOptions(EPAY)
  const alice = await caller(app, 'alice')
  await app.quota.setBalance('user', alice.id, 0)
  const a = await pay(app, alice, 2)
  const genuine = notification(a.fields)
  const unsigned = Object.fromEntries(Object.entries(genuine).filter(([k]) => k !== 'sign'))

  const forged: Array<[string, Params]> = [
    ['signed with the wrong key', notification(a.fields, {}, 'guessed-key')],
    ['an empty signature', { ...genuine, sign: '' }],
    ['no signature', unsigned],
    ['a signature one character short', { ...genuine, sign: genuine['sign']!.slice(1) }],
    ['sign_type changed to RSA', { ...genuine, sign_type: 'RSA' }],
    ['sign_type changed to SHA256', { ...genuine, sign_type: 'SHA256' }],
    ['an extra parameter the signature does not cover', { ...genuine, param: 'credit-me-twice' }],
    ['another merchant, signed', notification(a.fields, { pid: '999' })],
    ['not paid yet, signed', notification(a.fields, { trade_status: 'WAIT_BUYER_PAY' })],
    ['closed trade, signed', notification(a.fields, { trade_status: 'TRADE_CLOSED' })]
  ]
  for (const [why, params] of forged) {
    const before = lines.length
    t.equal(await notify(app, params), 'fail', why)
    t.equal(await notify(app, params, 'POST'), 'fail', `${why} (form post)`)
    const warned = lines.slice(before).filter((l) => l.includes('epay notification refused'))
    t.equal(warned.length, 2, `${why}: one warning per notification`)
  }
  const dup = await app.inject({ method: 'GET', url: `/api/user/epay/notify?${new URLSearchParams(genuine).toString()}&money=14.60` })
  t.equal(dup.body, 'fail', 'a repeated parameter')
  t.equal((await app.inject({ method: 'GET', url: '/api/user/epay/notify' })).body, 'fail', 'no parameters')

  t.equal(await quotaOf(app, alice.id), 0, 'no credit in Postgres')
  t.equal(await app.quota.balance('user', alice.id), 0, 'nor in the balance the gateways spend from')
  t.equal((await order(app, a.fields['out_trade_no']!)).status, 'pending', 'the order stays pending')
  t.equal((await rechargeLogs(app)).length, 0)
  const warnings = lines.filter((l) => l.includes('epay notification refused'))
  t.ok(warnings.length >= forged.length * 2, `the refusals were logged (${warnings.length} warnings)`)
  t.ok(warnings.every((l) => JSON.parse(l).level === 40), 'as warnings')
  t.ok(lines.every((l) => !l.includes(KEY)), 'no log line holds the merchant key')
  t.match(warnings.map((l) => JSON.parse(l).reason as string), ['bad signature', 'bad signature'], 'with the reason')

  t.equal(await notify(app, genuine), 'success', 'the genuine notification still goes through')
  t.equal(await quotaOf(app, alice.id), 1_000_000)
  const signedExtra = await pay(app, alice, 2)
  t.equal(await notify(app, notification(signedExtra.fields, { param: 'shown-by-the-provider' })), 'success', 'an extra parameter the provider signed is fine')
})

t.test('SEC-19 amount and owner tampering: a signed sum off by 0.01, another user\'s order, a failed or expired order credit nothing; bad pay amounts are 400; the sum is always computed by the server', async (t) => {
  const app = await build(t)
  await app.saveOptions(EPAY)
  const alice = await caller(app, 'alice')
  const bob = await caller(app, 'bob', 'vip')
  const a = await pay(app, alice, 2)
  const b = await pay(app, bob, 100)
  t.equal(a.fields['money'], '14.60', 'the sum is 2 x Price 7.3')
  t.equal(b.fields['money'], '584.00', 'and 100 x 7.3 x the vip top-up ratio 0.8')

  const refused = async (params: Params, why: string) => {
    t.equal(await notify(app, params), 'fail', why)
    t.equal(await notify(app, params, 'POST'), 'fail', `${why} (form post)`)
  }
  await refused(notification(a.fields, { money: '14.59' }), 'a signed sum 0.01 below the order\'s')
  await refused(notification(a.fields, { money: '14.61' }), 'a signed sum 0.01 above the order\'s')
  await refused({ ...notification(a.fields), money: '1.00' }, 'the sum changed after signing')
  await refused({ ...notification(a.fields), out_trade_no: b.fields['out_trade_no']! }, 'another user\'s order with the signature of the first')
  await refused(notification(b.fields, { money: a.fields['money']! }), 'another user\'s order with the first one\'s sum, signed')
  await refused(notification(a.fields, { out_trade_no: `USR${alice.id}NO${'0'.repeat(32)}` }), 'an unknown order')
  await refused(notification(a.fields, { money: 'abc' }), 'not a sum')
  await refused(notification(a.fields, { money: '-14.60' }), 'a negative sum')

  for (const status of ['failed', 'expired'] as const) {
    const closed = await pay(app, alice, 3)
    await app.db.updateTable('top_ups').set({ status }).where('trade_no', '=', closed.fields['out_trade_no']!).execute()
    await refused(notification(closed.fields), `a ${status} order`)
    t.equal((await order(app, closed.fields['out_trade_no']!)).status, status, `the ${status} order stays ${status}`)
  }
  t.equal(await quotaOf(app, alice.id), 0)
  t.equal(await quotaOf(app, bob.id), 0)
  t.equal((await rechargeLogs(app)).length, 0)

  // The credit is the stored order's quota, only from pending, whatever else the notification says.
  t.equal(await notify(app, notification(b.fields, { name: 'TUC1000000' })), 'success')
  t.equal(await quotaOf(app, bob.id), 50_000_000, 'bob gets what his order of 100 units holds')
  t.equal(await quotaOf(app, alice.id), 0, 'alice nothing')

  const amounts: Array<[string, string]> = [
    ['negative', '-4'], ['zero', '0'], ['a fraction', '2.5'], ['NaN', 'NaN'], ['1e309 (Infinity)', '1e309'],
    ['above the bound', '10000001'], ['a numeric string', '"5"'], ['a string', '"five"'], ['null', 'null'], ['an array', '[5]']
  ]
  for (const [why, amount] of amounts) {
    for (const url of ['/api/user/pay', '/api/user/amount']) {
      const res = await app.inject({
        method: 'POST', url, headers: { ...alice.headers, ...EN, 'content-type': 'application/json' },
        payload: `{"amount":${amount},"payment_method":"zfb"}`
      })
      t.equal(res.statusCode, 400, `${url} with ${why}: 400`)
      t.equal(res.json().success, false, `${url} with ${why}: in the console's error shape`)
    }
  }
  t.same((await post(app, alice, '/api/user/pay', { amount: 1, payment_method: 'zfb' })).body, { success: false, message: 'The top-up amount cannot be less than 2' }, 'below MinTopUp: refused with the minimum')
  const injected = await post(app, alice, '/api/user/pay', { amount: 2, payment_method: 'zfb', money: '0.01', price: 0.01 })
  t.equal(injected.body.data.money, '14.60', 'a client-sent price or sum is ignored')
  t.equal((await orders(app)).filter((o) => o.user_id === alice.id).length, 4, 'refused requests leave no order')
})

t.test('SEC-20 replayed and duplicate callbacks: one valid notify 10 times at once on 3 replicas, then an hour later: one credit, one recharge log, replays answer success', async (t) => {
  const env = await sharedEnv(t)
  const apps: FastifyInstance[] = []
  for (let i = 0; i < 3; i++) apps.push(await build(t, {}, env))
  const app = apps[0]!
  await app.saveOptions(EPAY)
  const u = await caller(app, 'rusher')
  await app.quota.setBalance('user', u.id, 0)
  const { fields } = await pay(app, u, 4)
  const paid = notification(fields)
  const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) => await notify(apps[i % 3]!, paid, i % 2 === 0 ? 'GET' : 'POST')))
  t.same(answers, Array(10).fill('success'), 'each is acknowledged')
  t.equal(await quotaOf(app, u.id), 2_000_000, 'one credit in Postgres')
  t.equal(await app.quota.balance('user', u.id), 2_000_000, 'and in the shared balance')
  t.equal((await rechargeLogs(app)).length, 1, 'one recharge log')
  const settled = await order(app, fields['out_trade_no']!)
  t.equal(settled.status, 'success')

  // An hour later (the order completed an hour ago), from another replica and with a new provider trade number.
  await app.db.updateTable('top_ups').set({ complete_time: settled.complete_time - 3600 }).where('id', '=', settled.id).execute()
  for (const replica of apps) {
    t.equal(await notify(replica, paid), 'success', 'a late replay is acknowledged')
    t.equal(await notify(replica, notification(fields), 'POST'), 'success', 'a re-sent notification too')
  }
  t.equal(await quotaOf(app, u.id), 2_000_000, 'and credits nothing')
  t.equal(await app.quota.balance('user', u.id), 2_000_000)
  t.equal((await rechargeLogs(app)).length, 1)
  t.equal((await order(app, fields['out_trade_no']!)).complete_time, settled.complete_time - 3600, 'the order is not settled again')
})

t.test('SEC-21 cross-provider and unconfigured-provider forgery: other providers\' webhooks naming an epay order are 404, the order untouched; the epay callback is 404 until configured', async (t) => {
  const app = await build(t)
  await app.saveOptions(EPAY)
  const u = await caller(app, 'victim')
  const { fields } = await pay(app, u, 2)
  const tradeNo = fields['out_trade_no']!
  const stripeEvent = JSON.stringify({
    id: 'evt_forged', type: 'checkout.session.completed',
    data: { object: { id: 'cs_forged', client_reference_id: tradeNo, metadata: { trade_no: tradeNo }, amount_total: 1460, payment_status: 'paid', status: 'complete' } }
  })
  const webhooks = ['/api/stripe/webhook', '/api/user/stripe/webhook', '/api/creem/webhook', '/api/user/creem/webhook', '/api/user/alipay/notify', '/api/user/wxpay/notify', '/api/paypal/webhook']
  for (const url of webhooks) {
    const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=forged' }, payload: stripeEvent })
    t.equal(res.statusCode, 404, `POST ${url}: 404`)
    const form = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(notification(fields)).toString() })
    t.equal(form.statusCode, 404, `POST ${url} with a signed epay form: 404`)
  }
  t.equal(await notify(app, { ...notification(fields), type: 'stripe' }), 'fail', 'an epay notification re-typed as another provider\'s does not verify')
  t.equal((await order(app, tradeNo)).status, 'pending', 'the order is untouched')
  t.equal(await quotaOf(app, u.id), 0)

  // Without the merchant id and key the epay callback does not exist either.
  await app.saveOptions({ EpayKey: '' })
  for (const method of ['GET', 'POST'] as const) {
    const query = new URLSearchParams(notification(fields)).toString()
    const res = method === 'GET'
      ? await app.inject({ method, url: `/api/user/epay/notify?${query}` })
      : await app.inject({ method, url: '/api/user/epay/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: query })
    t.equal(res.statusCode, 404, `${method} to an unconfigured epay callback: 404`)
    t.equal(res.body, 'fail')
  }
  await app.saveOptions({ EpayKey: KEY, EpayId: '' })
  t.equal((await app.inject({ method: 'GET', url: `/api/user/epay/notify?${new URLSearchParams(notification(fields)).toString()}` })).statusCode, 404, 'no merchant id: 404')
  t.equal((await order(app, tradeNo)).status, 'pending')
  t.equal(await quotaOf(app, u.id), 0)
  t.equal((await rechargeLogs(app)).length, 0)
})
