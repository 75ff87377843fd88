import t from 'tap'
import { pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { overflow, until } from '../src/ui.js'

/** What the gateway answers `key` on /v1/models. */
async function gatewayStatus (url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
  await res.arrayBuffer()
  return res.status
}

/** Polls until the gateway answers `want` for `key`, or `ms` pass; the last answer. */
async function gatewayBecomes (url: string, key: string, want: number, ms: number): Promise<number> {
  const deadline = Date.now() + ms
  let got = await gatewayStatus(url, key)
  while (got !== want && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    got = await gatewayStatus(url, key)
  }
  return got
}

t.test('a user creates, copies, batches, searches, disables, edits and deletes tokens in the console', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)

  const root = await openPage(t, browser, system.url)
  const rootUser = await signIn(root, 'root', '123456')
  await pageCall(root, rootUser.id, 'post', '/api/user/', { username: 'alice', password: 'alice-pass-1' })
  // One chat link whose template echoes the key back in a console address, so the opened window can be read.
  await pageCall(root, rootUser.id, 'put', '/api/option/', { key: 'Chats', value: JSON.stringify([{ 'Echo chat': `${system.url}/chat-client?key={key}` }]) })

  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url })
  const alice = await signIn(page, 'alice', 'alice-pass-1')
  const clipboard = async () => await page.evaluate(async () => await navigator.clipboard.readText())
  const rowOf = (name: string) => page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) })

  // Keys shown at creation, for the gateway checks of later steps.
  let ciKey = ''
  let batchKeys: string[] = []

  await page.goto('/token')
  await page.getByText('No tokens yet').waitFor()

  await t.test('creating a token shows the key that works against the gateway', async (t) => {
    await page.getByRole('button', { name: 'Add token' }).click()
    const form = page.getByRole('form', { name: 'Add token' })
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('Please enter a name').waitFor()
    t.pass('the name is required on create')

    await form.getByLabel('Expiry').fill('2030-02-30 10:00:00')
    await form.getByLabel('Name').fill('ci-token')
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('Enter the expiry as yyyy-MM-dd HH:mm:ss').waitFor()
    t.pass('an impossible date is refused')

    await form.getByRole('button', { name: '1 day', exact: true }).click()
    await form.getByRole('button', { name: '$10', exact: true }).click()
    await form.getByLabel('IP allow list').fill('127.0.0.1\n::1')
    await screenshot(page, 'token-drawer-1280')
    const asked = Math.floor(Date.now() / 1000) + 86_400
    await form.getByRole('button', { name: 'Create' }).click()

    const dialog = page.getByRole('dialog', { name: 'Token created' })
    const key = await dialog.getByTestId('token-keys').inputValue()
    t.match(key, /^sk-[A-Za-z0-9]{48}$/, 'the full key is shown once created')
    ciKey = key
    await dialog.getByRole('button', { name: 'Copy key' }).click()
    t.equal(await clipboard(), key, 'the copy button puts the key on the clipboard')
    await dialog.getByRole('button', { name: 'Close' }).click()

    t.equal(await gatewayStatus(system.url, key), 200, 'the gateway accepts the key shown')
    const row = await db.selectFrom('tokens').selectAll().where('user_id', '=', alice.id).where('name', '=', 'ci-token').executeTakeFirstOrThrow()
    t.equal(row.remain_quota, 5_000_000, 'the $10 preset is 5000000 quota units')
    t.equal(row.unlimited_quota, false)
    t.ok(Math.abs(row.expired_time - asked) <= 60, 'expires one day from now')
    t.equal(row.allow_ips, '127.0.0.1\n::1')

    const line = rowOf('ci-token')
    await line.getByText('Enabled').waitFor()
    await line.getByText('$10.00').waitFor()
    await line.getByRole('button', { name: 'Copy key' }).click()
    await page.getByText('Key copied').first().waitFor()
    t.equal(await clipboard(), key, 'the row copies the same key')
    await line.getByRole('button', { name: 'View key' }).click()
    const shown = page.getByRole('dialog', { name: 'Key of ci-token' })
    t.equal(await shown.getByTestId('token-keys').inputValue(), key, 'view key reveals it')
    await shown.getByRole('button', { name: 'Close' }).click()

    const [popup] = await Promise.all([page.waitForEvent('popup'), line.getByRole('button', { name: 'Chat' }).click()])
    await popup.waitForURL((u) => u.pathname === '/chat-client')
    t.equal(new URL(popup.url()).searchParams.get('key'), key, 'the chat link opens with this token\'s key')
    await popup.close()
  })

  await t.test('a batch of three gets suffixed names and every key', async (t) => {
    await page.getByRole('button', { name: 'Add token' }).click()
    const form = page.getByRole('form', { name: 'Add token' })
    await form.getByLabel('Name').fill('batch')
    await form.getByRole('button', { name: 'Never', exact: true }).click()
    await form.getByLabel('How many to create').fill('3')
    await form.getByRole('button', { name: 'Create' }).click()
    const dialog = page.getByRole('dialog', { name: '3 tokens created' })
    const keys = (await dialog.getByTestId('token-keys').inputValue()).split('\n')
    t.equal(keys.length, 3, 'three keys, one per line')
    batchKeys = keys
    await dialog.getByRole('button', { name: 'Copy all keys' }).click()
    t.equal(await clipboard(), keys.join('\n'))
    await dialog.getByRole('button', { name: 'Close' }).click()

    const rows = await db.selectFrom('tokens').select(['name', 'expired_time', 'remain_quota']).where('user_id', '=', alice.id).where('name', 'like', 'batch%').orderBy('id').execute()
    t.equal(rows.length, 3)
    t.equal(rows[0]!.name, 'batch')
    t.match(rows[1]!.name, /^batch-[A-Za-z0-9]{6}$/)
    t.match(rows[2]!.name, /^batch-[A-Za-z0-9]{6}$/)
    t.ok(rows.every((r) => r.expired_time === -1 && r.remain_quota === 500_000), 'never expires, default quota')
    for (const key of keys) t.equal(await gatewayStatus(system.url, key), 200, 'each key works')
    await page.getByRole('cell', { name: rows[2]!.name, exact: true }).waitFor()
    t.equal(await page.getByRole('row').count(), 5, 'header and four tokens')
  })

  await t.test('copy selected needs a selection and copies names with keys', async (t) => {
    await page.getByRole('button', { name: 'Copy selected' }).click()
    await page.getByText('Select at least one row first').waitFor()
    await rowOf('batch').getByRole('checkbox').check()
    await rowOf('ci-token').getByRole('checkbox').check()
    await page.getByRole('button', { name: 'Copy selected' }).click()
    await page.getByText('Copied 2 tokens').waitFor()
    const lines = (await clipboard()).split('\n')
    t.equal(lines.length, 2)
    t.ok(lines.every((l) => /^(batch|ci-token) +sk-[A-Za-z0-9]{48}$/.test(l)), 'name and key on each line')
  })

  await t.test('disabling stops the key at the gateway; an expired token cannot be enabled', async (t) => {
    const key = ciKey
    const line = rowOf('ci-token')
    await line.getByRole('button', { name: 'Disable' }).click()
    await line.getByText('Disabled').waitFor()
    const row = await db.selectFrom('tokens').select(['status']).where('name', '=', 'ci-token').executeTakeFirstOrThrow()
    t.equal(row.status, 2, 'stored as disabled')
    t.equal(await gatewayBecomes(system.url, key, 401, 1000), 401, 'the gateway refuses the key within a second')

    await line.getByRole('button', { name: 'Enable' }).click()
    await line.getByText('Enabled').waitFor()
    t.equal(await gatewayBecomes(system.url, key, 200, 1000), 200, 'enabled again, the key works')

    await db.updateTable('tokens').set({ expired_time: Math.floor(Date.now() / 1000) - 60, status: 2 }).where('name', '=', 'ci-token').execute()
    await page.reload()
    await line.getByText('Disabled').waitFor()
    await line.getByRole('button', { name: 'Enable' }).click()
    await page.getByText('This token has expired; change its expiry first').waitFor()
    t.equal((await db.selectFrom('tokens').select('status').where('name', '=', 'ci-token').executeTakeFirstOrThrow()).status, 2, 'still disabled')
  })

  await t.test('editing keeps the key and changes the settings', async (t) => {
    await rowOf('batch').getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit token' })
    await until(async () => await form.getByLabel('Name').inputValue() === 'batch')
    t.pass('the form loads the token')
    t.equal(await form.getByLabel('How many to create').count(), 0, 'no batch count when editing')
    await form.getByLabel('Name').fill('renamed')
    await form.getByLabel('Unlimited quota').check()
    await form.getByRole('button', { name: 'Save' }).click()
    await rowOf('renamed').getByText('Unlimited').waitFor()
    const row = await db.selectFrom('tokens').select(['unlimited_quota', 'expired_time']).where('user_id', '=', alice.id).where('name', '=', 'renamed').executeTakeFirstOrThrow()
    t.equal(row.unlimited_quota, true)
    t.equal(row.expired_time, -1, 'never expires, as before')
  })

  await t.test('the drawer sets per-token rate limits, and shows them when reopened', async (t) => {
    await rowOf('renamed').getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit token' })
    await until(async () => await form.getByLabel('Name').inputValue() === 'renamed')
    await form.getByText('0 for no limit; enforced across all gateways').waitFor()
    t.equal(await form.getByLabel('Requests per minute').inputValue(), '0', 'no limit at first')
    await form.getByLabel('Requests per minute').fill('2000000')
    await form.getByLabel('Concurrent requests').fill('x')
    await form.getByRole('button', { name: 'Save' }).click()
    await form.getByText('Requests per minute must be a whole number from 0 to 1,000,000').waitFor()
    await form.getByText('Concurrent requests must be a whole number from 0 to 100,000').waitFor()
    t.pass('out-of-range limits are refused before sending')

    await form.getByLabel('Requests per minute').fill('60')
    await form.getByLabel('Tokens per minute').fill('100000')
    await form.getByLabel('Concurrent requests').fill('2')
    await screenshot(page, 'token-drawer-limits-1280')
    await form.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Token updated').first().waitFor()
    await form.waitFor({ state: 'hidden' })
    const row = await db.selectFrom('tokens').select(['rpm_limit', 'tpm_limit', 'concurrency_limit']).where('user_id', '=', alice.id).where('name', '=', 'renamed').executeTakeFirstOrThrow()
    t.same(row, { rpm_limit: 60, tpm_limit: 100000, concurrency_limit: 2 }, 'saved')

    await rowOf('renamed').getByRole('button', { name: 'Edit' }).click()
    await until(async () => await form.getByLabel('Name').inputValue() === 'renamed')
    t.equal(await form.getByLabel('Requests per minute').inputValue(), '60')
    t.equal(await form.getByLabel('Tokens per minute').inputValue(), '100000')
    t.equal(await form.getByLabel('Concurrent requests').inputValue(), '2')
    t.pass('reopened, the drawer shows them')
    await page.keyboard.press('Escape')
    await form.waitFor({ state: 'hidden' })
  })

  await t.test('search by name and by key', async (t) => {
    await page.getByLabel('Search by name').fill('batch-')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2)
    t.equal(await rowOf('ci-token').count(), 0, 'the search by name shows only matching tokens')

    await page.getByLabel('Search by name').fill('')
    await page.getByLabel('Search by key').fill(ciKey)
    await page.getByRole('button', { name: 'Search' }).click()
    await rowOf('ci-token').waitFor()
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1)
    t.pass('the search by key finds the token')
    await page.getByLabel('Search by key').fill('')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 4)
  })

  await t.test('deleting asks first and removes the key everywhere', async (t) => {
    const id = (await db.selectFrom('tokens').select('id').where('name', '=', 'renamed').executeTakeFirstOrThrow()).id
    // The first of the batch kept the plain name, then was renamed.
    const key = batchKeys[0]!
    t.equal(await gatewayStatus(system.url, key), 200, 'the key works before the delete')
    await rowOf('renamed').getByRole('button', { name: 'Delete' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete token' })
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await page.getByText('Token deleted').waitFor()
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 3)
    const row = await db.selectFrom('tokens').select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow()
    t.not(row.deleted_at, null, 'marked deleted')
    t.equal(await gatewayBecomes(system.url, key, 401, 1000), 401, 'the gateway refuses the deleted key')
  })

  await t.test('the page size is remembered', async (t) => {
    await page.getByRole('combobox', { name: /Rows per page/ }).click()
    await page.getByRole('option', { name: '10', exact: true }).click()
    await page.reload()
    await rowOf('ci-token').waitFor()
    t.equal(await page.getByRole('combobox', { name: /Rows per page/ }).textContent(), '10')
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'token-1280')
  })

  await t.test('at 600 px the list scrolls inside its box and the drawer fills the width', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'alice', 'alice-pass-1')
    await narrow.goto('/token')
    await narrow.getByRole('cell', { name: 'ci-token', exact: true }).waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'token-600')
    await narrow.getByRole('button', { name: 'Add token' }).click()
    const form = narrow.getByRole('form', { name: 'Add token' })
    await form.getByLabel('Name').waitFor()
    const width = await form.evaluate((el) => el.getBoundingClientRect().width)
    t.equal(Math.round(width), NARROW.width, 'the drawer is full width')
    await screenshot(narrow, 'token-drawer-600')
  })
})
