import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { overflow, toast, until } from '../src/ui.js'

const ACCOUNT_KEY = 'sk-billing-account'

/**
 * OpenAI's dashboard billing API on 127.0.0.1 for one account (key {@link ACCOUNT_KEY}):
 * `hardLimitUsd` as the subscription's hard limit and 1234 cents of usage. Other keys get 401.
 */
async function fakeBilling (t: Test) {
  const state = { url: '', hardLimitUsd: 50, keys: [] as string[] }
  const server = createServer((req, res) => {
    req.resume()
    const auth = req.headers.authorization ?? ''
    state.keys.push(auth)
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (auth !== `Bearer ${ACCOUNT_KEY}`) {
      json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } })
    } else if (path === '/v1/dashboard/billing/subscription') {
      json(200, { object: 'billing_subscription', has_payment_method: true, hard_limit_usd: state.hardLimitUsd, soft_limit_usd: state.hardLimitUsd })
    } else if (path === '/v1/dashboard/billing/usage') {
      json(200, { object: 'list', daily_costs: [], total_usage: 1234 })
    } else {
      json(404, { error: { message: 'not found', type: 'invalid_request_error' } })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

t.test('an admin reads channel balances from the list, one channel or all at once', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const billing = await fakeBilling(t)
  const root = await apiSession(t, system.url, 'root', '123456')
  const create = async (fields: Record<string, unknown>) => (await root.call<Array<{ id: number }>>('POST', '/api/channel/', { models: 'gpt-4o-mini', ...fields }))[0]!.id
  const openaiId = await create({ name: 'billed', type: 1, key: ACCOUNT_KEY, base_url: billing.url })
  const wrongId = await create({ name: 'wrong-key', type: 1, key: 'sk-not-this-account', base_url: billing.url })
  const claudeId = await create({ name: 'claude', type: 14, key: 'sk-ant', models: 'claude-3-5-sonnet' })
  const stored = async (id: number) => await db.selectFrom('channels').select(['balance', 'balance_updated_time']).where('id', '=', id).executeTakeFirstOrThrow()

  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'root', '123456')
  await page.goto('/channel')
  const row = (id: number) => page.getByTestId(`channel-row-${id}`)
  await row(openaiId).waitFor()

  await t.test('a channel never read shows a dash; a type without billing has no update button', async (t) => {
    t.equal(await row(openaiId).getByTestId('channel-balance').textContent(), '—')
    t.equal(await row(claudeId).getByTestId('channel-balance').textContent(), '—')
    t.equal(await row(claudeId).getByRole('button', { name: 'Update the balance of claude' }).count(), 0)
    await row(claudeId).getByTestId('channel-balance').hover()
    await page.getByRole('tooltip').getByText('This channel type has no balance query').waitFor()
    t.pass('the dash explains itself on hover')
  })

  await t.test('updating one channel shows its dollar balance, stored with its time', async (t) => {
    await row(openaiId).getByRole('button', { name: 'Update the balance of billed' }).click()
    const said = await toast(page, 'success', 'Balance of billed: $37.66')
    t.equal(said, 'Balance of billed: $37.66', '50 USD less 1234 cents')
    await until(async () => await row(openaiId).getByTestId('channel-balance').textContent() === '$37.66')
    t.match(await stored(openaiId), { balance: 37.66, balance_updated_time: Number })
    t.ok((await stored(openaiId)).balance_updated_time > 0)
    await row(openaiId).getByTestId('channel-balance').hover()
    await page.getByRole('tooltip').getByText(/^Read at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/).waitFor()
    t.pass('the time of the reading shows on hover')
  })

  await t.test('a key the provider refuses says why and leaves the balance alone', async (t) => {
    await row(wrongId).getByRole('button', { name: 'Update the balance of wrong-key' }).click()
    const said = await toast(page, 'error', 'Failed to update the balance of channel wrong-key')
    t.match(said, /upstream answered HTTP 401: Incorrect API key provided/)
    t.equal(await row(wrongId).getByTestId('channel-balance').textContent(), '—')
    t.same(await stored(wrongId), { balance: 0, balance_updated_time: 0 })
  })

  await t.test('update all balances reads every channel that has one and tells how it went', async (t) => {
    billing.hardLimitUsd = 60
    await page.getByRole('button', { name: 'Update all balances' }).click()
    const said = await toast(page, 'warning', 'Balances updated')
    t.equal(said, 'Balances updated: 1 channels, 1 failed (update one to see why)')
    await until(async () => await row(openaiId).getByTestId('channel-balance').textContent() === '$47.66')
    t.equal((await stored(openaiId)).balance, 47.66)
    t.notOk(billing.keys.includes('Bearer sk-ant'), 'the Claude channel was not asked')
  })

  await t.test('the list with its balance column fits at 1280 and 600 px', async (t) => {
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'channel-balance-1280')
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/channel')
    await narrow.getByTestId(`channel-row-${openaiId}`).getByTestId('channel-balance').filter({ hasText: '$47.66' }).waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'channel-balance-600')
  })
})
