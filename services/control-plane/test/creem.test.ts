import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OptionValues } from '@modelgate/contracts'
import { LOG_TYPE } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { creemApiBase, readCreemProducts, verifyCreemSignature } from '../src/services/creem.js'
import { build, buildLogged, login, postAs, ROOT, tokenCaller, type TokenCaller, verifySession } from './helpers.js'

const EN = { 'accept-language': 'en' }
const API_KEY = 'creem_test_standin_0123456789abcdef'
const WEBHOOK_SECRET = 'whsec_creem_standin_fedcba9876543210'
const PRODUCTS = [
  { name: 'Starter', productId: 'prod_starter', price: 4.99, currency: 'USD', quota: 2_500_000 },
  { name: 'Pro', productId: 'prod_pro', price: 20, currency: 'EUR', quota: 10_000_000 }
]

/** A stand-in for Creem's API on 127.0.0.1: POST /v1/checkouts in Creem's shapes, the key checked. */
interface StandIn {
  base: string
  /** JSON bodies of the checkouts created. */
  checkouts: Array<Record<string, unknown>>
  ids: string[]
  /** Every x-api-key seen, accepted or not. */
  keys: string[]
}

async function creemStandIn (t: Test): Promise<StandIn> {
  const state: StandIn = { base: '', checkouts: [], ids: [], keys: [] }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.method === 'GET' && req.url?.startsWith('/checkout/') === true) {
        res.setHeader('content-type', 'text/html')
        res.end('<html><body><h1>Stand-in Creem Checkout</h1></body></html>')
        return
      }
      if (req.method !== 'POST' || req.url !== '/v1/checkouts') {
        res.statusCode = 404
        res.end(JSON.stringify({ status: 404, error: 'Not Found', message: [`Cannot ${req.method} ${req.url}`] }))
        return
      }
      const key = req.headers['x-api-key']
      state.keys.push(String(key))
      if (key !== API_KEY) {
        res.statusCode = 403
        res.end(JSON.stringify({ trace_id: 'tr_1', status: 403, error: 'Forbidden', message: ['Invalid API key'] }))
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      if (body['product_id'] === 'prod_gone') {
        res.statusCode = 404
        res.end(JSON.stringify({ trace_id: 'tr_2', status: 404, error: 'Not Found', message: ['Product not found'] }))
        return
      }
      const id = `ch_${randomBytes(12).toString('hex')}`
      state.checkouts.push(body)
      state.ids.push(id)
      res.end(JSON.stringify({ id, object: 'checkout', mode: 'test', status: 'pending', request_id: body['request_id'], product: body['product_id'], checkout_url: `${state.base}/checkout/${id}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => new Promise<void>((resolve) => server.close(() => { resolve() })))
  return state
}

async function configure (app: FastifyInstance, standIn: StandIn, more: Record<string, string> = {}): Promise<void> {
  await app.saveOptions({
    ServerAddress: 'https://gw.example.com',
    CreemApiKey: API_KEY,
    CreemWebhookSecret: WEBHOOK_SECRET,
    CreemProducts: JSON.stringify(PRODUCTS),
    CreemApiBase: standIn.base,
    ...more
  })
}

/** Buys `productId`: the order's trade number and the checkout the stand-in created. */
async function pay (app: FastifyInstance, standIn: StandIn, who: TokenCaller, productId = 'prod_starter'): Promise<{ tradeNo: string, checkoutId: string }> {
  const res = await postAs(app, who, '/api/user/creem/pay', { product_id: productId, payment_method: 'creem' })
  if (res.body.success !== true) throw new Error(`pay failed: ${res.body.message}`)
  return { tradeNo: String(standIn.checkouts.at(-1)!['request_id']), checkoutId: standIn.ids.at(-1)! }
}

interface CheckoutFacts { checkoutId: string, tradeNo: string, amount: number, currency?: string, orderId?: string, status?: string, subTotal?: number }

function checkoutCompleted (f: CheckoutFacts, id = `evt_${randomBytes(10).toString('hex')}`): string {
  return JSON.stringify({
    id,
    eventType: 'checkout.completed',
    created_at: Date.now(),
    object: {
      id: f.checkoutId,
      object: 'checkout',
      request_id: f.tradeNo,
      status: 'completed',
      mode: 'test',
      order: {
        id: f.orderId ?? 'ord_standin_1',
        object: 'order',
        amount: f.amount,
        sub_total: f.subTotal ?? f.amount,
        currency: f.currency ?? 'USD',
        status: f.status ?? 'paid',
        type: 'onetime'
      },
      product: { id: 'prod_starter', object: 'product', name: 'Starter' },
      customer: { id: 'cust_1', object: 'customer', email: 'payer@example.com' },
      metadata: { trade_no: f.tradeNo }
    }
  })
}

function refundCreated (orderId: string, refundAmount: number, id = `evt_${randomBytes(10).toString('hex')}`): string {
  return JSON.stringify({
    id,
    eventType: 'refund.created',
    created_at: Date.now(),
    object: {
      id: `ref_${randomBytes(6).toString('hex')}`,
      object: 'refund',
      status: 'succeeded',
      refund_amount: refundAmount,
      refund_currency: 'USD',
      reason: 'requested_by_customer',
      order: { id: orderId, object: 'order' },
      checkout: { id: 'ch_x', object: 'checkout' }
    }
  })
}

const sign = (payload: string, secret = WEBHOOK_SECRET): string => createHmac('sha256', secret).update(payload).digest('hex')

/** Delivers `payload` as Creem does: `creem-signature` is the hex HMAC-SHA256 of the body. */
async function deliver (app: FastifyInstance, payload: string, opts: { secret?: string, signature?: string | null } = {}): Promise<number> {
  const signature = opts.signature === undefined ? sign(payload, opts.secret) : opts.signature
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (signature !== null) headers['creem-signature'] = signature
  const res = await app.inject({ method: 'POST', url: '/api/creem/webhook', headers, payload })
  return res.statusCode
}

const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const order = async (app: FastifyInstance, tradeNo: string) =>
  await app.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()
const topupLogs = async (app: FastifyInstance, userId: number) =>
  await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.topup).where('user_id', '=', userId).orderBy('id').execute()
const refusals = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  .filter((l) => l['msg'] === 'creem webhook refused' || l['msg'] === 'creem webhook event refused')

t.test('CreemProducts is read strictly, with clear problems', async (t) => {
  const read = readCreemProducts([{ name: ' Starter ', productId: 'prod_1', price: '4.99', currency: 'usd', quota: 100 }])
  t.same(read, { products: [{ name: 'Starter', productId: 'prod_1', price: 4.99, currency: 'USD', quota: 100 }] })
  const problem = (value: unknown) => { const r = readCreemProducts(value); return 'problem' in r ? r.problem : '' }
  t.match(problem({}), /JSON array/)
  t.match(problem([{ productId: 'prod_1', price: 1, currency: 'USD', quota: 1 }]), /product 1: name/)
  t.match(problem([{ name: 'a', productId: 'prod 1', price: 1, currency: 'USD', quota: 1 }]), /productId/)
  t.match(problem([{ name: 'a', productId: 'p', price: 1.234, currency: 'USD', quota: 1 }]), /price .* at most 2 decimals/)
  t.match(problem([{ name: 'a', productId: 'p', price: 0, currency: 'USD', quota: 1 }]), /price/)
  t.match(problem([{ name: 'a', productId: 'p', price: 1, currency: 'dollars', quota: 1 }]), /currency/)
  t.match(problem([{ name: 'a', productId: 'p', price: 1, currency: 'USD', quota: 1.5 }]), /quota/)
  t.match(problem([{ name: 'a', productId: 'p', price: 1, currency: 'USD', quota: 1 }, { name: 'b', productId: 'p', price: 2, currency: 'USD', quota: 2 }]), /product 2: productId p appears twice/)
  t.equal(creemApiBase(new OptionValues(new Map())), 'https://api.creem.io', 'live by default')
  t.equal(creemApiBase(new OptionValues(new Map([['CreemTestMode', 'true']]))), 'https://test-api.creem.io', 'test mode: the sandbox')
  t.equal(creemApiBase(new OptionValues(new Map([['CreemTestMode', 'true'], ['CreemApiBase', 'http://127.0.0.1:9']]))), 'http://127.0.0.1:9', 'CreemApiBase wins')
  const payload = '{"id":"evt_1"}'
  t.ok(verifyCreemSignature(Buffer.from(payload), sign(payload), WEBHOOK_SECRET))
  t.ok(verifyCreemSignature(Buffer.from(payload), sign(payload).toUpperCase(), WEBHOOK_SECRET), 'hex in either case')
  t.notOk(verifyCreemSignature(Buffer.from(payload + ' '), sign(payload), WEBHOOK_SECRET))
  t.notOk(verifyCreemSignature(Buffer.from(payload), sign(payload).slice(0, 62), WEBHOOK_SECRET))
  t.notOk(verifyCreemSignature(Buffer.from(payload), undefined, WEBHOOK_SECRET))
})

t.test('Creem top-up is refused until configured, and /api/status says so without secrets', async (t) => {
  const app = await build(t)
  const standIn = await creemStandIn(t)
  const u = await tokenCaller(app, 'alice')
  const status = async () => (await app.inject({ method: 'GET', url: '/api/status' })).json().data
  t.match(await status(), { enable_creem_topup: false, creem_products: [] })
  t.same((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })).body, { success: false, message: 'Creem payment is not enabled by the administrator' })
  await configure(app, standIn, { CreemWebhookSecret: '' })
  t.equal((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })).body.success, false, 'the webhook secret is missing')
  t.equal((await status()).enable_creem_topup, false)
  await configure(app, standIn, { CreemProducts: '[]' })
  t.equal((await status()).enable_creem_topup, false, 'no product on sale')
  t.same((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })).body, { success: false, message: 'This product is not on sale' })
  await configure(app, standIn)
  const res = await app.inject({ method: 'GET', url: '/api/status' })
  t.same(res.json().data.enable_creem_topup, true)
  t.same(res.json().data.creem_products, [
    { product_id: 'prod_starter', name: 'Starter', price: 4.99, currency: 'USD', quota: 2_500_000 },
    { product_id: 'prod_pro', name: 'Pro', price: 20, currency: 'EUR', quota: 10_000_000 }
  ])
  t.notOk(res.body.includes(API_KEY) || res.body.includes(WEBHOOK_SECRET), 'no secret in /api/status')
  t.same((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_unknown', payment_method: 'creem' })).body, { success: false, message: 'This product is not on sale' })
  t.equal((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'stripe' })).status, 400)
  t.equal(standIn.checkouts.length, 0)
  t.equal((await app.inject({ method: 'POST', url: '/api/user/creem/pay', payload: { product_id: 'prod_starter', payment_method: 'creem' } })).statusCode, 401, 'signed-in users only')
  t.equal(await deliver(app, checkoutCompleted({ checkoutId: 'ch_1', tradeNo: 'x', amount: 499 }), { secret: 'whatever' }), 401)
  await app.saveOptions({ CreemWebhookSecret: '' })
  t.equal(await deliver(app, checkoutCompleted({ checkoutId: 'ch_1', tradeNo: 'x', amount: 499 })), 404, 'no webhook secret: the webhook is as absent')
})

t.test('paying creates a pending order and a checkout named by its trade number', async (t) => {
  const app = await build(t)
  const standIn = await creemStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'buyer')
  await app.db.updateTable('users').set({ email: 'buyer@example.com' }).where('id', '=', u.id).execute()
  const res = await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })
  t.equal(res.body.success, true)
  const checkoutId = standIn.ids[0]!
  t.same(res.body.data, { checkout_url: `${standIn.base}/checkout/${checkoutId}`, pay_link: `${standIn.base}/checkout/${checkoutId}` })
  t.same(standIn.keys, [API_KEY], 'the x-api-key header carries the key')
  const body = standIn.checkouts[0]!
  const tradeNo = String(body['request_id'])
  t.match(tradeNo, new RegExp(`^USR${u.id}NO[0-9a-f]{32}$`))
  t.match(body, { product_id: 'prod_starter', success_url: 'https://gw.example.com/topup?creem=success', metadata: { kind: 'topup', trade_no: tradeNo, user_id: String(u.id) }, customer: { email: 'buyer@example.com' } })
  t.match(await order(app, tradeNo), { user_id: u.id, amount: 5, money: '4.99', quota: 2_500_000, status: 'pending', payment_method: 'creem', currency: 'usd', creem_checkout_id: checkoutId, creem_order_id: null })
  const pro = await pay(app, standIn, u, 'prod_pro')
  t.match(await order(app, pro.tradeNo), { money: '20.00', currency: 'eur', quota: 10_000_000 })
  t.equal(await quotaOf(app, u.id), 0, 'nothing is credited before the payment')
})

t.test('a wrong API key, a refused product and an unreachable API fail the pay call clearly', async (t) => {
  const { app, lines } = await buildLogged(t)
  const standIn = await creemStandIn(t)
  await configure(app, standIn, { CreemApiKey: 'creem_test_wrong_key_zzz' })
  const u = await tokenCaller(app, 'alice')
  const res = await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })
  t.same(res.body, { success: false, message: 'Creem refused the API key; ask the administrator to check the Creem settings' })
  t.same(standIn.keys, ['creem_test_wrong_key_zzz'])
  t.equal(standIn.checkouts.length, 0)
  t.notOk(lines.some((l) => l.includes('creem_test_wrong_key_zzz')), 'the key never reaches the log')

  await configure(app, standIn, { CreemProducts: JSON.stringify([{ name: 'Gone', productId: 'prod_gone', price: 1, currency: 'USD', quota: 1 }]) })
  t.same((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_gone', payment_method: 'creem' })).body, { success: false, message: 'Creem refused the payment: Product not found' })

  await configure(app, standIn, { CreemApiBase: 'http://127.0.0.1:1' })
  t.same((await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })).body, { success: false, message: 'Creem could not be reached; try again later' })
})

t.test('a paid checkout credits once: Postgres, the cached balance and one log row; a replay credits nothing', async (t) => {
  const app = await build(t)
  const standIn = await creemStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'payer')
  await app.db.updateTable('users').set({ quota: 1000 }).where('id', '=', u.id).execute()
  await app.quota.setBalance('user', u.id, 400)
  const { tradeNo, checkoutId } = await pay(app, standIn, u)
  const event = checkoutCompleted({ checkoutId, tradeNo, amount: 499, orderId: 'ord_paid_1' })
  t.equal(await deliver(app, event), 200)
  t.equal(await quotaOf(app, u.id), 1000 + 2_500_000)
  t.equal(await app.quota.balance('user', u.id), 400 + 2_500_000)
  t.match(await order(app, tradeNo), { status: 'success', creem_order_id: 'ord_paid_1' })
  const logs = await topupLogs(app, u.id)
  t.equal(logs.length, 1)
  t.match(logs[0]!.content, /4\.99 by creem/)

  t.equal(await deliver(app, event), 200, 'a replay of the same event is acknowledged')
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 499, orderId: 'ord_paid_1' })), 200, 'a second event for the same checkout too')
  t.equal(await quotaOf(app, u.id), 1000 + 2_500_000, 'but credits nothing more')
  t.equal(await app.quota.balance('user', u.id), 400 + 2_500_000)
  t.equal((await topupLogs(app, u.id)).length, 1)
  t.equal((await app.db.selectFrom('creem_events').select('id').execute()).length, 2, 'each event id recorded once')
})

t.test('10 concurrent deliveries for one checkout credit once', async (t) => {
  const app = await build(t)
  const standIn = await creemStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'racer')
  await app.quota.setBalance('user', u.id, 0)
  const { tradeNo, checkoutId } = await pay(app, standIn, u)
  const facts = { checkoutId, tradeNo, amount: 499 }
  const events = [checkoutCompleted(facts), checkoutCompleted(facts), checkoutCompleted(facts)]
  const codes = await Promise.all(Array.from({ length: 10 }, async (_, i) => await deliver(app, events[i % 3]!)))
  t.same(codes, Array(10).fill(200))
  t.equal(await quotaOf(app, u.id), 2_500_000)
  t.equal(await app.quota.balance('user', u.id), 2_500_000)
  t.equal((await topupLogs(app, u.id)).length, 1)
})

t.test('forged, missing and wrong-secret signatures get 401; wrong sums, currencies, checkouts and orders credit nothing; all logged', async (t) => {
  const { app, lines } = await buildLogged(t)
  const standIn = await creemStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'target')
  await app.quota.setBalance('user', u.id, 0)
  const { tradeNo, checkoutId } = await pay(app, standIn, u)
  const genuine = checkoutCompleted({ checkoutId, tradeNo, amount: 499 })

  t.equal(await deliver(app, genuine, { signature: 'ab'.repeat(32) }), 401, 'forged signature')
  t.equal(await deliver(app, genuine, { signature: null }), 401, 'no signature')
  t.equal(await deliver(app, genuine, { signature: '' }), 401, 'empty signature')
  t.equal(await deliver(app, genuine, { secret: 'whsec_someone_else' }), 401, 'signed with another secret')
  t.equal(await deliver(app, genuine.replace('"amount":499', '"amount":1'), { signature: sign(genuine) }), 401, 'a body changed after signing')
  t.equal(refusals(lines).filter((l) => l['reason'] === 'bad signature').length, 5)
  t.equal(await deliver(app, 'not json', { signature: sign('not json') }), 400, 'signed but unreadable')
  t.equal((await app.db.selectFrom('creem_events').select('id').execute()).length, 0, 'no refused delivery recorded an event')

  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 498 })), 200, 'a wrong sum is acknowledged (Creem must not retry it) but refused')
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 100, subTotal: 100 })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 499, currency: 'EUR' })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId: 'ch_other', tradeNo, amount: 499 })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo: 'USR1NO' + 'f'.repeat(32), amount: 499 })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 499, status: 'pending' })), 200)
  const reasons = refusals(lines).map((l) => l['reason'])
  for (const reason of ['sum differs', 'currency differs', 'checkout differs', 'unknown order', 'not paid']) t.ok(reasons.includes(reason), reason)

  t.equal(await quotaOf(app, u.id), 0, 'nothing credited')
  t.equal(await app.quota.balance('user', u.id), 0)
  t.equal((await order(app, tradeNo)).status, 'pending')
  t.notOk(lines.some((l) => l.includes(WEBHOOK_SECRET) || l.includes(API_KEY)), 'no secret in the log')

  t.equal(await deliver(app, genuine), 200, 'the genuine event still credits')
  t.equal(await quotaOf(app, u.id), 2_500_000)
  const taxed = await pay(app, standIn, u)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId: taxed.checkoutId, tradeNo: taxed.tradeNo, amount: 599, subTotal: 499 })), 200)
  t.equal(await quotaOf(app, u.id), 5_000_000, 'tax on top of the price is accepted')
})

t.test('a refund takes the credit back once; a partial refund or the option off keeps it', async (t) => {
  const app = await build(t)
  const standIn = await creemStandIn(t)
  await configure(app, standIn)
  const u = await tokenCaller(app, 'refunded')
  await app.quota.setBalance('user', u.id, 0)
  const { tradeNo, checkoutId } = await pay(app, standIn, u)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 499, orderId: 'ord_r1' })), 200)
  t.equal(await quotaOf(app, u.id), 2_500_000)

  t.equal(await deliver(app, refundCreated('ord_r1', 100)), 200, 'a partial refund')
  t.equal(await quotaOf(app, u.id), 2_500_000, 'keeps the credit')
  t.equal(await deliver(app, refundCreated('ord_unknown', 499)), 200, 'a refund of an unknown order')
  const refund = refundCreated('ord_r1', 499)
  const codes = await Promise.all([deliver(app, refund), deliver(app, refund), deliver(app, refundCreated('ord_r1', 499)), deliver(app, refundCreated('ord_r1', 499))])
  t.same(codes, [200, 200, 200, 200])
  t.equal(await quotaOf(app, u.id), 0, 'deducted once')
  t.equal(await app.quota.balance('user', u.id), 0)
  t.match(await order(app, tradeNo), { status: 'refunded' })
  t.ok((await order(app, tradeNo)).refunded_at > 0)
  const logs = await topupLogs(app, u.id)
  t.equal(logs.length, 2)
  t.match(logs[1]!.content, /creem refund: .*took back/)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 499, orderId: 'ord_r1' })), 200, 'a late checkout event for the refunded order')
  t.equal(await quotaOf(app, u.id), 0, 'credits nothing again')

  await app.saveOptions({ CreemRefundDeductsQuota: 'false' })
  const second = await pay(app, standIn, u)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId: second.checkoutId, tradeNo: second.tradeNo, amount: 499, orderId: 'ord_r2' })), 200)
  t.equal(await deliver(app, refundCreated('ord_r2', 499)), 200)
  t.equal((await order(app, second.tradeNo)).status, 'refunded')
  t.equal(await quotaOf(app, u.id), 2_500_000, 'the option off: recorded, quota kept')
})

t.test('the Creem options: validated, the address guarded, the secrets write-only', async (t) => {
  const app = await build(t)
  const standIn = await creemStandIn(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (key: string, value: string) => (await app.inject({ method: 'PUT', url: '/api/option/', headers: { ...root.headers, ...EN }, payload: { key, value } })).json()
  t.match((await put('CreemProducts', JSON.stringify(PRODUCTS))), { success: false, message: 'Set the server address before the payment settings' })
  await app.saveOptions({ ServerAddress: 'https://gw.example.com' })
  t.equal((await put('CreemApiBase', standIn.base)).success, true)
  const refused = await put('CreemApiBase', 'http://169.254.169.254/latest')
  t.equal(refused.success, false)
  t.match(refused.message, /metadata/)
  t.equal((await put('CreemApiBase', 'ftp://example.com')).success, false)
  t.equal((await put('CreemTestMode', 'yes')).message, 'CreemTestMode must be true or false')
  t.equal((await put('CreemTestMode', 'true')).success, true)
  t.equal((await put('CreemProducts', 'nope')).success, false)
  t.match((await put('CreemProducts', '[{"name":"a","productId":"p","price":-1,"currency":"USD","quota":1}]')).message, /^CreemProducts: product 1: price must be a number above 0/)
  t.equal((await put('CreemProducts', JSON.stringify(PRODUCTS))).success, true)
  t.equal((await put('CreemProducts', '')).success, true, 'empty sells nothing')
  t.equal((await app.db.selectFrom('options').select('value').where('key', '=', 'CreemProducts').executeTakeFirstOrThrow()).value, '[]')

  await verifySession(app, root.headers, ROOT.password)
  t.equal((await put('CreemApiKey', API_KEY)).success, true)
  t.equal((await put('CreemWebhookSecret', WEBHOOK_SECRET)).success, true)
  const res = await app.inject({ method: 'GET', url: '/api/option/', headers: root.headers })
  t.notOk(res.body.includes(API_KEY) || res.body.includes(WEBHOOK_SECRET), 'GET /api/option/ never returns the Creem secrets')
  const items = res.json().data as Array<{ key: string, value: string, secret?: boolean, is_set?: boolean }>
  t.match(items.find((o) => o.key === 'CreemApiKey'), { value: '', secret: true, is_set: true }, 'the API key is write-only')
  t.match(items.find((o) => o.key === 'CreemWebhookSecret'), { value: '', secret: true, is_set: true })
  t.match(items.find((o) => o.key === 'CreemTestMode'), { value: 'true' })
  t.match(items.find((o) => o.key === 'CreemRefundDeductsQuota'), { value: 'true' })

  // Saved behind the console's back, the metadata address is still refused when paying.
  await configure(app, standIn, { CreemApiBase: 'http://169.254.169.254' })
  const u = await tokenCaller(app, 'alice')
  const pay = await postAs(app, u, '/api/user/creem/pay', { product_id: 'prod_starter', payment_method: 'creem' })
  t.equal(pay.body.success, false)
  t.match(pay.body.message, /metadata/)
  t.equal((await app.db.selectFrom('top_ups').select('id').where('user_id', '=', u.id).execute()).length, 0, 'refused before any order exists')
})

t.test('a plan bought through Creem: a subscription order, a checkout for the plan\'s product, completed once by the webhook', async (t) => {
  const { app, lines } = await buildLogged(t)
  const standIn = await creemStandIn(t)
  const u = await tokenCaller(app, 'subscriber')
  const planOf = async (creemProductId: string, enabled = true) => {
    const plan = await app.db.insertInto('subscription_plans').values({ title: `Monthly ${creemProductId}`, price_minor: 999, currency: 'USD', duration_unit: 'month', duration_value: 1, creem_product_id: creemProductId, enabled })
      .returning('id').executeTakeFirstOrThrow()
    await app.db.insertInto('subscription_plan_items').values({ plan_id: plan.id, model_name: 'gpt-4o', quota_type: 0, amount_total: 1_000_000 }).execute()
    return plan.id
  }
  const planId = await planOf('prod_plan_monthly')
  const buy = async (id: number) => await postAs(app, u, '/api/subscription/creem/pay', { plan_id: id })
  t.same((await buy(planId)).body, { success: false, message: 'Creem payment is not enabled by the administrator' })
  await configure(app, standIn, { CreemProducts: '[]' })
  t.same((await buy(await planOf(''))).body, { success: false, message: 'This plan cannot be bought through Creem' })
  t.same((await buy(await planOf('prod_off', false))).body, { success: false, message: 'This plan does not exist or is not on sale' })
  t.same((await buy(999_999)).body, { success: false, message: 'This plan does not exist or is not on sale' })
  t.equal(standIn.checkouts.length, 0)

  const res = await buy(planId)
  t.equal(res.body.success, true, 'top-up products are not needed to sell plans')
  const checkoutId = standIn.ids[0]!
  t.same(res.body.data, { checkout_url: `${standIn.base}/checkout/${checkoutId}`, pay_link: `${standIn.base}/checkout/${checkoutId}` })
  const body = standIn.checkouts[0]!
  const tradeNo = String(body['request_id'])
  t.match(tradeNo, new RegExp(`^SUB${u.id}NO[0-9a-f]{32}$`))
  t.match(body, { product_id: 'prod_plan_monthly', success_url: 'https://gw.example.com/plans?creem=success', metadata: { kind: 'subscription', trade_no: tradeNo, plan_id: String(planId) } })
  const subOrder = async () => await app.db.selectFrom('subscription_orders').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow()
  t.match(await subOrder(), { user_id: u.id, plan_id: planId, price_minor: 999, currency: 'USD', payment_method: 'creem', status: 'pending', provider_ref: checkoutId })
  const subscriptions = async () => await app.db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', u.id).execute()

  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 998, orderId: 'ord_plan_1' })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 999, currency: 'EUR', orderId: 'ord_plan_1' })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId: 'ch_other', tradeNo, amount: 999, orderId: 'ord_plan_1' })), 200)
  t.equal(await deliver(app, checkoutCompleted({ checkoutId, tradeNo, amount: 999 }), { secret: 'whsec_forged' }), 401)
  t.equal((await subOrder()).status, 'pending', 'a wrong sum, currency or checkout completes nothing')
  t.equal((await subscriptions()).length, 0)
  const reasons = refusals(lines).map((l) => l['reason'])
  for (const reason of ['sum differs', 'currency differs', 'checkout differs', 'bad signature']) t.ok(reasons.includes(reason), reason)

  const events = [checkoutCompleted({ checkoutId, tradeNo, amount: 999, orderId: 'ord_plan_1' }), checkoutCompleted({ checkoutId, tradeNo, amount: 999, orderId: 'ord_plan_1' })]
  const codes = await Promise.all(Array.from({ length: 10 }, async (_, i) => await deliver(app, events[i % 2]!)))
  t.same(codes, Array(10).fill(200))
  t.match(await subOrder(), { status: 'success', provider_ref: 'ord_plan_1' })
  const subs = await subscriptions()
  t.equal(subs.length, 1, 'one subscription however many deliveries')
  t.match(subs[0], { plan_id: planId, source: 'order', status: 'active' })
  t.equal((await app.db.selectFrom('user_subscription_items').selectAll().where('user_subscription_id', '=', subs[0]!.id).execute()).length, 1, 'the plan\'s items copied')
  t.equal(await quotaOf(app, u.id), 0, 'a plan credits no wallet quota')
  t.equal((await app.db.selectFrom('top_ups').select('id').where('user_id', '=', u.id).execute()).length, 0, 'and creates no top-up order')

  // Refunded in Creem: a partial refund keeps the plan; a full one, delivered at once three times, ends it once.
  const itemIds = (await app.db.selectFrom('user_subscription_items').select('id').where('user_subscription_id', '=', subs[0]!.id).execute()).map((i) => i.id)
  await app.quota.setBalance('entitlement', itemIds[0]!, 1_000_000, subs[0]!.user_id)
  t.equal(await deliver(app, refundCreated('ord_plan_1', 500)), 200)
  t.equal((await subOrder()).status, 'success', 'a partial refund keeps the plan')
  const refund = refundCreated('ord_plan_1', 999)
  t.same(await Promise.all([deliver(app, refund), deliver(app, refund), deliver(app, refundCreated('ord_plan_1', 999))]), [200, 200, 200])
  t.equal((await subOrder()).status, 'refunded')
  t.equal((await subscriptions())[0]!.status, 'cancelled', 'the period it paid for ends (CreemRefundDeductsQuota is on by default)')
  t.equal(await app.quota.balance('entitlement', itemIds[0]!, subs[0]!.user_id), undefined, 'its items are no longer cached for the relay')
  const refundLogs = await app.db.selectFrom('logs').select('content').where('user_id', '=', u.id).where('content', 'like', 'creem refund:%').execute()
  t.same(refundLogs.map((l) => l.content), [`creem refund: plan order ${tradeNo} (9.99 USD) refunded, its subscription ended`], 'one log row')
})
