import t from 'tap'
import { pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { overflow, toast } from '../src/ui.js'

t.test('an admin lists every user\'s top-up orders, filters them and completes a pending one once', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  // The control plane's cached balances (the Redis store the gateways spend from).
  const balances = (system.controlPlane as unknown as { quota: { balance: (kind: 'user', id: number) => Promise<number | undefined>, setBalance: (kind: 'user', id: number, value: number) => Promise<void> } }).quota
  const browser = await launchBrowser(t)

  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const root = await signIn(page, 'root', '123456')
  for (const [username, password] of [['alice', 'alice-pass-1'], ['bob', 'bob-pass-12']] as const) {
    await pageCall(page, root.id, 'post', '/api/user/', { username, password })
  }
  const ids = Object.fromEntries((await db.selectFrom('users').select(['id', 'username']).execute()).map((u) => [u.username, u.id]))
  const now = Math.floor(Date.now() / 1000)
  const order = (user: string, tradeNo: string, ago: number, status: 'pending' | 'success' | 'failed', amount = 2) => ({
    user_id: ids[user]!, amount, money: (amount * 7.3).toFixed(2), quota: amount * 500_000, trade_no: tradeNo, payment_method: 'alipay', status, create_time: now - ago, complete_time: status === 'success' ? now - ago + 30 : 0
  })
  await db.insertInto('top_ups').values([
    order('alice', 'USR-ALICE-OLD', 7200, 'success'),
    order('alice', 'USR-ALICE-FAILED', 3600, 'failed'),
    order('bob', 'USR-BOB-PENDING', 600, 'pending', 3),
    order('alice', 'USR-ALICE-PENDING', 60, 'pending')
  ]).execute()
  const bobQuota = (await db.selectFrom('users').select('quota').where('id', '=', ids['bob']!).executeTakeFirstOrThrow()).quota
  await balances.setBalance('user', ids['bob']!, 0)
  const rows = page.getByTestId('topup-orders').locator('tbody tr')
  const shownTrades = async () => await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')?.replace('topup-order-', '') ?? ''))

  await t.test('the admin menu leads to the orders, newest first, with status chips', async (t) => {
    await page.goto('/detail')
    await page.getByRole('button', { name: 'Top-up orders' }).click()
    await page.waitForURL('**/orders')
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor()
    t.same(await shownTrades(), ['USR-ALICE-PENDING', 'USR-BOB-PENDING', 'USR-ALICE-FAILED', 'USR-ALICE-OLD'])
    const bob = page.getByTestId('topup-order-USR-BOB-PENDING')
    t.equal(await bob.getByTestId('topup-order-status').textContent(), 'Pending')
    await bob.getByText(`bob (${ids['bob']!})`).waitFor()
    await bob.getByText('21.90').waitFor()
    await bob.getByText('$3.00').waitFor()
    t.equal(await page.getByTestId('topup-order-USR-ALICE-OLD').getByTestId('topup-order-status').textContent(), 'Completed')
    t.equal(await page.getByTestId('topup-order-USR-ALICE-FAILED').getByTestId('topup-order-status').textContent(), 'Failed')
    t.equal(await page.getByRole('button', { name: /^Complete order/ }).count(), 2, 'only pending orders can be completed')
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'topup-orders-1280')
  })

  await t.test('filters: keyword, status, user and time', async (t) => {
    const form = page.getByRole('form', { name: 'Top-up orders' })
    await form.getByLabel('Trade number or username').fill('bob')
    await form.getByRole('button', { name: 'Query' }).click()
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor({ state: 'detached' })
    t.same(await shownTrades(), ['USR-BOB-PENDING'], 'by username')

    await form.getByRole('button', { name: 'Reset filters' }).click()
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor()
    await form.getByLabel('Status').click()
    await page.getByRole('option', { name: 'Pending' }).click()
    await form.getByRole('button', { name: 'Query' }).click()
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor({ state: 'detached' })
    t.same(await shownTrades(), ['USR-ALICE-PENDING', 'USR-BOB-PENDING'], 'by status')

    await form.getByLabel('User ID').fill(String(ids['alice']))
    await form.getByRole('button', { name: 'Query' }).click()
    await page.getByTestId('topup-order-USR-BOB-PENDING').waitFor({ state: 'detached' })
    t.same(await shownTrades(), ['USR-ALICE-PENDING'], 'by user and status together')

    await form.getByRole('button', { name: 'Reset filters' }).click()
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor()
    const local = (seconds: number) => {
      const d = new Date(seconds * 1000)
      const p = (n: number) => String(n).padStart(2, '0')
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
    }
    await form.getByLabel('Start time').fill(local(now - 4000))
    await form.getByLabel('End time').fill(local(now - 300))
    await form.getByRole('button', { name: 'Query' }).click()
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor({ state: 'detached' })
    t.same(await shownTrades(), ['USR-BOB-PENDING', 'USR-ALICE-FAILED'], 'by time range')

    await form.getByLabel('User ID').fill('abc')
    await form.getByRole('button', { name: 'Query' }).click()
    await toast(page, 'warning', 'The user ID must be a positive whole number')
    t.pass('a user id that is no number is refused in the page')
    await form.getByRole('button', { name: 'Reset filters' }).click()
    await page.getByTestId('topup-order-USR-ALICE-OLD').waitFor()
  })

  await t.test('completing a pending order asks first, then credits the user once', async (t) => {
    const bob = page.getByTestId('topup-order-USR-BOB-PENDING')
    await bob.getByRole('button', { name: 'Complete order USR-BOB-PENDING' }).click()
    const dialog = page.getByRole('dialog', { name: 'Complete this order?' })
    await dialog.getByText('Order USR-BOB-PENDING of bob becomes paid and $3.00 is credited').waitFor()
    await screenshot(page, 'topup-orders-confirm-1280')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    t.equal((await db.selectFrom('top_ups').select('status').where('trade_no', '=', 'USR-BOB-PENDING').executeTakeFirstOrThrow()).status, 'pending', 'cancelled: nothing happens')

    await bob.getByRole('button', { name: 'Complete order USR-BOB-PENDING' }).click()
    await dialog.getByRole('button', { name: 'Complete' }).click()
    await toast(page, 'success', 'Order completed: $3.00 credited to bob')
    await bob.getByTestId('topup-order-status').filter({ hasText: 'Completed' }).waitFor()
    t.equal(await bob.getByRole('button', { name: /^Complete order/ }).count(), 0, 'the completed row has no action')
    const user = await db.selectFrom('users').select('quota').where('id', '=', ids['bob']!).executeTakeFirstOrThrow()
    t.equal(user.quota, bobQuota + 1_500_000, 'bob is credited the order\'s quota')
    t.equal(await balances.balance('user', ids['bob']!), 1_500_000, 'and the cached balance moved by the same amount')
    const audit = await db.selectFrom('audit_logs').select(['actor_name', 'target_id']).where('action', '=', 'topup.complete').execute()
    t.same(audit, [{ actor_name: 'root', target_id: 'USR-BOB-PENDING' }], 'audited')

    const again = await pageCall<{ success: boolean, message: string }>(page, root.id, 'post', '/api/user/topup/complete', { trade_no: 'USR-BOB-PENDING' }).catch((err: unknown) => ({ success: false, message: String(err) }))
    t.match(again.message, /already completed/, 'a second completion is refused')
    t.equal((await db.selectFrom('users').select('quota').where('id', '=', ids['bob']!).executeTakeFirstOrThrow()).quota, bobQuota + 1_500_000, 'and credits nothing')
  })

  await t.test('at 600 px the orders and the confirmation fit the window', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/orders')
    await narrow.getByTestId('topup-order-USR-ALICE-PENDING').waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    // The actions column stays at the table's right edge while the other columns scroll under it.
    const action = await narrow.getByRole('button', { name: 'Complete order USR-ALICE-PENDING' }).boundingBox()
    t.ok(action !== null && action.x >= 0 && action.x + action.width <= 600, `600px: the Complete action is in view without scrolling (${JSON.stringify(action)})`)
    await screenshot(narrow, 'topup-orders-600')
    await narrow.getByTestId('topup-order-USR-ALICE-PENDING').getByRole('button', { name: 'Complete order USR-ALICE-PENDING' }).click()
    const dialog = narrow.getByRole('dialog', { name: 'Complete this order?' })
    await dialog.waitFor()
    t.equal(await overflow(narrow), 0, '600px: the confirmation fits too')
    await screenshot(narrow, 'topup-orders-confirm-600')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
  })
})
