import { randomBytes } from 'node:crypto'
import { LOG_TYPE } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { formatMinor, parseMinor } from '../src/services/stripe.js'
import { build, buildLogged, login, postAs, ROOT, tokenCaller, type TokenCaller } from './helpers.js'
import { deliver, SECRET, type StandIn, stripeStandIn, WEBHOOK_SECRET } from './stripe-standin.js'

const EN = { 'accept-language': 'en' }

async function configure (app: FastifyInstance, standIn: StandIn, more: Record<string, string> = {}): Promise<void> {
  await app.saveOptions({
    ServerAddress: 'https://gw.example.com',
    StripeApiSecret: SECRET,
    StripeWebhookSecret: WEBHOOK_SECRET,
    StripeUnitPrice: '7.3',
    StripeMinTopUp: '2',
    StripeCurrency: 'usd',
    StripeApiBase: standIn.base,
    TopupGroupRatio: '{"vip":0.8}',
    ...more
  })
}

/** Pays `amount` by card: the order's trade number and the session the stand-in created. */
async function pay (app: FastifyInstance, standIn: StandIn, who: TokenCaller, amount: number): Promise<{ tradeNo: string, sessionId: string, form: URLSearchParams }> {
  const res = await postAs(app, who, '/api/user/stripe/pay', { amount, payment_method: 'stripe' })
  if (res.body.success !== true) throw new Error(`pay failed: ${res.body.message}`)
  const form = standIn.sessions.at(-1)!
  return { tradeNo: form.get('client_reference_id')!, sessionId: standIn.ids.at(-1)!, form }
}

interface SessionFacts { sessionId: string, tradeNo: string, amount: number, currency?: string, paymentIntent?: string, paymentStatus?: string }

function sessionEvent (facts: SessionFacts, id = `evt_${randomBytes(10).toString('hex')}`, type = 'checkout.session.completed'): string {
  return JSON.stringify({
    id,
    object: 'event',
    type,
    api_version: '2025-01-27',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: facts.sessionId,
        object: 'checkout.session',
        mode: 'payment',
        client_reference_id: facts.tradeNo,
        metadata: { trade_no: facts.tradeNo },
        payment_status: facts.paymentStatus ?? 'paid',
        status: 'complete',
        amount_subtotal: facts.amount,
        amount_total: facts.amount,
        currency: facts.currency ?? 'usd',
        payment_intent: facts.paymentIntent ?? 'pi_standin_1'
      }
    }
  })
}

function chargeRefunded (paymentIntent: string, amount: number, id = `evt_${randomBytes(10).toString('hex')}`, refunded = true): string {
  return JSON.stringify({
    id,
    object: 'event',
    type: 'charge.refunded',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `ch_${randomBytes(6).toString('hex')}`, object: 'charge', amount, amount_refunded: refunded ? amount : 1, refunded, payment_intent: paymentIntent, currency: 'usd' } }
  })
}

function disputeClosed (paymentIntent: string, status: string): string {
  return JSON.stringify({
    id: `evt_${randomBytes(10).toString('hex')}`,
    object: 'event',
    type: 'charge.dispute.closed',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `dp_${randomBytes(6).toString('hex')}`, object: 'dispute', status, payment_intent: paymentIntent, charge: 'ch_x', amount: 1 } }
  })
}

const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const order = async (app: FastifyInstance, tradeNo: string) =>
  await app.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()
const topupLogs = async (app: FastifyInstance, userId: number) =>
  await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.topup).where('user_id', '=', userId).orderBy('id').execute()
const refusals = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  .filter((l) => l['msg'] === 'stripe webhook refused' || l['msg'] === 'stripe webhook event refused')

t.test('sums in minor units are exact', async (t) => {
  t.equal(formatMinor(2190n, 2), '21.90')
  t.equal(formatMinor(5n, 2), '0.05')
  t.equal(formatMinor(500n, 0), '500')
  t.equal(parseMinor('21.90', 2), 2190n)
  t.equal(parseMinor('21.9', 2), 2190n)
  t.equal(parseMinor('500.00', 0), 500n, 'numeric(14, 2) gives whole sums two decimals')
  t.equal(parseMinor('500.50', 0), undefined)
  t.equal(parseMinor('x', 2), undefined)
})

t.test('card top-up is refused until the administrator sets the Stripe keys, and the status says so', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  const u = await tokenCaller(app, 'alice')
  const status = async () => (await app.inject({ method: 'GET', url: '/api/status' })).json().data
  t.equal((await status()).enable_stripe_topup, false)
  t.same((await postAs(app, u, '/api/user/stripe/amount', { amount: 5 })).body, { success: false, message: 'Card payment (Stripe) is not enabled by the administrator' })
  await configure(app, standIn, { StripeWebhookSecret: '' })
  t.equal((await postAs(app, u, '/api/user/stripe/pay', { amount: 5, payment_method: 'stripe' })).body.success, false, 'the webhook secret is missing')
  await configure(app, standIn)
  t.match(await status(), { enable_stripe_topup: true, stripe_min_topup: 2, stripe_unit_price: 7.3, stripe_currency: 'usd' })
  t.equal(standIn.sessions.length, 0)
  t.equal((await app.inject({ method: 'POST', url: '/api/user/stripe/amount', payload: { amount: 5 } })).statusCode, 401, 'signed-in users only')
})

t.test('the quote is amount x StripeUnitPrice x the group ratio, above StripeMinTopUp', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn)
  const plain = await tokenCaller(app, 'plain')
  const vip = await tokenCaller(app, 'vipuser', 'vip')
  t.same((await postAs(app, plain, '/api/user/stripe/amount', { amount: 3 })).body, { success: true, message: '', data: '21.90' })
  t.equal((await postAs(app, vip, '/api/user/stripe/amount', { amount: 3 })).body.data, '17.52')
  t.same((await postAs(app, plain, '/api/user/stripe/amount', { amount: 1 })).body, { success: false, message: 'The top-up amount cannot be less than 2' })
  t.equal((await postAs(app, plain, '/api/user/stripe/amount', { amount: 2.5 })).status, 400)
  await app.saveOptions({ StripeUnitPrice: '1.005', StripeCurrency: 'jpy' })
  t.equal((await postAs(app, plain, '/api/user/stripe/amount', { amount: 3 })).body.data, '3', 'zero-decimal currencies round to whole units')
})

t.test('paying creates a pending order and a Checkout Session with the sum in minor units', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn, { StripePromotionCodesEnabled: 'true' })
  const vip = await tokenCaller(app, 'vipuser', 'vip')
  const res = await postAs(app, vip, '/api/user/stripe/pay', { amount: 3, payment_method: 'stripe' })
  t.equal(res.body.success, true)
  const sessionId = standIn.ids[0]!
  t.same(res.body.data, { pay_link: `${standIn.base}/pay/${sessionId}` })
  const form = standIn.sessions[0]!
  const tradeNo = form.get('client_reference_id')!
  t.match(tradeNo, new RegExp(`^USR${vip.id}NO[0-9a-f]{32}$`))
  t.equal(form.get('mode'), 'payment')
  t.equal(form.get('metadata[trade_no]'), tradeNo)
  t.equal(form.get('line_items[0][price_data][currency]'), 'usd')
  t.equal(form.get('line_items[0][price_data][unit_amount]'), '1752', '3 x 7.3 x 0.8 = 17.52 in cents')
  t.equal(form.get('line_items[0][quantity]'), '1')
  t.equal(form.get('success_url'), 'https://gw.example.com/topup?stripe=success')
  t.equal(form.get('cancel_url'), 'https://gw.example.com/topup?stripe=cancel')
  t.equal(form.get('allow_promotion_codes'), 'true')
  t.match(await order(app, tradeNo), { user_id: vip.id, amount: 3, money: '17.52', quota: 1_500_000, status: 'pending', payment_method: 'stripe', currency: 'usd', stripe_session_id: sessionId })

  await app.saveOptions({ StripePriceId: 'price_123', StripePromotionCodesEnabled: 'false' })
  const second = await pay(app, standIn, vip, 4)
  t.equal(second.form.get('line_items[0][price]'), 'price_123')
  t.equal(second.form.get('line_items[0][quantity]'), '4', 'a Stripe Price sells the units as the quantity')
  t.equal(second.form.get('allow_promotion_codes'), null)
  t.equal((await order(app, second.tradeNo)).money, '29.20', 'no group ratio on a fixed Price')
  t.equal(await quotaOf(app, vip.id), 0, 'nothing is credited before the payment')
})

t.test('a wrong secret key fails the pay call with a clear message and leaves no session', async (t) => {
  const { app, lines } = await buildLogged(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn, { StripeApiSecret: 'sk_test_wrong_key_zzz' })
  const u = await tokenCaller(app, 'alice')
  const res = await postAs(app, u, '/api/user/stripe/pay', { amount: 3, payment_method: 'stripe' })
  t.same(res.body, { success: false, message: 'Stripe refused the secret key; ask the administrator to check the Stripe settings' })
  t.equal(standIn.sessions.length, 0)
  t.notOk(lines.some((l) => l.includes('sk_test_wrong_key_zzz')), 'the key never reaches the log')
})

t.test('a paid session credits once: Postgres, the cached balance and one log row', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'payer')
  await app.db.updateTable('users').set({ quota: 1000 }).where('id', '=', u.id).execute()
  await app.quota.setBalance('user', u.id, 400)
  const { tradeNo, sessionId } = await pay(app, standIn, u, 3)
  const event = sessionEvent({ sessionId, tradeNo, amount: 2190, paymentIntent: 'pi_paid_1' })
  t.equal(await deliver(app, event), 200)
  t.equal(await quotaOf(app, u.id), 1000 + 1_500_000)
  t.equal(await app.quota.balance('user', u.id), 400 + 1_500_000)
  t.match(await order(app, tradeNo), { status: 'success', stripe_payment_intent: 'pi_paid_1' })
  const logs = await topupLogs(app, u.id)
  t.equal(logs.length, 1)
  t.match(logs[0]!.content, /21\.90 by stripe/)

  t.equal(await deliver(app, event), 200, 'a replay of the same event is acknowledged')
  t.equal(await deliver(app, sessionEvent({ sessionId, tradeNo, amount: 2190, paymentIntent: 'pi_paid_1' }, undefined, 'checkout.session.async_payment_succeeded')), 200)
  t.equal(await quotaOf(app, u.id), 1000 + 1_500_000, 'but credits nothing more')
  t.equal(await app.quota.balance('user', u.id), 400 + 1_500_000)
  t.equal((await topupLogs(app, u.id)).length, 1)
  t.equal((await app.db.selectFrom('stripe_events').select('id').execute()).length, 2, 'each event id recorded once')
})

t.test('10 concurrent deliveries of 3 events for one session credit once', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'racer')
  await app.quota.setBalance('user', u.id, 0)
  const { tradeNo, sessionId } = await pay(app, standIn, u, 2)
  const facts = { sessionId, tradeNo, amount: 1460 }
  const events = [sessionEvent(facts), sessionEvent(facts), sessionEvent(facts, undefined, 'checkout.session.async_payment_succeeded')]
  const codes = await Promise.all(Array.from({ length: 10 }, async (_, i) => await deliver(app, events[i % 3]!)))
  t.same(codes, Array(10).fill(200))
  t.equal(await quotaOf(app, u.id), 1_000_000)
  t.equal(await app.quota.balance('user', u.id), 1_000_000)
  t.equal((await topupLogs(app, u.id)).length, 1)
})

t.test('forged, wrong-secret and stale deliveries, wrong sums and currencies and unknown orders credit nothing and are logged', async (t) => {
  const { app, lines } = await buildLogged(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'target')
  await app.quota.setBalance('user', u.id, 0)
  const { tradeNo, sessionId } = await pay(app, standIn, u, 2)
  const genuine = sessionEvent({ sessionId, tradeNo, amount: 1460 })

  t.equal(await deliver(app, genuine, { header: `t=${Math.floor(Date.now() / 1000)},v1=${'ab'.repeat(32)}` }), 400, 'forged signature')
  t.equal(await deliver(app, genuine, { header: '' }), 400, 'no signature')
  t.equal(await deliver(app, genuine, { secret: 'whsec_someone_else' }), 400, 'signed with another secret')
  t.equal(await deliver(app, genuine, { timestamp: Math.floor(Date.now() / 1000) - 3600 }), 400, 'an hour old: past the tolerance')
  const signatureRefusals = refusals(lines).filter((l) => l['reason'] === 'bad signature')
  t.equal(signatureRefusals.length, 4)
  t.match(String(signatureRefusals[3]!['detail']), /[Tt]olerance/)

  t.equal(await deliver(app, sessionEvent({ sessionId, tradeNo, amount: 1459 })), 200, 'a wrong sum is acknowledged (Stripe must not retry it) but refused')
  t.equal(await deliver(app, sessionEvent({ sessionId, tradeNo, amount: 1460, currency: 'eur' })), 200)
  t.equal(await deliver(app, sessionEvent({ sessionId, tradeNo: 'USR1NO' + 'f'.repeat(32), amount: 1460 })), 200)
  t.equal(await deliver(app, sessionEvent({ sessionId, tradeNo, amount: 1460, paymentStatus: 'unpaid' })), 200)
  const reasons = refusals(lines).map((l) => l['reason'])
  for (const reason of ['sum differs', 'currency differs', 'unknown order', 'not paid']) t.ok(reasons.includes(reason), reason)

  t.equal(await quotaOf(app, u.id), 0, 'nothing credited')
  t.equal(await app.quota.balance('user', u.id), 0)
  t.equal((await order(app, tradeNo)).status, 'pending')
  t.notOk(lines.some((l) => l.includes(WEBHOOK_SECRET) || l.includes(SECRET)), 'no secret in the log')

  t.equal(await deliver(app, genuine), 200, 'the genuine event still credits')
  t.equal(await quotaOf(app, u.id), 1_000_000)
})

t.test('a refund or a lost dispute takes the credit back once', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'refunded')
  await app.quota.setBalance('user', u.id, 0)
  const { tradeNo, sessionId } = await pay(app, standIn, u, 2)
  t.equal(await deliver(app, sessionEvent({ sessionId, tradeNo, amount: 1460, paymentIntent: 'pi_r1' })), 200)
  t.equal(await quotaOf(app, u.id), 1_000_000)

  t.equal(await deliver(app, chargeRefunded('pi_r1', 1460, undefined, false)), 200, 'a partial refund')
  t.equal(await quotaOf(app, u.id), 1_000_000, 'keeps the credit')
  const refund = chargeRefunded('pi_r1', 1460)
  const codes = await Promise.all([deliver(app, refund), deliver(app, refund), deliver(app, chargeRefunded('pi_r1', 1460)), deliver(app, disputeClosed('pi_r1', 'lost'))])
  t.same(codes, [200, 200, 200, 200])
  t.equal(await quotaOf(app, u.id), 0, 'deducted once')
  t.equal(await app.quota.balance('user', u.id), 0)
  t.match(await order(app, tradeNo), { status: 'refunded' })
  t.ok((await order(app, tradeNo)).refunded_at > 0)
  const logs = await topupLogs(app, u.id)
  t.equal(logs.length, 2)
  t.match(logs[1]!.content, /stripe refund|stripe lost dispute/)

  // With the option off, a refund is recorded and the quota kept.
  await app.saveOptions({ StripeRefundDeductsQuota: 'false' })
  const second = await pay(app, standIn, u, 2)
  t.equal(await deliver(app, sessionEvent({ sessionId: second.sessionId, tradeNo: second.tradeNo, amount: 1460, paymentIntent: 'pi_r2' })), 200)
  t.equal(await deliver(app, disputeClosed('pi_r2', 'won')), 200)
  t.equal((await order(app, second.tradeNo)).status, 'success', 'a won dispute changes nothing')
  t.equal(await deliver(app, chargeRefunded('pi_r2', 1460)), 200)
  t.equal((await order(app, second.tradeNo)).status, 'refunded')
  t.equal(await quotaOf(app, u.id), 1_000_000)
})

t.test('StripeApiBase accepts loopback addresses and refuses cloud metadata ones', async (t) => {
  const app = await build(t)
  const standIn = await stripeStandIn(t)
  await app.saveOptions({ ServerAddress: 'https://gw.example.com' })
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (key: string, value: string) => (await app.inject({ method: 'PUT', url: '/api/option/', headers: { ...root.headers, ...EN }, payload: { key, value } })).json()
  t.equal((await put('StripeApiBase', standIn.base)).success, true)
  const refused = await put('StripeApiBase', 'http://169.254.169.254/latest')
  t.equal(refused.success, false)
  t.match(refused.message, /metadata/)
  t.equal((await put('StripeApiBase', 'ftp://example.com')).success, false)
  t.equal((await put('StripeCurrency', 'EUR')).success, true)
  t.equal((await put('StripeCurrency', 'euro')).success, false)

  const listed = (await app.inject({ method: 'GET', url: '/api/option/', headers: root.headers })).json().data as Array<{ key: string, value: string, secret?: boolean }>
  await app.saveOptions({ StripeApiSecret: SECRET, StripeWebhookSecret: WEBHOOK_SECRET })
  const again = (await app.inject({ method: 'GET', url: '/api/option/', headers: root.headers })).json().data as Array<{ key: string, value: string, secret?: boolean, is_set?: boolean }>
  t.match(again.find((o) => o.key === 'StripeApiSecret'), { value: '', secret: true, is_set: true }, 'the secret key is write-only')
  t.match(again.find((o) => o.key === 'StripeWebhookSecret'), { value: '', secret: true, is_set: true })
  t.ok(listed.some((o) => o.key === 'StripeRefundDeductsQuota' && o.value === 'true'))

  // Saved behind the console's back, the metadata address is still refused when paying.
  await configure(app, standIn, { StripeApiBase: 'http://169.254.169.254' })
  const u = await tokenCaller(app, 'alice')
  const res = await postAs(app, u, '/api/user/stripe/pay', { amount: 3, payment_method: 'stripe' })
  t.equal(res.body.success, false)
  t.match(res.body.message, /metadata/)
})
