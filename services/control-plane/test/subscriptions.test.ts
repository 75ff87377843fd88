import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { type ConfigChange, ROLES } from '@modelgate/contracts'
import { activateSubscription, insertSubscriptionOrder, LOG_TYPE, periodEnd } from '@modelgate/db'
import { completeSubscriptionOrder, expireSubscriptionOrder } from '../src/services/subscriptions/orders.js'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
const KEY = 'merchant-secret-key'
const PID = '1001'
const EPAY = { ServerAddress: 'https://gw.example.com', PayAddress: 'https://pay.example.com', EpayId: PID, EpayKey: KEY } as const
const PER_UNIT = 500_000

type Params = Record<string, string>
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH'

/** The provider's MD5 signature, written out here independently of the service's code. */
function providerSign (params: Params, key = KEY): string {
  const names = Object.keys(params).filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '').sort()
  return createHash('md5').update(names.map((k) => `${k}=${params[k]}`).join('&') + key).digest('hex')
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

async function notify (app: FastifyInstance, params: Params, how: 'GET' | 'POST' = 'GET', path = '/api/subscription/epay/notify'): Promise<string> {
  const query = new URLSearchParams(params).toString()
  const res = how === 'GET'
    ? await app.inject({ method: 'GET', url: `${path}?${query}` })
    : await app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: query })
  return res.body
}

function caller (app: FastifyInstance) {
  return async (who: Session | undefined, method: Method, url: string, payload?: object, lang = EN) => {
    const res = await app.inject({ method, url, headers: { ...(who?.headers ?? {}), ...lang }, ...(payload === undefined ? {} : { payload }) })
    return { status: res.statusCode, body: res.json(), text: res.body }
  }
}

const ITEMS = [{ model_name: 'gpt-4o', quota_type: 0, amount_total: 1_000_000 }, { model_name: 'gpt-4o', quota_type: 1, amount_total: 100 }]

function planBody (plan: Record<string, unknown> = {}, items: object[] = ITEMS) {
  return {
    plan: {
      title: 'Pro',
      subtitle: 'for builders',
      price_amount: 9.99,
      currency: 'usd',
      duration_unit: 'month',
      duration_value: 1,
      custom_seconds: 0,
      enabled: true,
      sort_order: 0,
      stripe_price_id: '',
      creem_product_id: '',
      ...plan
    },
    items
  }
}

async function setup (t: Test) {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const call = caller(app)
  const changes: ConfigChange[] = []
  app.onChange((c) => changes.push(c))
  const createPlan = async (plan: Record<string, unknown> = {}, items: object[] = ITEMS): Promise<number> => {
    const res = await call(root, 'POST', '/api/subscription/admin/plans', planBody(plan, items))
    if (res.body.success !== true) throw new Error(`plan not created: ${res.body.message}`)
    return res.body.data.plan.id as number
  }
  /** Waits until the gateways were told to reload `userId`, then forgets what was seen. */
  const announced = async (userId: number): Promise<boolean> => {
    for (let i = 0; i < 200 && !changes.some((c) => c.kind === 'user' && c.id === userId); i++) await sleep(10)
    const seen = changes.some((c) => c.kind === 'user' && c.id === userId)
    changes.length = 0
    return seen
  }
  return { app, root, call, createPlan, changes, announced }
}

const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const subsOf = async (app: FastifyInstance, userId: number) =>
  await app.db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', userId).orderBy('id').execute()
const itemsOf = async (app: FastifyInstance, subId: number) =>
  await app.db.selectFrom('user_subscription_items').selectAll().where('user_subscription_id', '=', subId).orderBy('id').execute()
const audits = async (app: FastifyInstance, action: string) =>
  await app.db.selectFrom('audit_logs').selectAll().where('action', '=', action).orderBy('id').execute()
const setQuota = async (app: FastifyInstance, id: number, quota: number) => {
  await app.db.updateTable('users').set({ quota }).where('id', '=', id).execute()
}

t.test('admins create, list, replace, enable and disable plans; every bad field is refused with a clear message', async (t) => {
  const { app, root, call, createPlan } = await setup(t)
  const admin = await userSession(app, 'adm', ROLES.admin)

  const created = await call(admin, 'POST', '/api/subscription/admin/plans', planBody({ title: '  Pro  ', sort_order: 5 }))
  t.equal(created.body.success, true, 'an admin (not only root) manages plans')
  t.equal(created.body.message, 'Plan created')
  t.match(created.body.data.plan, { title: 'Pro', subtitle: 'for builders', price_amount: 9.99, currency: 'USD', duration_unit: 'month', duration_value: 1, custom_seconds: 0, enabled: true, sort_order: 5 })
  t.match(created.body.data.items, [{ model_name: 'gpt-4o', quota_type: 0, amount_total: 1_000_000 }, { model_name: 'gpt-4o', quota_type: 1, amount_total: 100 }])
  const proId = created.body.data.plan.id as number
  const stored = await app.db.selectFrom('subscription_plans').selectAll().where('id', '=', proId).executeTakeFirstOrThrow()
  t.equal(stored.price_minor, 999, 'stored in minor units, exactly')
  t.equal(stored.currency, 'USD', 'upper case')

  // Prices whose float products drift (19.9 * 100 = 1989.9999...) are parsed from their decimal text.
  const cheapId = await createPlan({ title: 'Cheap', price_amount: 19.9, sort_order: 5 })
  t.equal((await app.db.selectFrom('subscription_plans').select('price_minor').where('id', '=', cheapId).executeTakeFirstOrThrow()).price_minor, 1990)
  const textId = await createPlan({ title: 'Text', price_amount: '0.29', sort_order: 9 })
  t.equal((await app.db.selectFrom('subscription_plans').select('price_minor').where('id', '=', textId).executeTakeFirstOrThrow()).price_minor, 29, 'a decimal string is accepted too')
  const freeId = await createPlan({ title: 'Free', price_amount: 0, sort_order: -1 })

  const list = await call(root, 'GET', '/api/subscription/admin/plans')
  t.same(list.body.data.map((e: { plan: { id: number } }) => e.plan.id), [textId, proId, cheapId, freeId], 'sort_order descending, then id ascending')
  t.equal(list.body.data[1].items.length, 2, 'each with its items')

  const refusals: Array<[string, object, string]> = [
    ['an empty title', planBody({ title: '   ' }), 'The plan title must be 1 to 128 characters'],
    ['a long title', planBody({ title: 'x'.repeat(129) }), 'The plan title must be 1 to 128 characters'],
    ['an unknown unit', planBody({ duration_unit: 'decade' }), 'The duration unit must be one of year, month, week, day, hour or custom'],
    ['a zero duration', planBody({ duration_value: 0 }), 'The duration must be a whole number from 1 to 1000'],
    ['a long duration', planBody({ duration_value: 1001 }), 'The duration must be a whole number from 1 to 1000'],
    ['a fractional duration', planBody({ duration_value: 1.5 }), 'The duration must be a whole number from 1 to 1000'],
    ['a custom duration under a minute', planBody({ duration_unit: 'custom', custom_seconds: 59 }), 'A custom duration must be a whole number of at least 60 seconds'],
    ['a negative price', planBody({ price_amount: -1 }), 'The price must be a number of at least 0 with at most 2 decimals'],
    ['three decimals', planBody({ price_amount: 1.005 }), 'The price must be a number of at least 0 with at most 2 decimals'],
    ['a price that is not a number', planBody({ price_amount: 'abc' }), 'The price must be a number of at least 0 with at most 2 decimals'],
    ['an exponent', planBody({ price_amount: 1e21 }), 'The price must be a number of at least 0 with at most 2 decimals'],
    ['a two-letter currency', planBody({ currency: 'US' }), 'The currency must be a 3-letter code (e.g. USD)'],
    ['a currency with a digit', planBody({ currency: 'US1' }), 'The currency must be a 3-letter code (e.g. USD)'],
    ['no items', planBody({}, []), 'A plan needs 1 to 50 items'],
    ['51 items', planBody({}, Array.from({ length: 51 }, (_, i) => ({ model_name: `m${i}`, quota_type: 0, amount_total: 1 }))), 'A plan needs 1 to 50 items'],
    ['an item without a model', planBody({}, [{ model_name: ' ', quota_type: 0, amount_total: 1 }]), 'Each item needs a model name'],
    ['an unknown item type', planBody({}, [{ model_name: 'a', quota_type: 2, amount_total: 1 }]), 'The item type must be 0 (quota) or 1 (requests)'],
    ['a zero amount', planBody({}, [{ model_name: 'a', quota_type: 0, amount_total: 0 }]), 'The item amount must be a positive whole number (at most 9007199254740991)'],
    ['a fractional amount', planBody({}, [{ model_name: 'a', quota_type: 0, amount_total: 1.5 }]), 'The item amount must be a positive whole number (at most 9007199254740991)'],
    ['an amount past 2^53 - 1', planBody({}, [{ model_name: 'a', quota_type: 0, amount_total: 2 ** 53 }]), 'The item amount must be a positive whole number (at most 9007199254740991)'],
    ['a duplicate item', planBody({}, [{ model_name: 'a', quota_type: 0, amount_total: 1 }, { model_name: 'a ', quota_type: 0, amount_total: 2 }]), 'The plan lists model a with the same type twice']
  ]
  const before = await app.db.selectFrom('subscription_plans').selectAll().orderBy('id').execute()
  for (const [why, body, message] of refusals) {
    const res = await call(root, 'POST', '/api/subscription/admin/plans', body)
    t.same([res.status, res.body], [200, { success: false, message }], `create with ${why}: refused`)
    const put = await call(root, 'PUT', `/api/subscription/admin/plans/${proId}`, body)
    t.same(put.body, { success: false, message }, `replace with ${why}: refused`)
  }
  t.equal((await call(root, 'POST', '/api/subscription/admin/plans', planBody({ title: '' }), ZH)).body.message, '套餐标题长度必须在 1 到 128 个字符之间', 'in Chinese too')
  t.equal((await call(root, 'POST', '/api/subscription/admin/plans', planBody({}, [{ model_name: 'a', quota_type: 3, amount_total: 1 }]), ZH)).body.message, '权益类型必须是 0（额度）或 1（次数）')
  t.equal((await call(root, 'POST', '/api/subscription/admin/plans', { plan: { title: 'x' }, items: [] })).status, 400, 'a body missing fields is malformed')
  t.same(await app.db.selectFrom('subscription_plans').selectAll().orderBy('id').execute(), before, 'no refused body changed a plan')
  t.equal((await app.db.selectFrom('subscription_plan_items').select('id').where('plan_id', '=', proId).execute()).length, 2, 'nor its items')

  // A held subscription keeps the items it copied when the plan is replaced.
  const alice = await userSession(app, 'alice')
  t.equal((await call(root, 'POST', '/api/subscription/admin/bind', { user_id: alice.user.id, plan_id: proId })).body.success, true)
  const replaced = await call(root, 'PUT', `/api/subscription/admin/plans/${proId}`, planBody({ title: 'Pro 2', price_amount: 12, duration_unit: 'custom', custom_seconds: 7200, sort_order: 5 }, [{ model_name: 'claude', quota_type: 1, amount_total: 7 }]))
  t.equal(replaced.body.success, true)
  t.equal(replaced.body.message, 'Plan updated')
  t.match(replaced.body.data.plan, { id: proId, title: 'Pro 2', price_amount: 12, duration_unit: 'custom', duration_value: 1, custom_seconds: 7200 })
  t.same(replaced.body.data.items.map((i: { model_name: string }) => i.model_name), ['claude'], 'the items are replaced')
  t.same((await app.db.selectFrom('subscription_plan_items').select('model_name').where('plan_id', '=', proId).execute()).map((r) => r.model_name), ['claude'])
  const held = (await subsOf(app, alice.user.id))[0]!
  t.equal(held.plan_title, 'Pro', 'the held period keeps its title')
  t.same((await itemsOf(app, held.id)).map((i) => [i.model_name, i.quota_type, i.amount_total]), [['gpt-4o', 0, 1_000_000], ['gpt-4o', 1, 100]], 'and its copied items')
  t.same((await call(root, 'PUT', '/api/subscription/admin/plans/99999', planBody())).body, { success: false, message: 'Subscription plan not found' })

  const off = await call(root, 'PATCH', `/api/subscription/admin/plans/${proId}`, { enabled: false })
  t.equal(off.body.message, 'Plan disabled')
  t.equal(off.body.data.plan.enabled, false)
  t.equal((await call(alice, 'GET', '/api/subscription/plans')).body.data.some((e: { plan: { id: number } }) => e.plan.id === proId), false, 'a disabled plan is not on sale')
  t.equal((await call(root, 'GET', '/api/subscription/admin/plans')).body.data.some((e: { plan: { id: number } }) => e.plan.id === proId), true, 'admins still see it')
  const on = await call(root, 'PATCH', `/api/subscription/admin/plans/${proId}`, { enabled: true })
  t.equal(on.body.message, 'Plan enabled')
  t.equal((await call(alice, 'GET', '/api/subscription/plans')).body.data.some((e: { plan: { id: number } }) => e.plan.id === proId), true, 'enabled again: on sale')
  t.same((await call(root, 'PATCH', '/api/subscription/admin/plans/99999', { enabled: true })).body, { success: false, message: 'Subscription plan not found' })
  t.equal((await call(root, 'PATCH', `/api/subscription/admin/plans/${proId}`, { enabled: 'yes' })).status, 400)

  t.equal((await audits(app, 'subscription_plan.create')).length, 4, 'each creation is audited')
  const update = await audits(app, 'subscription_plan.update')
  t.equal(update.length, 1, 'the replacement is audited')
  t.match(update[0]!.changes, { title: { before: 'Pro', after: 'Pro 2' } })
  t.equal((await audits(app, 'subscription_plan.disable')).length, 1)
  t.equal((await audits(app, 'subscription_plan.enable')).length, 1)
  t.equal((await audits(app, 'subscription_plan.create'))[0]!.actor_name, 'adm', 'with the admin who acted')

  // A normal user reaches none of the admin routes (403, the console's envelope), and changes nothing.
  const plansBefore = await app.db.selectFrom('subscription_plans').selectAll().orderBy('id').execute()
  const subsBefore = await subsOf(app, alice.user.id)
  const adminRoutes: Array<[Method, string, object | undefined]> = [
    ['GET', '/api/subscription/admin/plans', undefined],
    ['POST', '/api/subscription/admin/plans', planBody()],
    ['PUT', `/api/subscription/admin/plans/${proId}`, planBody()],
    ['PATCH', `/api/subscription/admin/plans/${proId}`, { enabled: false }],
    ['POST', '/api/subscription/admin/bind', { user_id: alice.user.id, plan_id: proId }],
    ['GET', `/api/subscription/admin/users/${alice.user.id}/subscriptions`, undefined],
    ['POST', `/api/subscription/admin/user_subscriptions/${held.id}/invalidate`, undefined]
  ]
  for (const [method, url, payload] of adminRoutes) {
    const res = await call(alice, method, url, payload)
    t.same([res.status, res.body], [403, { success: false, message: 'Permission denied: insufficient rights for this operation' }], `${method} ${url}: 403 for a normal user`)
    t.equal((await call(undefined, method, url, payload)).status, 401, `${method} ${url}: 401 signed out`)
  }
  t.same(await app.db.selectFrom('subscription_plans').selectAll().orderBy('id').execute(), plansBefore, 'no plan changed')
  t.same(await subsOf(app, alice.user.id), subsBefore, 'no subscription changed')
})

t.test('users see the enabled plans with how each may be paid and its price in quota units', async (t) => {
  const { app, call, createPlan } = await setup(t)
  const alice = await userSession(app, 'alice')
  const pro = await createPlan({ title: 'Pro', price_amount: 9.99, stripe_price_id: 'price_123', sort_order: 2 })
  const basic = await createPlan({ title: 'Basic', price_amount: 0.01, creem_product_id: 'prod_1', sort_order: 1 })
  await createPlan({ title: 'Hidden', enabled: false })
  const offers = async () => (await call(alice, 'GET', '/api/subscription/plans')).body.data as Array<{ plan: { id: number, title: string }, items: unknown[], pay_methods: Record<string, boolean>, quota_price: number }>

  let list = await offers()
  t.same(list.map((e) => e.plan.title), ['Pro', 'Basic'], 'enabled plans only, in the admins\' order')
  t.same(list[0]!.pay_methods, { balance: true, epay: false, stripe: false, creem: false }, 'nothing configured: the balance only')
  t.equal(list[0]!.quota_price, Math.ceil(999 * PER_UNIT / 100), 'price_minor x QuotaPerUnit / 100')
  t.equal(list[1]!.quota_price, 5_000)
  t.equal(list[0]!.items.length, 2)

  await app.saveOptions({ ...EPAY, StripeApiSecret: 'sk_test_x', StripeWebhookSecret: 'whsec_x', QuotaPerUnit: '333' })
  list = await offers()
  t.same(list.find((e) => e.plan.id === pro)!.pay_methods, { balance: true, epay: true, stripe: true, creem: false }, 'epay and Stripe (the plan has a Stripe price)')
  t.same(list.find((e) => e.plan.id === basic)!.pay_methods, { balance: true, epay: true, stripe: false, creem: false }, 'no Stripe price, no Stripe')
  t.equal(list.find((e) => e.plan.id === pro)!.quota_price, Math.ceil(999 * 333 / 100), 'rounded up to a whole unit (3326.67 → 3327)')
  t.equal(list.find((e) => e.plan.id === basic)!.quota_price, 4, '0.01 x 333 = 3.33 → 4')
  t.equal((await call(undefined, 'GET', '/api/subscription/plans')).status, 401, 'signed-in users only')
})

t.test('buying from the wallet takes the price exactly, logs it, moves the cached balance and starts the subscription; a short balance is refused', async (t) => {
  const { app, call, createPlan, announced } = await setup(t)
  const alice = await userSession(app, 'alice')
  const plan = await createPlan({ title: 'Pro', price_amount: 9.99 })
  const price = Math.ceil(999 * PER_UNIT / 100)
  await setQuota(app, alice.user.id, 10_000_000)
  await app.quota.setBalance('user', alice.user.id, 9_000_000)

  const res = await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: plan })
  t.equal(res.body.success, true)
  t.equal(res.body.message, 'Subscribed to Pro')
  t.match(res.body.data.subscription, { user_id: alice.user.id, plan_id: plan, plan_title: 'Pro', status: 'active', source: 'order', auto_renew: false })
  t.same(res.body.data.items.map((i: { model_name: string, quota_type: number, amount_total: number, amount_used: number }) => [i.model_name, i.quota_type, i.amount_total, i.amount_used]), [['gpt-4o', 0, 1_000_000, 0], ['gpt-4o', 1, 100, 0]])
  t.equal(await quotaOf(app, alice.user.id), 10_000_000 - price, 'the balance is debited by exactly the quota price')
  t.equal(await app.quota.balance('user', alice.user.id), 9_000_000 - price, 'the cached balance moved by the same amount')
  t.ok(await announced(alice.user.id), 'the gateways are told to reload the user')

  const subs = await subsOf(app, alice.user.id)
  t.equal(subs.length, 1)
  t.ok(subs[0]!.order_id !== null, 'tied to a paid order')
  t.match(await app.db.selectFrom('subscription_orders').selectAll().where('id', '=', subs[0]!.order_id!).executeTakeFirstOrThrow(), { user_id: alice.user.id, plan_id: plan, price_minor: 999, payment_method: 'balance', status: 'success' })
  const items = await itemsOf(app, subs[0]!.id)
  t.ok(items.every((i) => i.user_id === alice.user.id), 'the copied items carry the user id')
  const logs = await app.db.selectFrom('logs').selectAll().where('user_id', '=', alice.user.id).execute()
  t.equal(logs.length, 1, 'one log row')
  t.match(logs[0], { type: LOG_TYPE.system, quota: price, username: 'alice' })
  t.match(logs[0]!.content, /^bought plan Pro for \$9\.99 from the balance \(order SUB\d+NO[0-9a-f]{32}\)$/)
  t.match(logs[0]!.other, { billing_source: 'wallet', subscription_id: subs[0]!.id, plan_title: 'Pro' })

  // Short by one unit: refused, nothing taken, nothing started.
  await setQuota(app, alice.user.id, price - 1)
  const short = await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: plan })
  t.same(short.body, { success: false, message: `Your balance is too low for this plan: it costs ${price}, you have ${price - 1}` }, 'in quota units when dollars would read the same')
  t.equal((await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: plan }, ZH)).body.message, `余额不足：该套餐需要 ${price}，当前余额 ${price - 1}`)
  t.equal(await quotaOf(app, alice.user.id), price - 1)
  await setQuota(app, alice.user.id, 1_000_000)
  t.same((await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: plan })).body, { success: false, message: 'Your balance is too low for this plan: it costs $9.99, you have $2.00' })
  t.equal(await quotaOf(app, alice.user.id), 1_000_000)
  t.equal(await app.quota.balance('user', alice.user.id), 9_000_000 - price)
  t.equal((await subsOf(app, alice.user.id)).length, 1)
  t.equal((await app.db.selectFrom('logs').select('id').where('user_id', '=', alice.user.id).execute()).length, 1)

  // Exactly the price: allowed, to zero.
  await setQuota(app, alice.user.id, price)
  t.equal((await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: plan })).body.success, true)
  t.equal(await quotaOf(app, alice.user.id), 0)

  await setQuota(app, alice.user.id, 100 * price)
  const hidden = await createPlan({ title: 'Hidden', enabled: false })
  t.same((await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: hidden })).body, { success: false, message: 'This subscription plan is not available' }, 'a disabled plan cannot be bought')
  t.same((await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: 99999 })).body, { success: false, message: 'This subscription plan is not available' })
  t.equal((await call(alice, 'POST', '/api/subscription/balance/pay', { plan_id: '1' })).status, 400)
  t.equal(await quotaOf(app, alice.user.id), 100 * price, 'refusals take nothing')
})

t.test('20 concurrent wallet purchases against a balance covering 3 start exactly 3 subscriptions', async (t) => {
  const { app, call, createPlan } = await setup(t)
  const bob = await userSession(app, 'bob')
  const plan = await createPlan({ title: 'Rush', price_amount: 1 })
  const price = PER_UNIT
  await setQuota(app, bob.user.id, 3 * price + price - 1)
  await app.quota.setBalance('user', bob.user.id, 3 * price + price - 1)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await call(bob, 'POST', '/api/subscription/balance/pay', { plan_id: plan })))
  t.equal(answers.filter((a) => a.body.success === true).length, 3, 'three purchases succeed')
  t.ok(answers.filter((a) => a.body.success !== true).every((a) => /balance is too low/.test(a.body.message)), 'the others are refused for the balance')
  t.equal((await subsOf(app, bob.user.id)).length, 3, 'three subscriptions')
  t.equal(await quotaOf(app, bob.user.id), price - 1, 'three prices taken, no more')
  t.equal(await app.quota.balance('user', bob.user.id), price - 1, 'the cached balance too')
  t.equal((await app.db.selectFrom('logs').select('id').where('user_id', '=', bob.user.id).execute()).length, 3, 'three log rows')

  // A balance not cached stays uncached: the gateways load it from Postgres, already debited.
  const carol = await userSession(app, 'carol')
  await setQuota(app, carol.user.id, price)
  t.equal((await call(carol, 'POST', '/api/subscription/balance/pay', { plan_id: plan })).body.success, true)
  t.equal(await app.quota.balance('user', carol.user.id), undefined, 'no cached balance is made up')
  t.equal(await quotaOf(app, carol.user.id), 0)
})

t.test('epay purchase: refused until configured; a signed notification completes the order once, however often and concurrently; forged or mis-summed ones are refused', async (t) => {
  const { app, call, createPlan, announced } = await setup(t)
  const alice = await userSession(app, 'alice')
  const plan = await createPlan({ title: 'Pro', price_amount: 9.99 })
  t.same((await call(alice, 'POST', '/api/subscription/epay/pay', { plan_id: plan, payment_method: 'zfb' })).body, { success: false, message: 'Online top-up is not enabled by the administrator' })
  t.equal((await notify(app, { out_trade_no: 'x' })), 'fail', 'the callback does not exist while epay is not configured')
  t.equal((await app.inject({ method: 'GET', url: '/api/subscription/epay/notify?out_trade_no=x' })).statusCode, 404)
  t.equal((await app.db.selectFrom('subscription_orders').select('id').execute()).length, 0, 'no order was created')

  await app.saveOptions(EPAY)
  const res = await call(alice, 'POST', '/api/subscription/epay/pay', { plan_id: plan, payment_method: 'zfb' })
  t.equal(res.body.success, true)
  t.equal(res.body.url, 'https://pay.example.com/submit.php')
  const fields = res.body.data as Params
  t.match(fields, { pid: PID, type: 'alipay', notify_url: 'https://gw.example.com/api/subscription/epay/notify', money: '9.99', sign_type: 'MD5' })
  t.match(fields['out_trade_no'], new RegExp(`^SUB${alice.user.id}NO[0-9a-f]{32}$`))
  t.equal(fields['sign'], providerSign(fields), 'the provider can verify the form')
  const tradeNo = fields['out_trade_no']!
  const order = async () => await app.db.selectFrom('subscription_orders').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()
  t.match(await order(), { user_id: alice.user.id, plan_id: plan, price_minor: 999, currency: 'USD', status: 'pending', payment_method: 'epay:alipay' })
  const hidden = await createPlan({ title: 'Hidden', enabled: false })
  t.same((await call(alice, 'POST', '/api/subscription/epay/pay', { plan_id: hidden, payment_method: 'wx' })).body, { success: false, message: 'This subscription plan is not available' })
  const free = await createPlan({ title: 'Free', price_amount: 0 })
  t.equal((await call(alice, 'POST', '/api/subscription/epay/pay', { plan_id: free, payment_method: 'wx' })).body.success, false, 'a free plan is not paid online')
  t.equal((await call(alice, 'POST', '/api/subscription/epay/pay', { plan_id: plan, payment_method: 'card' })).status, 400)

  const refused: Array<[string, Params]> = [
    ['signed with the wrong key', notification(fields, {}, 'guessed-key')],
    ['no signature', Object.fromEntries(Object.entries(notification(fields)).filter(([k]) => k !== 'sign'))],
    ['the sum changed after signing', { ...notification(fields), money: '0.01' }],
    ['a signed sum 0.01 below', notification(fields, { money: '9.98' })],
    ['a signed sum 0.01 above', notification(fields, { money: '10.00' })],
    ['another merchant', notification(fields, { pid: '999' })],
    ['not paid yet', notification(fields, { trade_status: 'WAIT_BUYER_PAY' })],
    ['an unknown order', notification(fields, { out_trade_no: `SUB${alice.user.id}NO${'0'.repeat(32)}` })]
  ]
  for (const [why, params] of refused) {
    t.equal(await notify(app, params), 'fail', why)
    t.equal(await notify(app, params, 'POST'), 'fail', `${why} (form post)`)
  }
  t.equal(await notify(app, notification(fields), 'GET', '/api/user/epay/notify'), 'fail', 'the top-up callback does not complete a subscription order')
  t.equal((await order()).status, 'pending', 'the order stays pending')
  t.equal((await subsOf(app, alice.user.id)).length, 0, 'and starts nothing')

  const paid = notification(fields, { money: '9.990' })
  const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) => await notify(app, i % 2 === 0 ? paid : notification(fields), i % 3 === 0 ? 'POST' : 'GET')))
  t.same(answers, Array(10).fill('success'), 'every genuine notification is acknowledged')
  const subs = await subsOf(app, alice.user.id)
  t.equal(subs.length, 1, 'one subscription')
  const done = await order()
  t.equal(done.status, 'success')
  t.equal(subs[0]!.order_id, done.id)
  t.equal(subs[0]!.source, 'order')
  t.match(done.provider_ref, /^2024[0-9a-f]{12}$/, 'the provider\'s trade number is kept')
  t.equal((await itemsOf(app, subs[0]!.id)).length, 2)
  t.ok(await announced(alice.user.id), 'the gateways are told to reload the user')
  t.equal(await notify(app, paid), 'success', 'a later replay is acknowledged')
  t.equal((await subsOf(app, alice.user.id)).length, 1, 'and starts nothing more')
  t.equal(await quotaOf(app, alice.user.id), 0, 'the wallet is never touched by an epay purchase')
})

t.test('admins bind a plan without payment and invalidate a subscription: audited, cached entitlements dropped', async (t) => {
  const { app, root, call, createPlan, announced } = await setup(t)
  const alice = await userSession(app, 'alice')
  const plan = await createPlan({ title: 'Gift', duration_unit: 'week', duration_value: 2, enabled: false })

  const bound = await call(root, 'POST', '/api/subscription/admin/bind', { user_id: alice.user.id, plan_id: plan })
  t.equal(bound.body.success, true, 'a disabled plan can still be given')
  t.equal(bound.body.message, 'Plan Gift given to alice')
  const sub = bound.body.data.subscription as { id: number, start_time: number, end_time: number }
  t.match(bound.body.data.subscription, { user_id: alice.user.id, plan_id: plan, source: 'admin', status: 'active' })
  t.equal(sub.end_time - sub.start_time, 14 * 86_400, 'two weeks')
  t.ok(await announced(alice.user.id), 'the gateways reload the user')
  const bind = await audits(app, 'subscription.bind')
  t.equal(bind.length, 1, 'audited')
  t.match(bind[0], { actor_name: 'root', target_type: 'user_subscription', target_id: String(sub.id) })
  t.same((await call(root, 'POST', '/api/subscription/admin/bind', { user_id: 99999, plan_id: plan })).body, { success: false, message: 'User does not exist' })
  t.same((await call(root, 'POST', '/api/subscription/admin/bind', { user_id: alice.user.id, plan_id: 99999 })).body, { success: false, message: 'Subscription plan not found' })
  t.equal((await subsOf(app, alice.user.id)).length, 1)

  const second = (await call(root, 'POST', '/api/subscription/admin/bind', { user_id: alice.user.id, plan_id: plan })).body.data.subscription.id as number
  const listed = await call(root, 'GET', `/api/subscription/admin/users/${alice.user.id}/subscriptions`)
  t.same(listed.body.data.map((e: { subscription: { id: number } }) => e.subscription.id).sort(), [sub.id, second].sort(), 'the admin lists the user\'s subscriptions')
  t.same((await call(root, 'GET', '/api/subscription/admin/users/99999/subscriptions')).body, { success: false, message: 'User does not exist' })

  const items = await itemsOf(app, sub.id)
  const otherItems = await itemsOf(app, second)
  for (const i of [...items, ...otherItems]) await app.quota.setBalance('entitlement', i.id, 42, alice.user.id)
  const gone = await call(root, 'POST', `/api/subscription/admin/user_subscriptions/${sub.id}/invalidate`)
  t.equal(gone.body.success, true)
  t.equal(gone.body.message, 'Subscription invalidated')
  t.equal(gone.body.data.subscription.status, 'cancelled')
  t.equal((await subsOf(app, alice.user.id)).find((s) => s.id === sub.id)!.status, 'cancelled', 'cancelled in Postgres')
  for (const i of items) t.equal(await app.quota.balance('entitlement', i.id, alice.user.id), undefined, `item ${i.id}'s cached balance is gone`)
  for (const i of otherItems) t.equal(await app.quota.balance('entitlement', i.id, alice.user.id), 42, `the other subscription's item ${i.id} keeps its balance`)
  t.ok(await announced(alice.user.id), 'the gateways reload the user')
  const inv = await audits(app, 'subscription.invalidate')
  t.equal(inv.length, 1, 'audited')
  t.match(inv[0], { target_id: String(sub.id), changes: { status: { before: 'active', after: 'cancelled' } } })
  t.same((await call(root, 'POST', `/api/subscription/admin/user_subscriptions/${sub.id}/invalidate`)).body, { success: false, message: 'Only an active subscription can be changed' }, 'once')
  t.same((await call(root, 'POST', '/api/subscription/admin/user_subscriptions/99999/invalidate')).body, { success: false, message: 'Subscription not found' })
  t.equal((await audits(app, 'subscription.invalidate')).length, 1, 'refusals are not audited')
  const after = (await call(root, 'GET', `/api/subscription/admin/users/${alice.user.id}/subscriptions`)).body.data as Array<{ subscription: { id: number } }>
  t.same(after.map((e) => e.subscription.id), [second, sub.id], 'active first')
})

t.test('a user lists their own subscriptions and sets the billing preference and auto-renewal; other users\' are out of reach', async (t) => {
  const { app, root, call, createPlan, announced } = await setup(t)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const plan = await createPlan({ title: 'Pro' })
  const bind = async (userId: number) => (await call(root, 'POST', '/api/subscription/admin/bind', { user_id: userId, plan_id: plan })).body.data.subscription.id as number
  const old = await bind(alice.user.id)
  await call(root, 'POST', `/api/subscription/admin/user_subscriptions/${old}/invalidate`)
  const mine = await bind(alice.user.id)
  const theirs = await bind(bob.user.id)
  await announced(alice.user.id)

  const self = await call(alice, 'GET', '/api/subscription/self')
  t.equal(self.body.data.billing_preference, 'subscription_first', 'the default preference')
  t.same(self.body.data.subscriptions.map((e: { subscription: { id: number } }) => e.subscription.id), [mine, old], 'active first, then history')
  t.same(Object.keys(self.body.data.subscriptions[0].subscription).sort(), ['auto_renew', 'end_time', 'id', 'plan_id', 'plan_title', 'source', 'start_time', 'status', 'user_id'])
  t.same(Object.keys(self.body.data.subscriptions[0].items[0]).sort(), ['amount_total', 'amount_used', 'id', 'model_name', 'quota_type'])
  t.ok(self.body.data.subscriptions.every((e: { subscription: { user_id: number } }) => e.subscription.user_id === alice.user.id), 'nothing of bob\'s')

  const pref = await call(alice, 'PUT', '/api/subscription/self/preference', { billing_preference: 'wallet_first' })
  t.same(pref.body, { success: true, message: 'Billing preference saved', data: { billing_preference: 'wallet_first' } })
  t.equal((await app.db.selectFrom('users').select('billing_preference').where('id', '=', alice.user.id).executeTakeFirstOrThrow()).billing_preference, 'wallet_first')
  t.ok(await announced(alice.user.id), 'the gateways reload the user')
  t.equal((await call(alice, 'GET', '/api/subscription/self')).body.data.billing_preference, 'wallet_first')
  for (const bad of ['cheapest', '', 'WALLET_FIRST']) {
    t.same((await call(alice, 'PUT', '/api/subscription/self/preference', { billing_preference: bad })).body, {
      success: false, message: 'The billing preference must be subscription_first, wallet_first, subscription_only or wallet_only'
    }, `${JSON.stringify(bad)} is refused`)
  }
  t.equal((await call(alice, 'PUT', '/api/subscription/self/preference', { billing_preference: 'x' }, ZH)).body.message, '计费偏好必须是 subscription_first、wallet_first、subscription_only 或 wallet_only 之一')
  t.equal((await call(alice, 'PUT', '/api/subscription/self/preference', { billing_preference: 1 })).status, 400)
  t.equal((await app.db.selectFrom('users').select('billing_preference').where('id', '=', alice.user.id).executeTakeFirstOrThrow()).billing_preference, 'wallet_first', 'unchanged by refusals')
  for (const p of ['subscription_only', 'wallet_only', 'subscription_first']) {
    t.equal((await call(alice, 'PUT', '/api/subscription/self/preference', { billing_preference: p })).body.data.billing_preference, p)
  }

  const renew = await call(alice, 'PUT', `/api/subscription/self/${mine}/auto_renew`, { auto_renew: true })
  t.equal(renew.body.success, true)
  t.equal(renew.body.message, 'Auto-renewal turned on')
  t.equal(renew.body.data.auto_renew, true)
  t.ok(await announced(alice.user.id), 'the gateways reload the user')
  t.equal((await subsOf(app, alice.user.id)).find((s) => s.id === mine)!.auto_renew, true)
  t.same((await call(alice, 'PUT', `/api/subscription/self/${old}/auto_renew`, { auto_renew: true })).body, { success: false, message: 'Subscription not found' }, 'an ended one cannot be renewed')

  const bobBefore = await subsOf(app, bob.user.id)
  const other = await call(alice, 'PUT', `/api/subscription/self/${theirs}/auto_renew`, { auto_renew: true })
  const missing = await call(alice, 'PUT', '/api/subscription/self/99999/auto_renew', { auto_renew: true })
  t.same(other.body, { success: false, message: 'Subscription not found' }, 'bob\'s subscription is not found')
  t.same([other.status, other.text], [missing.status, missing.text], 'byte for byte the answer for a missing id')
  t.same(await subsOf(app, bob.user.id), bobBefore, 'bob\'s subscription is untouched')
  t.equal((await call(alice, 'PUT', `/api/subscription/self/${mine}/auto_renew`, { auto_renew: false })).body.message, 'Auto-renewal turned off')

  // A period past its end that the billing worker has not marked yet reads expired, among the history.
  await app.db.updateTable('user_subscriptions').set({ end_time: Math.floor(Date.now() / 1000) - 10 }).where('id', '=', mine).execute()
  const lapsed = (await call(alice, 'GET', '/api/subscription/self')).body.data.subscriptions as Array<{ subscription: { id: number, status: string } }>
  t.same(lapsed.map((e) => [e.subscription.id, e.subscription.status]), [[old, 'cancelled'], [mine, 'expired']], 'the lapsed period is history (by end time), shown expired')
  t.same((await call(alice, 'PUT', `/api/subscription/self/${mine}/auto_renew`, { auto_renew: true })).body, { success: false, message: 'Subscription not found' }, 'and cannot be set to renew')
})

t.test('a period ends by the plan\'s duration: calendar months and years in UTC, weeks of 7 days, custom seconds', async (t) => {
  const at = (iso: string) => Date.parse(iso) / 1000
  const end = (unit: 'year' | 'month' | 'week' | 'day' | 'hour' | 'custom', value: number, start: string, custom = 0) =>
    new Date(periodEnd({ duration_unit: unit, duration_value: value, custom_seconds: custom }, at(start)) * 1000).toISOString()
  t.equal(end('month', 1, '2026-01-15T10:20:30Z'), '2026-02-15T10:20:30.000Z', 'one calendar month')
  t.equal(end('month', 1, '2026-01-31T00:00:00Z'), '2026-02-28T00:00:00.000Z', 'past the end of a short month: its last day')
  t.equal(end('month', 1, '2024-01-31T12:00:00Z'), '2024-02-29T12:00:00.000Z', 'a leap February')
  t.equal(end('month', 3, '2026-11-30T00:00:00Z'), '2027-02-28T00:00:00.000Z', 'across a year')
  t.equal(end('month', 12, '2026-03-10T00:00:00Z'), '2027-03-10T00:00:00.000Z')
  t.equal(end('year', 1, '2024-02-29T00:00:00Z'), '2025-02-28T00:00:00.000Z', 'a year from a leap day')
  t.equal(end('year', 2, '2026-06-01T00:00:00Z'), '2028-06-01T00:00:00.000Z')
  t.equal(end('week', 1, '2026-03-01T00:00:00Z'), '2026-03-08T00:00:00.000Z', 'a week is 7 days')
  t.equal(end('week', 3, '2026-03-01T00:00:00Z'), '2026-03-22T00:00:00.000Z')
  t.equal(end('day', 30, '2026-01-01T00:00:00Z'), '2026-01-31T00:00:00.000Z')
  t.equal(end('hour', 5, '2026-01-01T00:00:00Z'), '2026-01-01T05:00:00.000Z')
  t.equal(end('custom', 1, '2026-01-01T00:00:00Z', 90), '2026-01-01T00:01:30.000Z', 'custom: custom_seconds')

  // Through activateSubscription, as the billing worker's renewals call it, on a real database.
  const { app, createPlan } = await setup(t)
  const alice = await userSession(app, 'alice')
  const month = await createPlan({ title: 'Monthly', duration_unit: 'month', duration_value: 1 })
  const week = await createPlan({ title: 'Weekly', duration_unit: 'week', duration_value: 1 })
  const custom = await createPlan({ title: 'Custom', duration_unit: 'custom', custom_seconds: 3600 })
  const start = at('2026-01-31T08:00:00Z')
  const activate = async (planId: number, renewedFrom?: number) => await app.db.transaction().execute(async (trx) =>
    await activateSubscription(trx, { userId: alice.user.id, planId, source: renewedFrom === undefined ? 'admin' : 'renewal', startTime: start, ...(renewedFrom === undefined ? {} : { renewedFrom }) }))
  const m = await activate(month)
  t.equal(m.subscription.end_time, at('2026-02-28T08:00:00Z'), 'month')
  t.equal(m.subscription.start_time, start)
  t.equal(m.items.length, 2, 'items copied')
  t.ok(m.items.every((i) => i.user_id === alice.user.id && i.user_subscription_id === m.subscription.id && i.amount_used === 0))
  t.equal((await activate(week)).subscription.end_time, start + 7 * 86_400, 'week')
  t.equal((await activate(custom)).subscription.end_time, start + 3600, 'custom')
  const renewal = await activate(month, m.subscription.id)
  t.match(renewal.subscription, { source: 'renewal', renewed_from: m.subscription.id })
  await t.rejects(activate(month, m.subscription.id), 'a period is renewed once (unique renewed_from)')
  t.equal((await subsOf(app, alice.user.id)).length, 4, 'the failed renewal left nothing')
})

t.test('completeSubscriptionOrder (what every provider calls): exactly once under concurrency, by a notification or an admin; expiry', async (t) => {
  const { app, createPlan, announced } = await setup(t)
  const alice = await userSession(app, 'alice')
  const plan = await createPlan({ title: 'Pro', price_amount: 5 })
  const deps = { db: app.db, publishChange: app.publishChange }
  const order = async (tradeNo: string) => await insertSubscriptionOrder(app.db, { user_id: alice.user.id, plan_id: plan, price_minor: 500, currency: 'USD', trade_no: tradeNo, payment_method: 'stripe' })
  await order('SUB-T-1')
  const results = await Promise.all(Array.from({ length: 12 }, async (_, i) => await completeSubscriptionOrder(deps, 'SUB-T-1', i % 2 === 0 ? 'notification' : { admin: 'root' }, `cs_${i}`)))
  const winners = results.filter((r) => r !== undefined)
  t.equal(winners.length, 1, 'one call completes the order')
  t.equal((await subsOf(app, alice.user.id)).length, 1, 'one subscription')
  const done = winners[0]!
  t.match(done.order, { trade_no: 'SUB-T-1', status: 'success' })
  t.match(done.subscription, { user_id: alice.user.id, plan_id: plan, source: 'order', order_id: done.order.id, status: 'active' })
  t.equal(done.items.length, 2)
  t.match((await app.db.selectFrom('subscription_orders').select('provider_ref').where('trade_no', '=', 'SUB-T-1').executeTakeFirstOrThrow()).provider_ref, /^cs_\d+$/)
  t.ok(await announced(alice.user.id), 'the gateways reload the user')
  const logs = await app.db.selectFrom('logs').selectAll().where('user_id', '=', alice.user.id).execute()
  t.equal(logs.length, 1, 'one log row')
  t.match(logs[0]!.content, /^bought plan Pro: paid 5\.00 USD by stripe \(order SUB-T-1/)
  t.equal(await completeSubscriptionOrder(deps, 'SUB-T-1', 'notification'), undefined, 'a later call completes nothing')
  t.equal(await completeSubscriptionOrder(deps, 'SUB-UNKNOWN', 'notification'), undefined, 'nor does an unknown order')

  await order('SUB-T-2')
  const byAdmin = await completeSubscriptionOrder(deps, 'SUB-T-2', { admin: 'root' })
  t.ok(byAdmin !== undefined)
  t.match((await app.db.selectFrom('logs').select('content').where('content', 'like', '%SUB-T-2%').executeTakeFirstOrThrow()).content, /completed by admin root/)

  await order('SUB-T-3')
  t.equal((await expireSubscriptionOrder(deps, 'SUB-T-3'))?.status, 'expired')
  t.ok(await announced(alice.user.id), 'an expiry is announced too')
  t.equal(await expireSubscriptionOrder(deps, 'SUB-T-3'), undefined, 'once')
  t.equal(await completeSubscriptionOrder(deps, 'SUB-T-3', 'notification'), undefined, 'an expired order is never completed')
  t.equal(await expireSubscriptionOrder(deps, 'SUB-T-1'), undefined, 'a paid order does not expire')
  t.equal((await subsOf(app, alice.user.id)).length, 2)
})
