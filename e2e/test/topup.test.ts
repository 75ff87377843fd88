import { createHash } from 'node:crypto'
import t from 'tap'
import { pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startPayProvider } from '../src/pay-provider.js'
import { startSystem } from '../src/system.js'
import { overflow } from '../src/ui.js'

/** The epay MD5 signature, computed independently of the control plane's code. */
function epaySign (fields: Record<string, string>, key: string): string {
  const text = Object.keys(fields)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && fields[k] !== '')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('&')
  return createHash('md5').update(text + key).digest('hex')
}

t.test('the wallet: redeeming a code credits the balance once, online top-up posts the signed form', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)
  const provider = await startPayProvider(t)

  const root = await openPage(t, browser, system.url)
  const rootUser = await signIn(root, 'root', '123456')
  await pageCall(root, rootUser.id, 'post', '/api/user/', { username: 'bob', password: 'bob-pass-12' })
  const bobRow = await db.selectFrom('users').select(['id', 'quota']).where('username', '=', 'bob').executeTakeFirstOrThrow()
  await db.insertInto('redemptions').values({ key: 'e2e-gift-code-0001', name: 'gift', quota: 1_000_000, status: 1, user_id: rootUser.id }).execute()

  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'bob', 'bob-pass-12')
  await page.goto('/topup')
  const balance = page.getByTestId('balance')
  await page.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '$0.00')

  await t.test('redeeming a code', async (t) => {
    await page.getByRole('button', { name: 'Redeem', exact: true }).click()
    await page.getByText('Please enter the redemption code').waitFor()
    t.pass('an empty code is refused')

    await page.getByLabel('Redemption code').fill('e2e-gift-code-0001')
    await page.getByRole('button', { name: 'Redeem', exact: true }).click()
    await page.getByText('Redeemed: $2.00 added to your balance').waitFor()
    await page.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '$2.00')
    t.equal(await balance.textContent(), '$2.00', 'the balance shown grows by the code\'s quota')
    t.equal(await page.getByLabel('Redemption code').inputValue(), '', 'the box is cleared')

    await page.getByLabel('Redemption code').fill('e2e-gift-code-0001')
    await page.getByRole('button', { name: 'Redeem', exact: true }).click()
    await page.getByText('Invalid or used redemption code').waitFor()
    t.pass('the same code cannot be redeemed twice')

    const user = await db.selectFrom('users').select('quota').where('id', '=', bobRow.id).executeTakeFirstOrThrow()
    t.equal(user.quota, bobRow.quota + 1_000_000, 'users.quota grew exactly once')
    const logs = await db.selectFrom('logs').select(['type', 'quota']).where('user_id', '=', bobRow.id).where('type', '=', 1).execute()
    t.same(logs, [{ type: 1, quota: 1_000_000 }], 'one recharge log row')
    const code = await db.selectFrom('redemptions').select(['status', 'used_user_id']).where('key', '=', 'e2e-gift-code-0001').executeTakeFirstOrThrow()
    t.same(code, { status: 3, used_user_id: bobRow.id }, 'the code is used by bob')
  })

  await t.test('without a top-up link or online payment the wallet says so', async (t) => {
    await page.getByRole('button', { name: 'Buy redemption codes' }).click()
    await page.getByText('The super admin has not set a top-up link').waitFor()
    await page.getByText('The administrator has not enabled online top-up.').waitFor()
    t.equal(await page.getByRole('button', { name: 'Alipay' }).count(), 0, 'no payment buttons')
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'topup-1280')
  })

  await t.test('online top-up shows the payable sum and posts the signed form to the provider', async (t) => {
    await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'ServerAddress', value: system.url })
    await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'PayAddress', value: provider.url })
    await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'EpayId', value: '1001' })
    // A credential option needs a fresh secure verification first.
    await pageCall(root, rootUser.id, 'post', '/api/verify', { method: 'password', value: '123456' })
    await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'EpayKey', value: 'e2e-merchant-key' })
    await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'MinTopUp', value: '2' })

    await page.reload()
    const amount = page.getByLabel('Amount (USD)')
    await amount.waitFor()
    t.equal(await amount.inputValue(), '2', 'the amount starts at the minimum')
    await page.waitForFunction(() => document.querySelector('[data-testid="payable"]')?.textContent === '¥14.60')
    t.pass('the payable sum for the minimum is shown (2 x 7.3)')

    await amount.fill('1')
    await page.getByText('The top-up amount cannot be less than 2').first().waitFor()
    await page.getByRole('button', { name: 'Alipay' }).click()
    await page.getByRole('alert').filter({ hasText: 'The top-up amount cannot be less than 2' }).waitFor()
    t.equal(await page.getByRole('dialog').count(), 0, 'below the minimum no confirmation opens')

    await amount.fill('-5')
    await amount.blur()
    t.equal(await amount.inputValue(), '1', 'the amount is forced to at least 1')

    await amount.fill('10')
    await page.waitForFunction(() => document.querySelector('[data-testid="payable"]')?.textContent === '¥73.00')
    t.pass('the payable sum follows the amount (10 x 7.3)')
    await page.getByRole('button', { name: 'Alipay' }).click()
    const dialog = page.getByRole('dialog', { name: 'Confirm the top-up' })
    t.equal(await dialog.getByTestId('confirm-amount').textContent(), '$10')
    t.equal(await dialog.getByTestId('confirm-payable').textContent(), '¥73.00')
    await dialog.getByText('Alipay').waitFor()
    await screenshot(page, 'topup-confirm-1280')
    await dialog.getByRole('button', { name: 'Pay now' }).click()
    await page.waitForURL(`${provider.url}/submit.php`)
    await page.getByText('Payment page').waitFor()

    t.equal(provider.forms.length, 1, 'one form reached the provider')
    const form = provider.forms[0]!
    t.equal(form['pid'], '1001')
    t.equal(form['type'], 'alipay')
    t.equal(form['money'], '73.00')
    t.equal(form['sign_type'], 'MD5')
    t.match(form['out_trade_no'], new RegExp(`^USR${bobRow.id}NO[0-9a-f]+$`))
    t.equal(form['notify_url'], `${system.url}/api/user/epay/notify`)
    t.equal(form['sign'], epaySign(form, 'e2e-merchant-key'), 'the form carries a valid signature')
    const order = await db.selectFrom('top_ups').selectAll().where('trade_no', '=', form['out_trade_no']!).executeTakeFirstOrThrow()
    t.equal(order.user_id, bobRow.id, 'a pending order for bob')
    t.equal((await db.selectFrom('users').select('quota').where('id', '=', bobRow.id).executeTakeFirstOrThrow()).quota, bobRow.quota + 1_000_000, 'nothing credited before the payment is confirmed')
  })

  await t.test('at 600 px the wallet fits the window', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'bob', 'bob-pass-12')
    await narrow.goto('/topup')
    await narrow.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '$2.00')
    await narrow.waitForFunction(() => document.querySelector('[data-testid="payable"]')?.textContent === '¥14.60')
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'topup-600')
    await narrow.getByRole('button', { name: 'WeChat Pay' }).click()
    const dialog = narrow.getByRole('dialog', { name: 'Confirm the top-up' })
    await dialog.getByText('WeChat Pay').waitFor()
    t.equal(await overflow(narrow), 0, '600px: the confirmation fits too')
    await screenshot(narrow, 'topup-confirm-600')
  })
})
