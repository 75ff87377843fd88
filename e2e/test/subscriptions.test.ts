import t from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startPayProvider } from '../src/pay-provider.js'
import { startSystem } from '../src/system.js'
import { noOverflow, overflow, toast, until } from '../src/ui.js'

// Subscription plans in the console: the admins' plan editor, the users' plans page (buying from
// the wallet, their subscriptions, the billing preference), binding and invalidating from the
// Users screen, and "paid by" in the logs; at 1280 and 600 px, in English and Chinese.
t.test('subscription plans: edited by admins, bought by users, bound from the Users screen, named in the logs', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const root = await apiSession(t, system.url, 'root', '123456')
  for (const [username, password] of [['alice', 'alice-pass-1'], ['bob', 'bob-pass-12']] as const) {
    await root.call('POST', '/api/user/', { username, password })
  }
  const ids = Object.fromEntries((await db.selectFrom('users').select(['id', 'username']).execute()).map((u) => [u.username, u.id]))
  const aliceId = ids['alice']!
  const bobId = ids['bob']!
  // $10.00 in the wallet (500,000 quota units a dollar): the $2.00 plan costs 1,000,000 units.
  await root.call('PUT', '/api/user/', { id: aliceId, quota: 5_000_000 })
  const alice = await apiSession(t, system.url, 'alice', 'alice-pass-1')
  const browser = await launchBrowser(t)

  const admin = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(admin, 'root', '123456')
  let planId = 0

  await t.test('an admin creates a plan with two items from the admin menu', async (t) => {
    await admin.goto('/detail')
    await admin.getByRole('button', { name: 'Subscription plans' }).click()
    await admin.waitForURL('**/subscriptions')
    await admin.getByText('No plans yet').waitFor()

    await admin.getByRole('button', { name: 'New plan' }).click()
    const form = admin.getByRole('form', { name: 'New plan' })
    await form.getByLabel(/^Title/).fill('Pro monthly')
    await form.getByLabel(/^Subtitle/).fill('For everyday work')
    await form.getByLabel(/^Price/).fill('2')
    t.equal(await form.getByLabel(/^Currency/).inputValue(), 'USD', 'US dollars by default')
    await form.getByText('Each period lasts 1 month').waitFor()
    const first = form.getByTestId('plan-item-1')
    await first.getByLabel('Model 1').fill('gpt-4o')
    // Quota is typed as the console shows it (dollars, currency display being on), with the units alongside.
    await first.getByLabel('Amount ($)').fill('5')
    await first.getByText('2500000 quota units').waitFor()
    await form.getByRole('button', { name: 'Add item' }).click()
    const second = form.getByTestId('plan-item-2')
    await second.getByLabel('Model 2').fill('gpt-4o-mini')
    await second.getByLabel('Counted in').click()
    await admin.getByRole('option', { name: 'Requests' }).click()
    await admin.getByRole('listbox').waitFor({ state: 'detached' })
    await second.getByLabel('Amount', { exact: true }).fill('100')

    // The same model and kind twice is refused in the form.
    await form.getByRole('button', { name: 'Add item' }).click()
    const third = form.getByTestId('plan-item-3')
    await third.getByLabel('Model 3').fill('gpt-4o')
    await third.getByLabel('Amount ($)').fill('1')
    await form.getByRole('button', { name: 'Create' }).click()
    await third.getByText('This model already has an item counted this way').waitFor()
    await toast(admin, 'error', 'Please fix the marked fields')
    await third.getByRole('button', { name: 'Remove item 3' }).click()
    await third.waitFor({ state: 'detached' })
    await screenshot(admin, 'subscription-plan-drawer-1280')

    await form.getByRole('button', { name: 'Create' }).click()
    await toast(admin, 'success', 'Plan created')
    await form.waitFor({ state: 'detached' })
    const plan = await db.selectFrom('subscription_plans').selectAll().executeTakeFirstOrThrow()
    planId = plan.id
    t.match(plan, { title: 'Pro monthly', subtitle: 'For everyday work', price_minor: 200, currency: 'USD', duration_unit: 'month', duration_value: 1, enabled: true }, 'the plan is stored')
    const items = await db.selectFrom('subscription_plan_items').select(['model_name', 'quota_type', 'amount_total']).where('plan_id', '=', planId).orderBy('id').execute()
    t.same(items.map((x) => ({ ...x, amount_total: Number(x.amount_total) })), [
      { model_name: 'gpt-4o', quota_type: 0, amount_total: 2_500_000 },
      { model_name: 'gpt-4o-mini', quota_type: 1, amount_total: 100 }
    ], 'with its two items')

    const row = admin.getByTestId(`plan-row-${planId}`)
    await row.getByText('Pro monthly').waitFor()
    t.equal(await row.getByTestId('plan-price').innerText(), '$2.00')
    await row.getByText('1 month').waitFor()
    await row.getByText('gpt-4o: $5.00 quota').waitFor()
    await row.getByText('gpt-4o-mini: 100 requests').waitFor()
    t.ok(await row.getByLabel('Plan Pro monthly enabled').isChecked(), 'listed as enabled')
  })

  await t.test('the admin edits the plan and disables and enables it', async (t) => {
    const row = admin.getByTestId(`plan-row-${planId}`)
    await row.getByRole('button', { name: 'Edit plan Pro monthly' }).click()
    const form = admin.getByRole('form', { name: 'Edit plan' })
    await until(async () => await form.getByLabel(/^Title/).inputValue() === 'Pro monthly')
    t.equal(await form.getByTestId('plan-item-1').getByLabel('Amount ($)').inputValue(), '5', 'the quota amount is shown in dollars')
    t.equal(await form.getByTestId('plan-item-2').getByLabel('Amount', { exact: true }).inputValue(), '100')
    await form.getByLabel(/^Sort order/).fill('10')
    await form.getByRole('button', { name: 'Save' }).click()
    await toast(admin, 'success', 'Plan saved')
    await row.getByRole('cell', { name: '10', exact: true }).waitFor()
    t.equal((await db.selectFrom('subscription_plans').select('sort_order').where('id', '=', planId).executeTakeFirstOrThrow()).sort_order, 10, 'saved')

    const offered = async () => (await alice.call<Array<{ plan: { id: number } }>>('GET', '/api/subscription/plans')).map((x) => x.plan.id)
    await row.getByLabel('Plan Pro monthly enabled').click()
    await toast(admin, 'success', 'Plan disabled: users no longer see it')
    t.equal((await db.selectFrom('subscription_plans').select('enabled').where('id', '=', planId).executeTakeFirstOrThrow()).enabled, false, 'disabled')
    t.same(await offered(), [], 'a disabled plan is not on offer')
    await row.getByLabel('Plan Pro monthly enabled').click()
    await toast(admin, 'success', 'Plan enabled: users can buy it')
    t.equal((await db.selectFrom('subscription_plans').select('enabled').where('id', '=', planId).executeTakeFirstOrThrow()).enabled, true, 'enabled again')
    t.same(await offered(), [planId], 'and on offer again')
    t.ok(await row.getByLabel('Plan Pro monthly enabled').isChecked())
    await noOverflow(t, admin, '1280px plans list')
    await screenshot(admin, 'subscription-plans-1280')
  })

  await t.test('a user finds the plan under Plans, buys it from the wallet and sees it under My subscriptions', async (t) => {
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'alice', 'alice-pass-1')
    await page.goto('/detail')
    await page.getByRole('button', { name: 'Plans', exact: true }).click()
    await page.waitForURL('**/plans')
    const card = page.getByTestId(`plan-card-${planId}`)
    await card.getByText('Pro monthly').waitFor()
    await card.getByText('For everyday work').waitFor()
    t.equal(await card.getByTestId('plan-price').innerText(), '$2.00')
    await card.getByText('per 1 month').waitFor()
    t.same(await card.getByTestId('plan-includes').locator('li').allInnerTexts(), ['gpt-4o: $5.00 quota', 'gpt-4o-mini: 100 requests'], 'what each period includes')
    t.equal(await card.getByRole('button', { name: /Stripe|Creem/ }).count(), 0, 'no card payment without a Stripe price or Creem product')
    const mine = page.getByRole('region', { name: 'My subscriptions' })
    await mine.getByText('You have no active subscription').waitFor()

    await card.getByRole('button', { name: 'Pay Pro monthly from the wallet' }).click()
    const dialog = page.getByRole('dialog', { name: 'Buy Pro monthly?' })
    await dialog.getByText('$2.00 is taken from your wallet and the plan starts now, for 1 month.').waitFor()
    await screenshot(page, 'subscription-buy-1280')
    await dialog.getByRole('button', { name: 'Buy' }).click()
    await toast(page, 'success', 'Subscribed to Pro monthly')
    t.equal((await db.selectFrom('users').select('quota').where('id', '=', aliceId).executeTakeFirstOrThrow()).quota, 4_000_000, 'the price was taken from the wallet')
    const sub = await db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', aliceId).executeTakeFirstOrThrow()
    t.match(sub, { plan_id: planId, plan_title: 'Pro monthly', status: 'active', source: 'order', auto_renew: false }, 'one active subscription')

    const entry = mine.getByTestId(`subscription-${sub.id}`)
    await entry.getByText('Pro monthly').waitFor()
    await entry.getByText('Active').waitFor()
    await entry.getByText('Bought').waitFor()
    t.match(await entry.getByTestId('subscription-end').innerText(), /^Until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'with its end')
    t.same(await entry.getByTestId('subscription-item-usage').allInnerTexts(), ['$0.00 / $5.00', '0 / 100 requests'], 'each item with what is used of it')
    t.equal(await entry.getByRole('progressbar').count(), 2, 'as progress bars')

    await entry.getByLabel('Renew from the wallet').click()
    await toast(page, 'success', 'Auto-renew is on')
    t.equal((await db.selectFrom('user_subscriptions').select('auto_renew').where('id', '=', sub.id).executeTakeFirstOrThrow()).auto_renew, true, 'auto-renew saved')

    const preference = page.getByRole('region', { name: 'Billing preference' })
    t.ok(await preference.getByRole('radio', { name: /^Plan first/ }).isChecked(), 'plan first by default')
    await preference.getByText('Only a plan pays; a request no plan covers is refused.').waitFor()
    await preference.getByRole('radio', { name: /^Wallet first/ }).check()
    await toast(page, 'success', 'Billing preference saved')
    t.equal((await db.selectFrom('users').select('billing_preference').where('id', '=', aliceId).executeTakeFirstOrThrow()).billing_preference, 'wallet_first', 'the preference is saved')
    await noOverflow(t, page, '1280px plans page')
    await page.evaluate(() => { window.scrollTo(0, 0) })
    await screenshot(page, 'subscription-user-plans-1280')
  })

  await t.test('at 600 px in Chinese the plans page fits the window', async (t) => {
    const page = await openPage(t, browser, system.url, { viewport: NARROW, lang: 'zh' })
    await signIn(page, 'alice', 'alice-pass-1')
    await page.goto('/plans')
    const card = page.getByTestId(`plan-card-${planId}`)
    await card.getByText('每 1 个月').waitFor()
    t.equal(await card.getByTestId('plan-price').innerText(), 'US$2.00')
    t.same(await card.getByTestId('plan-includes').locator('li').allInnerTexts(), ['gpt-4o: 额度 $5.00', 'gpt-4o-mini: 100 次请求'])
    const mine = page.getByRole('region', { name: '我的订阅' })
    await mine.getByText('生效中').waitFor()
    t.same(await mine.getByTestId('subscription-item-usage').allInnerTexts(), ['$0.00 / $5.00', '0 / 100 次请求'])
    t.ok(await page.getByRole('region', { name: '计费偏好' }).getByRole('radio', { name: /^优先钱包/ }).isChecked(), 'the saved preference is shown')
    await noOverflow(t, page, 'zh 600px plans page')
    await screenshot(page, 'subscription-user-plans-zh-600')
    await card.getByRole('button', { name: '用钱包支付 Pro monthly' }).click()
    const dialog = page.getByRole('dialog', { name: '购买 Pro monthly？' })
    await dialog.getByText('将从钱包扣除 $2.00，套餐立即生效，为期 1 个月。').waitFor()
    await noOverflow(t, page, 'zh 600px purchase confirmation')
    await screenshot(page, 'subscription-buy-zh-600')
    await dialog.getByRole('button', { name: '取消' }).click()
    await dialog.waitFor({ state: 'detached' })
  })

  await t.test('with epay configured, a plan can be paid through it: the signed form goes to the provider', async (t) => {
    const provider = await startPayProvider(t)
    await root.setOptions({ ServerAddress: system.url, PayAddress: provider.url, EpayId: '1001', EpayKey: 'e2e-merchant-key' })
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'alice', 'alice-pass-1')
    await page.goto('/plans')
    const card = page.getByTestId(`plan-card-${planId}`)
    await card.getByRole('button', { name: 'WeChat Pay' }).waitFor()
    await card.getByRole('button', { name: 'Alipay' }).click()
    const dialog = page.getByRole('dialog', { name: 'Pay for Pro monthly?' })
    await dialog.getByText('You pay $2.00 with Alipay on the payment page; the plan starts once the payment arrives.').waitFor()
    await dialog.getByRole('button', { name: 'Pay' }).click()
    await page.waitForURL(`${provider.url}/submit.php`)
    await page.getByText('Payment page').waitFor()
    t.equal(provider.forms.length, 1, 'one form reached the provider')
    t.equal(provider.forms[0]!['pid'], '1001')
    t.equal(provider.forms[0]!['type'], 'alipay')
    const orders = await db.selectFrom('subscription_orders').select(['plan_id', 'status']).where('user_id', '=', aliceId).where('payment_method', 'like', 'epay%').execute()
    t.same(orders, [{ plan_id: planId, status: 'pending' }], 'a pending order for the plan')
  })

  await t.test('an admin binds the plan to a user from the Users screen and invalidates it', async (t) => {
    await admin.goto('/user')
    await admin.getByTestId(`user-row-${bobId}`).getByRole('button', { name: 'Edit' }).click()
    const form = admin.getByRole('form', { name: 'Edit user' })
    const section = form.getByRole('region', { name: 'Subscriptions' })
    await section.getByText('No subscriptions').waitFor()
    await section.getByLabel('Plan to give').click()
    await admin.getByRole('option', { name: 'Pro monthly' }).click()
    await admin.getByRole('listbox').waitFor({ state: 'detached' })
    await section.getByRole('button', { name: 'Bind' }).click()
    await toast(admin, 'success', 'Plan Pro monthly given to bob')
    const sub = await db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', bobId).executeTakeFirstOrThrow()
    t.match(sub, { plan_id: planId, status: 'active', source: 'admin' }, 'bob holds one period, given by an admin')
    const line = section.getByTestId(`user-subscription-${sub.id}`)
    t.equal(await line.getByTestId('user-subscription-status').innerText(), 'Active')
    await line.getByText('Given by an admin').waitFor()
    await line.getByText('gpt-4o: $0.00 / $5.00 · gpt-4o-mini: 0 / 100 requests').waitFor()
    await line.scrollIntoViewIfNeeded()
    await screenshot(admin, 'subscription-user-drawer-1280')

    await line.getByRole('button', { name: `Invalidate subscription Pro monthly #${sub.id}` }).click()
    const dialog = admin.getByRole('dialog', { name: 'Invalidate this subscription?' })
    await dialog.getByText('The subscription Pro monthly of bob ends now').waitFor()
    await screenshot(admin, 'subscription-invalidate-1280')
    await dialog.getByRole('button', { name: 'Invalidate' }).click()
    await toast(admin, 'success', 'Subscription invalidated')
    await line.getByTestId('user-subscription-status').filter({ hasText: 'Cancelled' }).waitFor()
    t.equal(await line.getByRole('button', { name: /^Invalidate subscription/ }).count(), 0, 'a cancelled subscription has no action')
    t.equal((await db.selectFrom('user_subscriptions').select('status').where('id', '=', sub.id).executeTakeFirstOrThrow()).status, 'cancelled', 'cancelled in the database')
    const audit = await db.selectFrom('audit_logs').select('action').where('action', 'in', ['subscription.bind', 'subscription.invalidate']).orderBy('id').execute()
    t.same(audit.map((a) => a.action), ['subscription.bind', 'subscription.invalidate'], 'both audited')
    await form.getByRole('button', { name: 'Cancel' }).click()
    await form.waitFor({ state: 'detached' })
  })

  await t.test('at 600 px in Chinese the admin screens fit the window', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW, lang: 'zh' })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/subscriptions')
    const row = narrow.getByTestId(`plan-row-${planId}`)
    await row.getByText('1 个月').waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    // The actions column stays at the table's right edge while the other columns scroll under it.
    const edit = row.getByRole('button', { name: '编辑套餐 Pro monthly' })
    const box = await edit.boundingBox()
    t.ok(box !== null && box.x >= 0 && box.x + box.width <= 600, `600px: the edit action is in view without scrolling (${JSON.stringify(box)})`)
    await screenshot(narrow, 'subscription-plans-zh-600')
    await edit.click()
    const form = narrow.getByRole('form', { name: '编辑套餐' })
    await until(async () => await form.getByLabel(/^标题/).inputValue() === 'Pro monthly')
    // At 600 px the drawer takes the whole width (once it has slid in).
    const paper = narrow.locator('.MuiDrawer-paper')
    await until(async () => { const b = await paper.boundingBox(); return b !== null && Math.round(b.x) === 0 && Math.round(b.width) === 600 })
    await noOverflow(t, narrow, 'zh 600px plan drawer')
    await screenshot(narrow, 'subscription-plan-drawer-zh-600')
    await form.getByRole('button', { name: '取消' }).click()
    await form.waitFor({ state: 'detached' })

    await narrow.goto(`/user/edit/${bobId}`)
    const section = narrow.getByRole('form', { name: '编辑用户' }).getByRole('region', { name: '订阅' })
    await section.getByText('已作废').waitFor()
    await section.getByText('管理员赠送').waitFor()
    await section.scrollIntoViewIfNeeded()
    await noOverflow(t, narrow, 'zh 600px user drawer')
    await screenshot(narrow, 'subscription-user-drawer-zh-600')
  })

  await t.test('the logs say what paid a request: the plan or the wallet', async (t) => {
    const now = Math.floor(Date.now() / 1000)
    const sub = await db.selectFrom('user_subscriptions').select('id').where('user_id', '=', aliceId).executeTakeFirstOrThrow()
    const ratios = { model_ratio: 1.25, completion_ratio: 4, group_ratio: 1, model_price: -1 }
    const [byPlan, byWallet] = await db.insertInto('logs').values([
      {
        created_at: now - 20, type: 2, user_id: aliceId, username: 'alice', token_name: 'laptop', model_name: 'gpt-4o', quota: 3750, prompt_tokens: 1000, completion_tokens: 500,
        other: { ...ratios, billing_source: 'subscription', subscription_id: sub.id, subscription_item_id: 1, plan_title: 'Pro monthly' }
      },
      {
        created_at: now - 10, type: 2, user_id: aliceId, username: 'alice', token_name: 'laptop', model_name: 'gpt-4o', quota: 3750, prompt_tokens: 1000, completion_tokens: 500,
        other: { ...ratios, billing_source: 'wallet' }
      }
    ]).returning('id').execute()
    for (const [viewport, lang] of [[DESKTOP, 'en'], [NARROW, 'zh']] as const) {
      const w = viewport.width
      const page = await openPage(t, browser, system.url, { viewport, lang })
      await signIn(page, 'alice', 'alice-pass-1')
      await page.goto('/log')
      await page.getByTestId('log-row').nth(1).waitFor()
      t.equal(await page.getByTestId('log-paid-by-plan').count(), 1, `${w}px ${lang}: the row paid by a plan is marked`)
      for (const id of [byPlan!.id, byWallet!.id]) {
        const row = page.getByTestId('log-row').filter({ has: page.getByRole('cell', { name: lang === 'en' ? 'Consume' : '消费' }) }).nth(id === byPlan!.id ? 1 : 0)
        await row.locator('button[aria-expanded="false"]').click()
        await page.getByTestId(`log-details-${id}`).waitFor()
      }
      const paid = (id: number) => page.getByTestId(`log-details-${id}`).getByText(lang === 'en' ? /^Paid by: / : /^扣费来源: /)
      t.equal(await paid(byPlan!.id).innerText(), lang === 'en' ? 'Paid by: plan Pro monthly' : '扣费来源: 套餐 Pro monthly', `${w}px ${lang}: paid by the plan`)
      t.equal(await paid(byWallet!.id).innerText(), lang === 'en' ? 'Paid by: Wallet' : '扣费来源: 钱包', `${w}px ${lang}: paid by the wallet`)
      // Once both rows have finished opening.
      await until(async () => await page.locator('.MuiCollapse-entered').count() === 2)
      await noOverflow(t, page, `${lang} ${w}px logs`)
      await screenshot(page, `subscription-logs-${lang}-${w}`)
    }
  })
})
