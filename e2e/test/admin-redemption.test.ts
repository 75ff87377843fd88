import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import t from 'tap'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'

/** Polls `check` every 50 ms until it holds (playwright-core has no expect). */
async function until (check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const overflow = async (page: Page): Promise<number> => await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

t.test('an admin creates, downloads, manages and deletes redemption codes; a user redeems one', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url })
  const root = await signIn(page, 'root', '123456')
  const clipboard = async () => await page.evaluate(async () => await navigator.clipboard.readText())
  const codes = async () => await db.selectFrom('redemptions').selectAll().where('deleted_at', 'is', null).orderBy('id').execute()
  const rowOf = (id: number) => page.getByTestId(`redemption-row-${id}`)

  await page.goto('/redemption')
  await page.getByText('No redemption codes yet').waitFor()

  await t.test('copy selected needs a selection', async (t) => {
    await page.getByRole('button', { name: 'Copy selected' }).click()
    await page.getByText('Select at least one row first').waitFor()
    t.pass('refused with nothing selected')
  })

  await t.test('three codes named promo are created and downloaded as promo.txt', async (t) => {
    await page.getByRole('button', { name: 'Add codes' }).click()
    const form = page.getByRole('form', { name: 'Add redemption codes' })
    t.equal(await form.getByLabel('Quota ($)').inputValue(), '0.2', 'the default 100000 units shown in dollars')
    await form.getByLabel('How many codes').fill('101')
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('The count must be a whole number from 1 to 100').waitFor()
    t.pass('more than 100 at once is refused')

    await form.getByLabel('Name').fill('promo')
    await form.getByLabel('Quota ($)').fill('1')
    await form.getByText('In dollars; 500000 quota units').waitFor()
    await form.getByLabel('How many codes').fill('3')
    await screenshot(page, 'redemption-drawer-1280')
    await form.getByRole('button', { name: 'Create' }).click()

    const dialog = page.getByRole('dialog', { name: '3 codes created' })
    await dialog.getByText('promo.txt', { exact: false }).waitFor()
    const shown = (await dialog.getByTestId('redemption-codes').inputValue()).split('\n')
    await screenshot(page, 'redemption-created-1280')
    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Download' }).click()])
    t.equal(download.suggestedFilename(), 'promo.txt', 'named after the code name')
    const lines = readFileSync(await download.path(), 'utf8').split('\n')
    t.equal(lines.length, 3, 'three lines')
    const stored = await codes()
    t.equal(stored.length, 3)
    t.same(lines, stored.map((c) => c.key), 'the file holds the stored codes, in creation order')
    t.same(shown, lines, 'the dialog shows the same codes')
    t.ok(stored.every((c) => c.name === 'promo' && c.quota === 500_000 && c.status === 1 && c.user_id === root.id), 'named promo, $1 each, unused')

    for (const c of stored) {
      const row = rowOf(c.id)
      await row.getByText('Unused').waitFor()
      await row.getByText('$1.00').waitFor()
      await row.getByRole('cell', { name: 'None', exact: true }).waitFor()
      await row.getByRole('button', { name: 'Edit' }).waitFor()
    }
    t.pass('the list shows three unused codes without a redeemer')
  })

  await t.test('view and copy show the code; copy selected copies one code per line', async (t) => {
    const [first, second] = await codes()
    await rowOf(first!.id).getByRole('button', { name: 'View code' }).click()
    const dialog = page.getByRole('dialog', { name: 'Code "promo"' })
    t.equal(await dialog.getByTestId('redemption-codes').inputValue(), first!.key, 'view shows the code')
    await dialog.getByRole('button', { name: 'Close' }).click()
    await rowOf(second!.id).getByRole('button', { name: 'Copy code' }).click()
    await page.getByText('Code copied').waitFor()
    t.equal(await clipboard(), second!.key, 'copy puts the code on the clipboard')

    await rowOf(first!.id).getByRole('checkbox').check()
    await rowOf(second!.id).getByRole('checkbox').check()
    await page.getByRole('button', { name: 'Copy selected' }).click()
    await page.getByText('Copied 2 codes').waitFor()
    t.same((await clipboard()).split('\n').sort(), [first!.key, second!.key].sort())
  })

  await t.test('a user redeems a code; the list shows it used with the redeemer and no edit', async (t) => {
    const res = await page.request.post('/api/user/', { data: { username: 'erin', password: 'erin-pass-1' }, headers: { 'new-api-user': String(root.id) } })
    t.equal((await res.json() as { success: boolean }).success, true)
    const user = await openPage(t, browser, system.url, { viewport: DESKTOP })
    const erin = await signIn(user, 'erin', 'erin-pass-1')
    const [code] = await codes()
    await user.goto('/topup')
    await user.getByLabel('Redemption code').fill(code!.key)
    await user.getByRole('button', { name: 'Redeem' }).click()
    await user.getByText('Redeemed: $1.00 added to your balance').waitFor()
    const stored = await db.selectFrom('redemptions').selectAll().where('id', '=', code!.id).executeTakeFirstOrThrow()
    t.equal(stored.status, 3, 'used in the database')
    t.equal(stored.used_user_id, erin.id)

    await page.reload()
    const row = rowOf(code!.id)
    await row.getByText('Used').waitFor()
    await row.getByRole('cell', { name: String(erin.id), exact: true }).waitFor()
    t.equal(await row.getByRole('button', { name: 'Edit' }).count(), 0, 'no edit on a used code')
    t.equal(await row.getByRole('button', { name: 'Enable' }).count() + await row.getByRole('button', { name: 'Disable' }).count(), 0, 'no enable or disable either')
    await row.getByRole('button', { name: 'View code' }).waitFor()
    t.pass('a used code can still be viewed')
  })

  await t.test('disable, enable and edit an unused code', async (t) => {
    const [, code] = await codes()
    const row = rowOf(code!.id)
    await row.getByRole('button', { name: 'Disable' }).click()
    await row.getByText('Disabled').waitFor()
    t.equal((await db.selectFrom('redemptions').select('status').where('id', '=', code!.id).executeTakeFirstOrThrow()).status, 2)
    t.equal(await row.getByRole('button', { name: 'Edit' }).count(), 0, 'edit only while unused')
    await row.getByRole('button', { name: 'Enable' }).click()
    await row.getByText('Unused').waitFor()
    t.equal((await db.selectFrom('redemptions').select('status').where('id', '=', code!.id).executeTakeFirstOrThrow()).status, 1)

    await row.getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit redemption code' })
    await until(async () => await form.getByLabel('Name').inputValue() === 'promo')
    t.equal(await form.getByLabel('How many codes').count(), 0, 'no count when editing')
    await form.getByLabel('Name').fill('promo-vip')
    await form.getByLabel('Quota ($)').fill('2.5')
    await form.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Code updated').waitFor()
    await row.getByText('promo-vip').waitFor()
    await row.getByText('$2.50').waitFor()
    const stored = await db.selectFrom('redemptions').selectAll().where('id', '=', code!.id).executeTakeFirstOrThrow()
    t.equal(stored.name, 'promo-vip')
    t.equal(stored.quota, 1_250_000)
  })

  await t.test('search by id and by name, then delete with a confirmation', async (t) => {
    const [, second, third] = await codes()
    await page.getByLabel('Search by ID or name').fill(String(third!.id))
    await page.getByRole('button', { name: 'Search' }).click()
    await until(async () => await page.locator('tbody tr').count() === 1 && await rowOf(third!.id).count() === 1)
    t.pass('by id')
    await page.getByLabel('Search by ID or name').fill('vip')
    await page.getByRole('button', { name: 'Search' }).click()
    await until(async () => await page.locator('tbody tr').count() === 1 && await rowOf(second!.id).count() === 1)
    t.pass('by part of the name')

    await rowOf(second!.id).getByRole('button', { name: 'Delete' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete redemption code' })
    await dialog.getByText('promo-vip', { exact: false }).waitFor()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await page.getByText('Code deleted').waitFor()
    await page.getByText('No redemption codes yet').waitFor()
    const stored = await db.selectFrom('redemptions').select('deleted_at').where('id', '=', second!.id).executeTakeFirstOrThrow()
    t.not(stored.deleted_at, null, 'deleted in the database')
    await page.getByLabel('Search by ID or name').fill('')
    await page.getByRole('button', { name: 'Search' }).click()
    await until(async () => await page.locator('tbody tr').count() === 2)
  })

  await t.test('both widths fit the window', async (t) => {
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'redemption-1280')
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/redemption')
    await narrow.locator('tbody tr').first().getByText('promo').waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'redemption-600')
    await narrow.getByRole('button', { name: 'Add codes' }).click()
    const form = narrow.getByRole('form', { name: 'Add redemption codes' })
    await form.getByLabel('Name').waitFor()
    t.equal(Math.round(await form.evaluate((el) => el.getBoundingClientRect().width)), NARROW.width, 'the drawer is full width')
    await screenshot(narrow, 'redemption-drawer-600')
  })
})
