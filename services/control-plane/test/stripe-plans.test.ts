import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { build, tokenCaller } from './helpers.js'
import { deliver, SECRET, type StandIn, stripeStandIn, WEBHOOK_SECRET } from './stripe-standin.js'

/*
 * Plans bought through Stripe Billing: a subscription-mode Checkout Session on the plan's Stripe
 * Price, the first payment completing the order once, each paid renewal invoice starting the next
 * period once.
 */

const EN = { 'accept-language': 'en' }

async function setup (t: Test) {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await app.saveOptions({ ServerAddress: 'https://gw.example.com', StripeApiSecret: SECRET, StripeWebhookSecret: WEBHOOK_SECRET, StripeApiBase: standIn.base, StripeCurrency: 'usd' })
  const who = await tokenCaller(app, 'planner')
  const headers = { ...who.headers, ...EN }
  const plan = await app.db.insertInto('subscription_plans').values({ title: 'Pro', price_minor: 1999, currency: 'USD', duration_unit: 'month', stripe_price_id: 'price_pro' }).returningAll().executeTakeFirstOrThrow()
  await app.db.insertInto('subscription_plan_items').values({ plan_id: plan.id, model_name: 'gpt-4o', quota_type: 0, amount_total: 1_000_000 }).execute()
  return { app, standIn, userId: who.id, headers, plan }
}

async function buy (app: FastifyInstance, standIn: StandIn, headers: Record<string, string>, planId: number) {
  const res = await app.inject({ method: 'POST', url: '/api/subscription/stripe/pay', headers, payload: { plan_id: planId } })
  return { body: res.json(), form: standIn.sessions.at(-1), sessionId: standIn.ids.at(-1) }
}

const event = (type: string, object: Record<string, unknown>, id = `evt_${randomBytes(10).toString('hex')}`) =>
  JSON.stringify({ id, object: 'event', type, created: Math.floor(Date.now() / 1000), livemode: false, data: { object } })

const completed = (sessionId: string, tradeNo: string, amount: number, subscription = 'sub_standin_1') => ({
  id: sessionId, object: 'checkout.session', mode: 'subscription', client_reference_id: tradeNo, metadata: { trade_no: tradeNo },
  payment_status: 'paid', status: 'complete', amount_subtotal: amount, amount_total: amount, currency: 'usd', subscription
})

const invoice = (id: string, tradeNo: string, reason = 'subscription_cycle', subscription = 'sub_standin_1') => ({
  id, object: 'invoice', billing_reason: reason, currency: 'usd', amount_paid: 1999, status: 'paid',
  parent: { type: 'subscription_details', subscription_details: { metadata: { trade_no: tradeNo }, subscription } }
})

const periods = async (app: FastifyInstance, userId: number) =>
  await app.db.selectFrom('user_subscriptions').select(['id', 'status', 'source', 'renewed_from', 'auto_renew', 'start_time', 'end_time']).where('user_id', '=', userId).orderBy('id').execute()

t.test('a plan bought by card: one period per paid session and one more per paid renewal invoice, whatever the deliveries', async (t) => {
  const { app, standIn, userId, headers, plan } = await setup(t)
  const bought = await buy(app, standIn, headers, plan.id)
  t.equal(bought.body.success, true, bought.body.message)
  t.match(bought.body.data.pay_link, /^http:\/\/127\.0\.0\.1:\d+\/pay\/cs_test_/)
  const form = bought.form!
  t.equal(form.get('mode'), 'subscription')
  t.equal(form.get('line_items[0][price]'), 'price_pro')
  const tradeNo = form.get('client_reference_id')!
  t.match(tradeNo, /^SUB\d+NO[0-9a-f]{32}$/)
  t.equal(form.get('subscription_data[metadata][trade_no]'), tradeNo, 'every invoice will name the order')
  t.equal(form.get('success_url'), 'https://gw.example.com/plans?stripe=success')

  t.equal(await deliver(app, event('checkout.session.completed', completed(bought.sessionId!, tradeNo, 1500))), 200, 'a wrong sum is acknowledged')
  t.same(await periods(app, userId), [], 'and starts nothing')

  const codes = await Promise.all(Array.from({ length: 6 }, async () => await deliver(app, event('checkout.session.completed', completed(bought.sessionId!, tradeNo, 1999)))))
  t.same(codes, Array(6).fill(200))
  const first = await periods(app, userId)
  t.equal(first.length, 1, 'six deliveries of the paid session start one period')
  t.match(first[0], { status: 'active', source: 'order', auto_renew: false })
  const renew = await app.inject({ method: 'PUT', url: `/api/subscription/self/${first[0]!.id}/auto_renew`, headers, payload: { auto_renew: true } })
  t.same(renew.json(), { success: false, message: 'This subscription is renewed by Stripe each period; cancel or change it there' }, 'no wallet renewal on top of Stripe\'s')
  const order = await app.db.selectFrom('subscription_orders').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()
  t.match(order, { status: 'success', payment_method: 'stripe', provider_ref: 'sub_standin_1', price_minor: 1999 })

  t.equal(await deliver(app, event('invoice.paid', invoice('in_first', tradeNo, 'subscription_create'))), 200)
  t.equal((await periods(app, userId)).length, 1, 'the first invoice is the purchase itself')
  const renewal = event('invoice.paid', invoice('in_cycle_1', tradeNo))
  const again = await Promise.all([deliver(app, renewal), deliver(app, renewal), deliver(app, event('invoice.paid', invoice('in_cycle_1', tradeNo)))])
  t.same(again, [200, 200, 200])
  const after = await periods(app, userId)
  t.equal(after.length, 2, 'one renewal for the invoice, however it is delivered')
  t.match(after[1], { status: 'active', source: 'renewal', renewed_from: after[0]!.id, start_time: after[0]!.end_time })
  t.equal(await deliver(app, event('invoice.paid', invoice('in_cycle_2', tradeNo))), 200)
  const third = await periods(app, userId)
  t.equal(third.length, 3)
  t.equal(third[2]!.renewed_from, third[1]!.id, 'the next invoice continues the latest period')
  t.equal(await deliver(app, event('invoice.paid', invoice('in_other', tradeNo, 'subscription_cycle', 'sub_someone_else'))), 200)
  t.equal((await periods(app, userId)).length, 3, 'an invoice of another Stripe subscription renews nothing')
  const forged = event('invoice.paid', invoice('in_forged', tradeNo))
  t.equal(await deliver(app, forged, { secret: 'whsec_wrong' }), 400, 'a forged invoice is refused')
  t.equal((await periods(app, userId)).length, 3)
})

t.test('a plan without a Stripe price, a disabled plan, and Stripe not configured are refused in the caller\'s language', async (t) => {
  const { app, standIn, headers, plan } = await setup(t)
  const plain = await app.db.insertInto('subscription_plans').values({ title: 'Basic', price_minor: 500, duration_unit: 'month' }).returningAll().executeTakeFirstOrThrow()
  t.same((await buy(app, standIn, headers, plain.id)).body, { success: false, message: 'This plan cannot be paid by card (it has no Stripe price)' })
  await app.db.updateTable('subscription_plans').set({ enabled: false }).where('id', '=', plan.id).execute()
  t.same((await buy(app, standIn, headers, plan.id)).body, { success: false, message: 'This subscription plan is not available' })
  const zh = await app.inject({ method: 'POST', url: '/api/subscription/stripe/pay', headers: { ...headers, 'accept-language': 'zh-CN' }, payload: { plan_id: plan.id } })
  t.equal(zh.json().message, '该订阅套餐不可购买')
  await app.saveOptions({ StripeApiSecret: '' })
  t.same((await buy(app, standIn, headers, plain.id)).body, { success: false, message: 'Card payment (Stripe) is not enabled by the administrator' })
  t.equal(standIn.sessions.length, 0, 'no session was created')
})

t.test('a refunded or lost-disputed plan payment marks its order refunded once and, by the option, ends its subscription', async (t) => {
  const { app, standIn, userId, headers, plan } = await setup(t)
  const start = async (subscription: string) => {
    const bought = await buy(app, standIn, headers, plan.id)
    const tradeNo = bought.form!.get('client_reference_id')!
    t.equal(await deliver(app, event('checkout.session.completed', completed(bought.sessionId!, tradeNo, 1999, subscription))), 200)
    return tradeNo
  }
  const charge = (pi: string, refunded = true) => ({ id: `ch_${pi}`, object: 'charge', payment_intent: pi, refunded, amount: 1999, amount_refunded: refunded ? 1999 : 500, currency: 'usd' })
  const orderStatus = async (tradeNo: string) => (await app.db.selectFrom('subscription_orders').select('status').where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()).status
  const logs = async () => await app.db.selectFrom('logs').select('content').where('user_id', '=', userId).where('content', 'like', 'stripe %').orderBy('id').execute()

  // A renewal invoice refunded in full: the order and every period of its chain end.
  const first = await start('sub_a')
  t.equal(await deliver(app, event('invoice.paid', invoice('in_a_cycle', first, 'subscription_cycle', 'sub_a'))), 200)
  t.equal((await periods(app, userId)).filter((p) => p.status === 'active').length, 2, 'a purchase and its renewal')
  standIn.invoicesPaidBy.set('pi_a_cycle', invoice('in_a_cycle', first, 'subscription_cycle', 'sub_a'))

  t.equal(await deliver(app, event('charge.refunded', charge('pi_a_cycle', false))), 200, 'a partial refund is acknowledged')
  t.equal(await orderStatus(first), 'success', 'and changes nothing')
  const refund = event('charge.refunded', charge('pi_a_cycle'))
  const codes = await Promise.all([deliver(app, refund), deliver(app, refund), deliver(app, event('charge.refunded', charge('pi_a_cycle')))])
  t.same(codes, [200, 200, 200])
  t.equal(await orderStatus(first), 'refunded')
  t.same((await periods(app, userId)).map((p) => p.status), ['cancelled', 'cancelled'], 'the periods it paid for ended now')
  t.match(await logs(), [{ content: `stripe refund: plan order ${first} (19.99 USD) refunded, its subscription ended` }], 'logged once')
  const lookup = standIn.lookups.at(-1)!
  t.equal(lookup.get('payment[payment_intent]'), 'pi_a_cycle', 'Stripe was asked which invoice the payment paid')

  // A lost dispute with the option off: the order is marked, the subscription kept.
  await app.saveOptions({ StripeRefundDeductsQuota: 'false' })
  const second = await start('sub_b')
  standIn.invoicesPaidBy.set('pi_b_first', invoice('in_b_first', second, 'subscription_create', 'sub_b'))
  const dispute = (status: string) => ({ id: `dp_${status}`, object: 'dispute', payment_intent: 'pi_b_first', status, amount: 1999, currency: 'usd' })
  t.equal(await deliver(app, event('charge.dispute.closed', dispute('won'))), 200)
  t.equal(await orderStatus(second), 'success', 'a won dispute changes nothing')
  t.equal(await deliver(app, event('charge.dispute.closed', dispute('lost'))), 200)
  t.equal(await orderStatus(second), 'refunded')
  t.equal((await periods(app, userId)).at(-1)?.status, 'active', 'the option off keeps the subscription')
  t.match((await logs()).at(-1), { content: `stripe lost dispute: plan order ${second} (19.99 USD) marked refunded, subscription kept` })

  // An invoice of another Stripe subscription naming this order, and a payment Stripe knows nothing of.
  await app.saveOptions({ StripeRefundDeductsQuota: 'true' })
  const third = await start('sub_c')
  standIn.invoicesPaidBy.set('pi_forged', invoice('in_x', third, 'subscription_cycle', 'sub_someone_else'))
  t.equal(await deliver(app, event('charge.refunded', charge('pi_forged'))), 200)
  t.equal(await deliver(app, event('charge.refunded', charge('pi_nobody'))), 200)
  t.equal(await orderStatus(third), 'success', 'neither touches the order')
  t.equal((await periods(app, userId)).at(-1)?.status, 'active')

  // Stripe unreachable: the event is answered with an error and handled again on its retry.
  standIn.invoicesPaidBy.set('pi_c_first', invoice('in_c_first', third, 'subscription_create', 'sub_c'))
  await app.saveOptions({ StripeApiSecret: 'sk_test_revoked' })
  const later = event('charge.refunded', charge('pi_c_first'))
  t.not(await deliver(app, later), 200, 'an error Stripe retries')
  t.equal(await orderStatus(third), 'success')
  await app.saveOptions({ StripeApiSecret: SECRET })
  t.equal(await deliver(app, later), 200, 'the retry of the same event is handled')
  t.equal(await orderStatus(third), 'refunded')
})
