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

/** A call made through a signed-in page (the console's CSRF header included). */
async function call<T> (page: Page, userId: number, method: 'post' | 'put', path: string, data: unknown): Promise<T> {
  const res = await page.request[method](path, { data, headers: { 'new-api-user': String(userId) } })
  const body = await res.json() as { success: boolean, message: string, data: T }
  if (!body.success) throw new Error(`${method} ${path} failed: ${body.message}`)
  return body.data
}

t.test('the super admin adds, edits, disables, promotes and deregisters users; a regular admin cannot promote', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const root = await signIn(page, 'root', '123456')
  const live = async (username: string) => await db.selectFrom('users').selectAll().where('username', '=', username).where('deleted_at', 'is', null).executeTakeFirstOrThrow()
  let carolId = 0

  await page.goto('/user')
  const rootRow = page.getByTestId(`user-row-${root.id}`)
  await rootRow.getByText('Super admin').waitFor()

  await t.test('the list opens with 50 rows a page and the super admin has no actions on itself', async (t) => {
    t.equal(await page.getByRole('combobox', { name: 'Rows per page' }).textContent(), '50', 'the user screen defaults to 50')
    t.equal(await rootRow.getByRole('button').count(), 0, 'no action buttons on the super admin row')
    await rootRow.getByLabel('No actions: same or higher role').waitFor()
  })

  await t.test('adding a user through the drawer creates the account', async (t) => {
    await page.getByRole('button', { name: 'Add user' }).click()
    const form = page.getByRole('form', { name: 'Add user' })
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('Username and password cannot be empty').first().waitFor()
    t.pass('username and password are required')
    await form.getByLabel('Username').fill('carol')
    await form.getByLabel('Display name').fill('Carol C')
    await form.getByLabel('Password').fill('carol-pass-1')
    await screenshot(page, 'user-add-1280')
    await form.getByRole('button', { name: 'Create' }).click()
    await page.getByText('User account created').waitFor()
    const carol = await live('carol')
    carolId = carol.id
    t.equal(carol.display_name, 'Carol C')
    t.equal(carol.role, 1)
    const row = page.getByTestId(`user-row-${carolId}`)
    await row.getByText('Carol C').waitFor()
    await row.getByText('Active').waitFor()
    t.pass('the new user is listed')
  })

  await t.test('the edit drawer adds quota through the helper and writes a manage log', async (t) => {
    const before = (await live('carol')).quota
    await page.getByTestId(`user-row-${carolId}`).getByRole('button', { name: 'Edit' }).click()
    await page.waitForURL(`**/user/edit/${carolId}`)
    const form = page.getByRole('form', { name: 'Edit user' })
    await until(async () => await form.getByLabel('Username').inputValue() === 'carol')
    t.equal(await form.getByLabel('Remaining quota').inputValue(), String(before), 'the quota is shown as an integer')
    const bindings = form.getByRole('region', { name: 'Bindings (read only)' })
    t.equal(await bindings.getByRole('textbox').count(), 5, 'email, GitHub, WeChat, Telegram and LinuxDO are shown')
    t.equal(await bindings.getByLabel('GitHub').inputValue(), 'Not bound')
    t.equal(await bindings.getByLabel('Email').getAttribute('readonly'), '', 'bindings are read only')

    await form.getByLabel('New password').fill('short')
    await form.getByRole('button', { name: 'Save' }).click()
    await form.getByText('The password must be 8 to 20 characters').waitFor()
    await form.getByLabel('New password').fill('')
    await form.getByLabel('Add quota').fill(String(-(before + 1)))
    await form.getByRole('button', { name: 'Save' }).click()
    await form.getByText('The balance cannot go below zero').waitFor()
    t.pass('a short password and a negative balance are refused in the form')

    await form.getByLabel('Add quota').fill('1000')
    // Currency display is on by default: dollars, with the units alongside.
    await form.getByText(new RegExp(`New balance: \\$\\d+\\.\\d\\d \\(${before + 1000}\\)`)).waitFor()
    await form.getByLabel('Group').click()
    await page.getByRole('option', { name: 'vip', exact: true }).click()
    await page.getByRole('listbox').waitFor({ state: 'detached' })
    await screenshot(page, 'user-edit-1280')
    await form.getByRole('button', { name: 'Save' }).click()
    await page.getByText('User information updated').waitFor()
    await page.waitForURL((u) => u.pathname === '/user')
    const after = await live('carol')
    t.equal(after.quota, before + 1000, 'users.quota grew by 1000')
    t.equal(after.group, 'vip', 'the group chosen is saved')
    const log = await db.selectFrom('logs').selectAll().where('user_id', '=', carolId).where('type', '=', 3).executeTakeFirstOrThrow()
    t.equal(log.quota, 1000, 'a manage log records the change')
    t.match(log.content, /admin root/)
    await page.getByTestId(`user-row-${carolId}`).getByText('vip').waitFor()
  })

  await t.test('disable and enable change the status in place', async (t) => {
    const row = page.getByTestId(`user-row-${carolId}`)
    await row.getByRole('button', { name: 'Disable' }).click()
    await row.getByText('Banned').waitFor()
    t.equal((await live('carol')).status, 2, 'stored as banned')
    await row.getByRole('button', { name: 'Enable' }).click()
    await row.getByText('Active').waitFor()
    t.equal((await live('carol')).status, 1, 'active again')
  })

  await t.test('the super admin promotes to admin and the row shows the new role', async (t) => {
    const row = page.getByTestId(`user-row-${carolId}`)
    await row.getByRole('button', { name: 'Promote to admin' }).click()
    await row.getByText('Admin', { exact: true }).waitFor()
    t.equal((await live('carol')).role, 10, 'role 10 in the database')
    t.equal(await row.getByRole('button', { name: 'Promote to admin' }).count(), 0, 'no promote on an admin')
    await row.getByRole('button', { name: 'Demote to user' }).waitFor()
    t.pass('the super admin may demote an admin')
  })

  await t.test('a regular admin has no promote action and no action on same or higher roles', async (t) => {
    await call(page, root.id, 'post', '/api/user/', { username: 'dave', password: 'dave-pass-1', display_name: 'Dave' })
    const dave = await live('dave')
    const admin = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(admin, 'carol', 'carol-pass-1')
    await admin.goto('/user')
    const daveRow = admin.getByTestId(`user-row-${dave.id}`)
    await daveRow.getByText('Active').waitFor()
    t.equal(await admin.getByRole('button', { name: 'Promote to admin' }).count(), 0, 'no promote action anywhere')
    t.equal(await admin.getByRole('button', { name: 'Demote to user' }).count(), 0, 'no demote action anywhere')
    await daveRow.getByRole('button', { name: 'Disable' }).waitFor()
    await daveRow.getByRole('button', { name: 'Edit' }).waitFor()
    await daveRow.getByRole('button', { name: 'Deregister' }).waitFor()
    t.pass('a regular admin still manages normal users')
    t.equal(await admin.getByTestId(`user-row-${root.id}`).count(), 0, 'the super admin is not even listed')
    const own = admin.getByTestId(`user-row-${carolId}`)
    await own.getByText('Admin', { exact: true }).waitFor()
    t.equal(await own.getByRole('button').count(), 0, 'no action on an admin of the same role')
    // The server agrees: a regular admin promoting gets a permission error.
    const res = await admin.request.post('/api/user/manage', { data: { id: dave.id, action: 'promote' }, headers: { 'new-api-user': String(carolId) } })
    t.equal((await res.json() as { success: boolean }).success, false, 'the API refuses the promotion too')
    await screenshot(admin, 'user-admin-view-1280')
  })

  await t.test('deregistering asks first, then shows the user as deregistered without actions', async (t) => {
    await page.reload()
    const dave = await live('dave')
    const row = page.getByTestId(`user-row-${dave.id}`)
    await row.getByRole('button', { name: 'Deregister' }).click()
    const dialog = page.getByRole('dialog', { name: 'Deregister user' })
    await dialog.getByText('Deregister "dave"?', { exact: false }).waitFor()
    await dialog.getByRole('button', { name: 'Deregister' }).click()
    await row.getByText('Deregistered').waitFor()
    t.equal(await row.getByRole('button').count(), 0, 'no further actions')
    const stored = await db.selectFrom('users').select(['deleted_at']).where('id', '=', dave.id).executeTakeFirstOrThrow()
    t.not(stored.deleted_at, null, 'marked deleted in the database')
  })

  await t.test('search, deep links and the remembered page size', async (t) => {
    await page.getByLabel('Search by ID, username, display name or email').fill('caro')
    await page.getByRole('button', { name: 'Search' }).click()
    await until(async () => await page.locator('tbody tr').count() === 1)
    await page.getByTestId(`user-row-${carolId}`).waitFor()
    t.pass('search by part of the username')

    await page.goto(`/user/edit/${carolId}`)
    const form = page.getByRole('form', { name: 'Edit user' })
    await until(async () => await form.getByLabel('Username').inputValue() === 'carol')
    t.pass('/user/edit/{id} opens the edit drawer')
    await form.getByRole('button', { name: 'Close' }).click()
    await page.waitForURL((u) => u.pathname === '/user')
    await page.goto('/user/edit')
    await page.waitForURL((u) => u.pathname === '/setting')
    t.pass('/user/edit without an id is the personal settings')

    await page.goto('/user')
    await page.getByRole('combobox', { name: 'Rows per page' }).click()
    await page.getByRole('option', { name: '10', exact: true }).click()
    await page.reload()
    await rootRow.waitFor()
    t.equal(await page.getByRole('combobox', { name: 'Rows per page' }).textContent(), '10', 'the size survives a reload')
    t.equal(await page.evaluate(() => localStorage.getItem('user-page-size')), '10', 'under its own key')
    t.equal(await page.evaluate(() => localStorage.getItem('page-size')), null, 'the shared size is untouched')
  })

  await t.test('both widths fit the window', async (t) => {
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'user-1280')
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/user')
    await narrow.getByTestId(`user-row-${carolId}`).waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'user-600')
    await narrow.goto(`/user/edit/${carolId}`)
    const form = narrow.getByRole('form', { name: 'Edit user' })
    await until(async () => await form.getByLabel('Username').inputValue() === 'carol')
    const width = await form.evaluate((el) => el.getBoundingClientRect().width)
    t.equal(Math.round(width), NARROW.width, 'the drawer is full width')
    await screenshot(narrow, 'user-edit-600')
  })
})
