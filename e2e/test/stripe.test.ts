import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Locator, Page } from 'playwright-core'
import Stripe from 'stripe'
import t, { type Test } from 'tap'
import { pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { confirmIdentity, overflow, toast } from '../src/ui.js'

const SECRET = 'sk_test_e2e_standin_key_0001'
const WEBHOOK_SECRET = 'whsec_e2e_standin_secret_0001'

/**
 * A stand-in for Stripe on 127.0.0.1: creates Checkout Sessions (checking the secret key) and
 * serves each session's payment page, where the browser lands.
 */
async function startStripe (t: Test): Promise<{ url: string, sessions: Array<{ id: string, form: URLSearchParams }> }> {
  const sessions: Array<{ id: string, form: URLSearchParams }> = []
  let base = ''
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => { body += chunk })
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        res.setHeader('content-type', 'application/json')
        if (req.headers.authorization !== `Bearer ${SECRET}`) {
          res.statusCode = 401
          res.end(JSON.stringify({ error: { message: 'Invalid API Key provided', type: 'invalid_request_error' } }))
          return
        }
        const id = `cs_test_${randomBytes(8).toString('hex')}`
        sessions.push({ id, form: new URLSearchParams(body) })
        res.end(JSON.stringify({ id, object: 'checkout.session', url: `${base}/pay/${id}` }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Checkout</title><h1>Stand-in Stripe Checkout</h1>')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => { resolve() }) }))
  return { url: base, sessions }
}

const card = (page: Page, id: string): Locator => page.getByTestId(`option-card-${id}`)

/** Pays `amount` by card from the wallet and waits for the stand-in's payment page. */
async function payByCard (t: Test, page: Page, stripeUrl: string, amount: number, payable: string): Promise<void> {
  await page.getByTestId('stripe-amount').fill(String(amount))
  await page.getByRole('button', { name: 'Pay by card (Stripe)' }).click()
  const dialog = page.getByRole('dialog', { name: 'Confirm the top-up' })
  await dialog.waitFor()
  t.equal(await dialog.getByTestId('stripe-confirm-payable').textContent(), payable)
  t.equal(await overflow(page), 0, 'the confirmation fits the window')
  await dialog.getByRole('button', { name: 'Pay now' }).click()
  await page.waitForURL(new RegExp(`^${stripeUrl}/pay/cs_test_`))
  await page.getByText('Stand-in Stripe Checkout').waitFor()
}

t.test('Stripe top-up: the admin sets it up, a user pays by card, the webhook credits the balance', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const stripe = await startStripe(t)
  const browser = await launchBrowser(t)

  const root = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const rootUser = await signIn(root, 'root', '123456')
  await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'ServerAddress', value: system.url })
  await pageCall(root, rootUser.id, 'post', '/api/user/', { username: 'carol', password: 'carol-pass-12' })
  const carol = await db.selectFrom('users').select(['id', 'quota']).where('username', '=', 'carol').executeTakeFirstOrThrow()

  await t.test('the admin fills the Stripe card, secrets write-only', async (t) => {
    await root.goto('/setting?tab=system')
    const stripeCard = card(root, 'stripe')
    await stripeCard.waitFor()
    await stripeCard.getByText(`${system.url}/api/stripe/webhook`, { exact: false }).waitFor()
    await stripeCard.getByLabel('Secret key').fill(SECRET)
    await stripeCard.getByLabel('Webhook signing secret').fill(WEBHOOK_SECRET)
    await stripeCard.getByLabel('Price per dollar of quota').fill('7.3')
    await stripeCard.getByLabel('Minimum top-up (dollars)').fill('2')
    await stripeCard.getByLabel('API address').fill(stripe.url)
    await stripeCard.getByRole('button', { name: 'Save', exact: true }).click()
    await confirmIdentity(root, '123456')
    await toast(root, 'success', 'Saved')
    const stored = new Map((await db.selectFrom('options').select(['key', 'value']).where('key', 'like', 'Stripe%').execute()).map((o) => [o.key, o.value]))
    t.equal(stored.get('StripeApiSecret'), SECRET)
    t.equal(stored.get('StripeWebhookSecret'), WEBHOOK_SECRET)
    t.equal(stored.get('StripeUnitPrice'), '7.3')
    t.equal(stored.get('StripeMinTopUp'), '2')
    t.equal(stored.get('StripeApiBase'), stripe.url)
    t.equal(await stripeCard.getByLabel('Secret key').inputValue(), '', 'the secret is not shown again')
    t.equal(await overflow(root), 0)
    await screenshot(root, 'stripe-admin-settings-1280')

    await stripeCard.getByLabel('API address').fill('http://169.254.169.254')
    await stripeCard.getByRole('button', { name: 'Save', exact: true }).click()
    await toast(root, 'error', /metadata/)
    t.pass('a cloud metadata address is refused')
    await root.reload()
    t.equal(await card(root, 'stripe').getByLabel('API address').inputValue(), stripe.url)
  })

  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'carol', 'carol-pass-12')

  await t.test('at 1280 px the user pays by card and lands on the Checkout page; the webhook credits once', async (t) => {
    await page.goto('/topup')
    await page.getByRole('region', { name: 'Pay by card (Stripe)' }).waitFor()
    await page.waitForFunction(() => (document.querySelector('[data-testid="stripe-amount"]') as HTMLInputElement | null)?.value === '2')
    t.equal(await overflow(page), 0)
    await screenshot(page, 'stripe-topup-1280')
    await payByCard(t, page, stripe.url, 3, '21.90 USD')
    await screenshot(page, 'stripe-checkout-1280')

    t.equal(stripe.sessions.length, 1)
    const { id, form } = stripe.sessions[0]!
    t.equal(form.get('line_items[0][price_data][unit_amount]'), '2190')
    t.equal(form.get('line_items[0][price_data][currency]'), 'usd')
    const tradeNo = form.get('client_reference_id')!
    t.match(tradeNo, new RegExp(`^USR${carol.id}NO[0-9a-f]+$`))

    const payload = JSON.stringify({
      id: `evt_${randomBytes(8).toString('hex')}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id, object: 'checkout.session', client_reference_id: tradeNo, metadata: { trade_no: tradeNo }, payment_status: 'paid', amount_total: 2190, amount_subtotal: 2190, currency: 'usd', payment_intent: 'pi_e2e_1' } }
    })
    const deliver = async (signature: string) => (await fetch(`${system.url}/api/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload })).status
    t.equal(await deliver(Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_forged' })), 400, 'a forged delivery through the gateway is refused')
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
    t.equal(await deliver(signature), 200)
    t.equal(await deliver(signature), 200, 'a replay is acknowledged')
    const after = await db.selectFrom('users').select('quota').where('id', '=', carol.id).executeTakeFirstOrThrow()
    t.equal(after.quota, carol.quota + 1_500_000, 'credited once')

    await page.goto('/topup?stripe=success')
    await page.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '$3.00')
    await page.getByText('Payment received by Stripe').waitFor()
    t.pass('the console shows the new balance')
    await screenshot(page, 'stripe-credited-1280')
  })

  await t.test('at 600 px the wallet fits and the card payment works too', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'carol', 'carol-pass-12')
    await narrow.goto('/topup')
    await narrow.getByRole('region', { name: 'Pay by card (Stripe)' }).waitFor()
    await narrow.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '$3.00')
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'stripe-topup-600')
    await payByCard(t, narrow, stripe.url, 2, '14.60 USD')
    await screenshot(narrow, 'stripe-checkout-600')
    t.equal(stripe.sessions.length, 2)
  })
})
