import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Locator, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { confirmIdentity, overflow, toast } from '../src/ui.js'

const API_KEY = 'creem_test_e2e_standin_key_0001'
const WEBHOOK_SECRET = 'whsec_e2e_creem_secret_0001'
const PRODUCTS = [
  { name: 'Starter', productId: 'prod_starter', price: 4.99, currency: 'USD', quota: 2_500_000 },
  { name: 'Pro', productId: 'prod_pro', price: 20, currency: 'USD', quota: 10_000_000 }
]

/**
 * A stand-in for Creem on 127.0.0.1: creates checkouts (checking the x-api-key header) and serves
 * each checkout's payment page, where the browser lands.
 */
async function startCreem (t: Test): Promise<{ url: string, checkouts: Array<{ id: string, body: Record<string, unknown> }> }> {
  const checkouts: Array<{ id: string, body: Record<string, unknown> }> = []
  let base = ''
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => { body += chunk })
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/checkouts') {
        res.setHeader('content-type', 'application/json')
        if (req.headers['x-api-key'] !== API_KEY) {
          res.statusCode = 403
          res.end(JSON.stringify({ status: 403, error: 'Forbidden', message: ['Invalid API key'] }))
          return
        }
        const id = `ch_${randomBytes(8).toString('hex')}`
        checkouts.push({ id, body: JSON.parse(body) as Record<string, unknown> })
        res.end(JSON.stringify({ id, object: 'checkout', status: 'pending', checkout_url: `${base}/checkout/${id}` }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Checkout</title><h1>Stand-in Creem Checkout</h1>')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => { resolve() }) }))
  return { url: base, checkouts }
}

const creemRegion = (page: Page): Locator => page.getByRole('region', { name: 'Pay with Creem' })

/** Buys the Starter package from the wallet and waits for the stand-in's checkout page. */
async function buyStarter (t: Test, page: Page, creemUrl: string): Promise<void> {
  await creemRegion(page).getByTestId('creem-product-prod_starter').click()
  const dialog = page.getByRole('dialog', { name: 'Confirm the purchase' })
  await dialog.waitFor()
  t.equal(await dialog.getByTestId('creem-confirm-payable').textContent(), '4.99 USD')
  t.equal(await dialog.getByTestId('creem-confirm-quota').textContent(), '$5.00')
  t.equal(await overflow(page), 0, 'the confirmation fits the window')
  await dialog.getByRole('button', { name: 'Pay now' }).click()
  await page.waitForURL(new RegExp(`^${creemUrl}/checkout/ch_`))
  await page.getByText('Stand-in Creem Checkout').waitFor()
}

t.test('Creem top-up: the wallet offers it only once configured, and a package leads to Creem\'s checkout', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const creem = await startCreem(t)
  const browser = await launchBrowser(t)

  const root = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const rootUser = await signIn(root, 'root', '123456')
  await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'ServerAddress', value: system.url })
  await pageCall(root, rootUser.id, 'post', '/api/user/', { username: 'carol', password: 'carol-pass-12' })
  const carol = await db.selectFrom('users').select(['id']).where('username', '=', 'carol').executeTakeFirstOrThrow()

  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'carol', 'carol-pass-12')

  await t.test('not configured: no Creem card on the wallet', async (t) => {
    await page.goto('/topup')
    await page.getByTestId('balance').waitFor()
    await page.getByText('The administrator has not enabled online top-up.').waitFor()
    t.equal(await creemRegion(page).count(), 0)
    t.equal(await page.getByTestId('creem-card').count(), 0)
  })

  await t.test('the admin fills the Creem card, secrets write-only', async (t) => {
    await root.goto('/setting?tab=system')
    const card = root.getByTestId('option-card-creem')
    await card.waitFor()
    await card.getByText(`${system.url}/api/creem/webhook`, { exact: false }).waitFor()
    await card.getByLabel('API key').fill(API_KEY)
    await card.getByLabel('Webhook secret').fill(WEBHOOK_SECRET)
    await card.getByLabel('API address').fill(creem.url)
    await card.getByLabel('Products').fill(JSON.stringify(PRODUCTS))
    await card.getByRole('button', { name: 'Save', exact: true }).click()
    await confirmIdentity(root, '123456')
    await toast(root, 'success', 'Saved')
    const stored = new Map((await db.selectFrom('options').select(['key', 'value']).where('key', 'like', 'Creem%').execute()).map((o) => [o.key, o.value]))
    t.equal(stored.get('CreemApiKey'), API_KEY)
    t.equal(stored.get('CreemWebhookSecret'), WEBHOOK_SECRET)
    t.equal(stored.get('CreemApiBase'), creem.url)
    t.same(JSON.parse(stored.get('CreemProducts') ?? '[]'), PRODUCTS)
    t.equal(await card.getByLabel('API key').inputValue(), '', 'the key is not shown again')
    t.equal(await overflow(root), 0)
    await screenshot(root, 'creem-admin-settings-1280')
  })

  await t.test('at 1280 px the wallet lists the packages and a click leads to the stand-in\'s checkout', async (t) => {
    const status = (await (await fetch(`${system.url}/api/status`)).json() as { data: Record<string, unknown> }).data
    t.match(status, { enable_creem_topup: true, creem_products: [{ product_id: 'prod_starter', name: 'Starter', price: 4.99, currency: 'USD', quota: 2_500_000 }, { product_id: 'prod_pro' }] }, '/api/status offers the packages')
    await page.goto('/topup')
    await creemRegion(page).waitFor({ timeout: 15_000 })
    await creemRegion(page).getByTestId('creem-product-prod_pro').waitFor()
    t.match(await creemRegion(page).getByTestId('creem-product-prod_pro').textContent(), /Pro.*20\.00 USD/)
    t.equal(await page.getByText('The administrator has not enabled online top-up.').count(), 0, 'the Creem card stands in for the disabled epay one')
    t.equal(await overflow(page), 0)
    await screenshot(page, 'creem-topup-1280')
    await buyStarter(t, page, creem.url)
    await screenshot(page, 'creem-checkout-1280')
    t.equal(creem.checkouts.length, 1)
    const { body } = creem.checkouts[0]!
    t.equal(body['product_id'], 'prod_starter')
    t.match(String(body['request_id']), new RegExp(`^USR${carol.id}NO[0-9a-f]+$`))
    t.equal(body['success_url'], `${system.url}/topup?creem=success`)
  })

  await t.test('at 600 px the Creem card fits and works too', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'carol', 'carol-pass-12')
    await narrow.goto('/topup')
    await creemRegion(narrow).waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'creem-topup-600')
    await buyStarter(t, narrow, creem.url)
    await screenshot(narrow, 'creem-checkout-600')
    t.equal(creem.checkouts.length, 2)
  })
})
