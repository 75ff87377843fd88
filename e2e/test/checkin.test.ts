import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import t from 'tap'
import { pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, SCREENSHOT_DIR, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast, until } from '../src/ui.js'

// Check-in days are UTC days.
const today = () => new Date().toISOString().slice(0, 10)
const lastMonth = () => {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7)
}
const monthName = (month: string, lang: 'en' | 'zh' = 'en') =>
  new Intl.DateTimeFormat(lang === 'en' ? 'en-US' : 'zh-CN', { year: 'numeric', month: 'long', timeZone: 'UTC' }).format(new Date(`${month}-01T00:00:00Z`))
const checkinCard = (page: Page): Locator => page.getByTestId('checkin-card')
const settingsCard = (page: Page): Locator => page.getByTestId('option-card-checkin')
const balanceIs = async (page: Page, text: string) => {
  await page.waitForFunction((want) => document.querySelector('[data-testid="balance"]')?.textContent === want, text)
}

t.test('daily check-in: the super admin switches it on, users check in once a day from the wallet', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)

  const root = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const rootUser = await signIn(root, 'root', '123456')
  for (const username of ['bob', 'dave', 'carol']) await pageCall(root, rootUser.id, 'post', '/api/user/', { username, password: `${username}-pass-12` })
  const idOf = async (username: string) => (await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id
  const quotaOf = async (username: string) => (await db.selectFrom('users').select('quota').where('username', '=', username).executeTakeFirstOrThrow()).quota
  const bobId = await idOf('bob')

  const bob = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(bob, 'bob', 'bob-pass-12')

  await t.test('while check-in is off the wallet has no check-in card and the API refuses', async (t) => {
    const answered = bob.waitForResponse((r) => r.url().includes('/api/user/checkin'))
    await bob.goto('/topup')
    t.equal(((await (await answered).json()) as { data: { enabled: boolean } }).data.enabled, false, 'the wallet asked and was told check-in is off')
    await balanceIs(bob, '$0.00')
    await bob.getByRole('heading', { name: 'Redeem a code' }).waitFor()
    t.equal(await checkinCard(bob).count(), 0, 'no check-in card')
    const res = await bob.request.post('/api/user/checkin', { headers: { 'new-api-user': String(bobId) } })
    t.same(await res.json(), { success: false, message: 'Daily check-in is not enabled by the administrator' })
    t.equal(await quotaOf('bob'), 0)
  })

  await t.test('the super admin sets the reward and switches check-in on in the operation settings', async (t) => {
    await root.goto('/setting?tab=operation')
    const card = settingsCard(root)
    await card.scrollIntoViewIfNeeded()
    t.equal(await card.getByLabel('Minimum reward').inputValue(), '1000', 'new-api\'s default minimum')
    t.equal(await card.getByLabel('Maximum reward').inputValue(), '10000', 'and maximum')

    await card.getByLabel('Minimum reward').fill('300000')
    await card.getByLabel('Maximum reward').fill('200000')
    await card.getByRole('button', { name: 'Save', exact: true }).click()
    await toast(root, 'error', 'The minimum reward cannot be above the maximum')
    t.pass('a minimum above the maximum is refused before anything is sent')

    // Both bounds above the stored maximum (10000): the console sends the maximum first.
    await card.getByLabel('Minimum reward').fill('250000')
    await card.getByLabel('Maximum reward').fill('250000')
    await card.getByLabel('Enable daily check-in').check()
    await card.getByText('Users check in once a day on the wallet page').waitFor()
    await card.getByRole('button', { name: 'Save', exact: true }).click()
    await toast(root, 'success', 'Saved')
    const stored = await db.selectFrom('options').select(['key', 'value']).where('key', 'like', 'checkin_setting.%').orderBy('key').execute()
    t.same(stored, [
      { key: 'checkin_setting.enabled', value: 'true' },
      { key: 'checkin_setting.max_quota', value: '250000' },
      { key: 'checkin_setting.min_quota', value: '250000' }
    ], 'the three options are stored')
    await noOverflow(t, root, '1280px settings')
    await screenshot(root, 'checkin-settings-1280')
    await card.screenshot({ path: join(SCREENSHOT_DIR, 'checkin-settings-card-1280.png') })
  })

  await t.test('at 1280 px bob checks in once: toast, balance, button, calendar and history', async (t) => {
    await db.insertInto('checkins').values({ user_id: bobId, checkin_date: `${lastMonth()}-15`, quota_awarded: 1_000_000 }).execute()
    await bob.goto('/topup')
    const card = checkinCard(bob)
    await card.getByText('Check in once a day to receive $0.50.').waitFor()
    await card.getByText('No check-ins in this month.').waitFor()
    t.equal(await card.getByTestId('checkin-all-total').innerText(), 'Check-ins all time: 1 (total $2.00)', 'earlier months count in the all-time total')
    await card.getByText('Days follow UTC: a new check-in day starts at 00:00 UTC.').waitFor()
    await noOverflow(t, bob, '1280px before the check-in')
    await screenshot(bob, 'checkin-1280-before')

    await card.getByRole('button', { name: 'Check in', exact: true }).click()
    t.match(await toast(bob, 'success', 'Checked in'), 'Checked in: $0.50 added to your balance', 'the toast says the reward')
    await balanceIs(bob, '$0.50')
    const done = card.getByRole('button', { name: 'Checked in today' })
    await done.waitFor()
    t.ok(await done.isDisabled(), 'the button is disabled once checked in')
    t.equal(await card.getByTestId('checkin-records').getByRole('listitem').count(), 1)
    t.match(await card.getByTestId('checkin-records').innerText(), new RegExp(`${today()}\\s+\\+\\$0\\.50`), 'the history lists today')
    t.equal(await card.getByTestId('checkin-month-total').innerText(), `Check-ins in ${monthName(today().slice(0, 7))}: 1 (total $0.50)`)
    t.equal(await card.getByTestId('checkin-all-total').innerText(), 'Check-ins all time: 2 (total $2.50)')
    t.equal(await card.locator(`[data-day="${today()}"]`).getAttribute('data-checked'), 'true', 'today is marked on the calendar')
    t.equal(await card.locator(`[data-day="${today()}"]`).getAttribute('title'), `${today()}: checked in, +$0.50`, 'with the reward in its title')
    await noOverflow(t, bob, '1280px after the check-in')
    await screenshot(bob, 'checkin-1280')

    t.equal(await quotaOf('bob'), 250_000, 'users.quota grew by the reward')
    const logs = await db.selectFrom('logs').select(['type', 'quota', 'content']).where('user_id', '=', bobId).execute()
    t.same(logs, [{ type: 1, quota: 250_000, content: 'Daily check-in: +$0.50' }], 'one recharge log row')

    const again = await bob.request.post('/api/user/checkin', { headers: { 'new-api-user': String(bobId) } })
    t.same(await again.json(), { success: false, message: 'You have already checked in today (days follow UTC)' }, 'a second check-in is refused')
    await bob.reload()
    await card.getByRole('button', { name: 'Checked in today' }).waitFor()
    t.pass('after a reload the day is still checked in')
    t.equal(await quotaOf('bob'), 250_000, 'credited once')

    t.ok(await card.getByRole('button', { name: 'Next month' }).isDisabled(), 'no months ahead')
    await card.getByRole('button', { name: 'Previous month' }).click()
    await until(async () => (await card.getByTestId('checkin-records').innerText({ timeout: 1000 }).catch(() => '')).includes(`${lastMonth()}-15`))
    t.equal(await card.getByTestId('checkin-month-total').innerText(), `Check-ins in ${monthName(lastMonth())}: 1 (total $2.00)`, 'last month\'s records and total')
    t.equal(await card.locator(`[data-day="${lastMonth()}-15"]`).getAttribute('data-checked'), 'true')
    await card.getByRole('button', { name: 'Next month' }).click()
    await until(async () => (await card.getByTestId('checkin-records').innerText({ timeout: 1000 }).catch(() => '')).includes(today()))
    t.pass('back to this month')
  })

  await t.test('at 600 px a user checks in and the wallet fits the window', async (t) => {
    const dave = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(dave, 'dave', 'dave-pass-12')
    await dave.goto('/topup')
    const card = checkinCard(dave)
    await card.getByRole('button', { name: 'Check in', exact: true }).waitFor()
    await noOverflow(t, dave, '600px before the check-in')
    await card.getByRole('button', { name: 'Check in', exact: true }).click()
    await toast(dave, 'success', 'Checked in: $0.50 added to your balance')
    await card.getByRole('button', { name: 'Checked in today' }).waitFor()
    await balanceIs(dave, '$0.50')
    await noOverflow(t, dave, '600px after the check-in')
    await screenshot(dave, 'checkin-600')
    t.equal(await quotaOf('dave'), 250_000)

    const narrowRoot = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrowRoot, 'root', '123456')
    await narrowRoot.goto('/setting?tab=operation')
    await settingsCard(narrowRoot).scrollIntoViewIfNeeded()
    t.equal(await settingsCard(narrowRoot).getByLabel('Minimum reward').inputValue(), '250000')
    await noOverflow(t, narrowRoot, '600px settings')
    await screenshot(narrowRoot, 'checkin-settings-600')
    await settingsCard(narrowRoot).screenshot({ path: join(SCREENSHOT_DIR, 'checkin-settings-card-600.png') })
  })

  await t.test('in Chinese', async (t) => {
    for (const viewport of [DESKTOP, NARROW]) {
      const w = viewport.width
      const carol = await openPage(t, browser, system.url, { viewport, lang: 'zh' })
      await signIn(carol, 'carol', 'carol-pass-12')
      await carol.goto('/topup')
      const card = checkinCard(carol)
      await card.getByRole('heading', { name: '每日签到' }).waitFor()
      await card.getByText('签到日期按 UTC 时间计算').waitFor()
      if (w === DESKTOP.width) {
        await card.getByRole('button', { name: '签到', exact: true }).click()
        t.match(await toast(carol, 'success', '签到成功'), '签到成功，余额增加 $0.50', 'the toast in Chinese')
        const res = await carol.request.post('/api/user/checkin', { headers: { 'new-api-user': String(await idOf('carol')) } })
        t.same(await res.json(), { success: false, message: '今日已签到（按 UTC 时间计算日期）' }, 'the refusal in the console\'s language')
      }
      await card.getByRole('button', { name: '今日已签到' }).waitFor()
      t.equal(await card.getByTestId('checkin-month-total').innerText(), `${monthName(today().slice(0, 7), 'zh')}：签到 1 次，共获得 $0.50`)
      await noOverflow(t, carol, `zh ${w}px`)
      await screenshot(carol, `checkin-zh-${w}`)
    }
    t.equal(await quotaOf('carol'), 250_000, 'credited once')
  })

  await t.test('switched off again, the card goes away', async (t) => {
    await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'checkin_setting.enabled', value: 'false' })
    const answered = bob.waitForResponse((r) => r.url().includes('/api/user/checkin'))
    await bob.goto('/topup')
    t.equal(((await (await answered).json()) as { data: { enabled: boolean } }).data.enabled, false)
    await balanceIs(bob, '$0.50')
    await bob.getByRole('heading', { name: 'Redeem a code' }).waitFor()
    t.equal(await checkinCard(bob).count(), 0, 'no check-in card')
  })
})
