import { createDb } from '@modelgate/db'
import type { Locator, Page } from 'playwright-core'
import t from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { confirmIdentity, noOverflow, toast, until } from '../src/ui.js'

const card = (page: Page, id: string): Locator => page.getByTestId(`option-card-${id}`)
const save = async (page: Page, id: string) => { await card(page, id).getByRole('button', { name: 'Save', exact: true }).click() }

t.test('the super admin\'s operation, system and other tabs change the running system', async (t) => {
  const system = await startSystem(t)
  const db = createDb(system.env.DATABASE_URL!, { max: 2 })
  t.teardown(() => db.destroy())
  const root = await apiSession(t, system.url, 'root', '123456')
  const option = async (key: string) => (await root.call<Array<{ key: string, value: string }>>('GET', '/api/option/')).find((o) => o.key === key)?.value

  // gpt-4o is on sale only while a channel serves it; the upstream is never called here.
  await root.call('POST', '/api/channel/', { type: 1, name: 'main', key: 'sk-a', base_url: 'http://127.0.0.1:9', models: 'gpt-4o', groups: 'default' })
  const ops = await root.call<{ id: number }>('POST', '/api/user/', { username: 'ops', password: 'ops-secret-1' })
  await root.call('POST', '/api/user/manage', { id: ops.id, action: 'promote' })
  // Three logs from 2020 and one from now: clearing before 2021 removes exactly three.
  const old = Date.UTC(2020, 5, 1) / 1000
  await db.insertInto('logs').values([
    { created_at: old, type: 2, username: 'root', model_name: 'gpt-4o', content: 'old 1' },
    { created_at: old + 3600, type: 2, username: 'root', model_name: 'gpt-4o', content: 'old 2' },
    { created_at: old + 86400 * 30, type: 1, username: 'root', content: 'old 3' },
    { created_at: Math.floor(Date.now() / 1000), type: 2, username: 'root', model_name: 'gpt-4o', content: 'recent' }
  ]).execute()

  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'root', '123456')

  // Other tab: a new system name reaches the top bar through the status object, without a reload.
  await page.goto('/setting?tab=other')
  await page.evaluate(() => { (window as unknown as { marker: string }).marker = 'same page' })
  await card(page, 'brand').getByLabel('System name').fill('Acme Gateway')
  await save(page, 'brand')
  await toast(page, 'success', 'Saved')
  await page.getByRole('banner').getByText('Acme Gateway').waitFor()
  t.equal(await page.evaluate(() => (window as unknown as { marker?: string }).marker), 'same page', 'the top bar changed without a page load')
  const status = await (await page.request.get('/api/status')).json() as { data: { system_name: string } }
  t.equal(status.data.system_name, 'Acme Gateway', '/api/status answers the new name')
  await save(page, 'brand')
  await toast(page, 'warning', 'Nothing changed')
  t.pass('saving again without a change warns that nothing changed')
  await card(page, 'notice').getByLabel('Notice').fill('**Maintenance** on Sunday')
  await card(page, 'notice').getByRole('button', { name: 'Preview' }).click()
  t.equal(await page.getByTestId('preview-notice').locator('strong').innerText(), 'Maintenance', 'the notice preview renders Markdown')
  await save(page, 'notice')
  await toast(page, 'success', 'Saved')
  t.equal(await option('Notice'), '**Maintenance** on Sunday')
  await screenshot(page, 'admin-settings-other-1280')

  // Operation tab, visual pricing editor: a new ratio is stored and priced.
  await page.getByRole('tab', { name: 'Operation' }).click()
  // The dashboard interval is stored for compatibility but does nothing, and says so.
  const dashboard = card(page, 'dashboard')
  await dashboard.getByText('Not used: dashboard data is recorded when each request settles, so this interval does not apply. Stored for compatibility.').waitFor()
  t.ok(await dashboard.getByLabel('Update interval (minutes)').isEditable(), 'the interval stays editable')
  const visual = page.getByTestId('ratio-visual')
  await visual.getByLabel('Search models').fill('gpt-4o')
  const row = visual.getByTestId('ratio-row-gpt-4o')
  t.equal(await row.getByTestId('ratio-ratio').innerText(), '1.25', 'gpt-4o starts at its default ratio')
  await row.getByRole('button', { name: 'Edit gpt-4o' }).click()
  const dialog = page.getByRole('dialog', { name: 'Edit gpt-4o' })
  await dialog.getByLabel('Ratio', { exact: true }).fill('abc')
  await dialog.getByRole('button', { name: 'Confirm' }).click()
  await dialog.getByText('Must be a number of at least 0').waitFor()
  t.pass('a ratio that is not a number is refused')
  await dialog.getByLabel('Ratio', { exact: true }).fill('2.5')
  await dialog.getByRole('button', { name: 'Confirm' }).click()
  await dialog.waitFor({ state: 'detached' })
  t.equal(await row.getByTestId('ratio-ratio').innerText(), '2.5')
  await toast(page, 'success', 'Saved')
  t.equal((JSON.parse(await option('ModelRatio') ?? '{}') as Record<string, number>)['gpt-4o'], 2.5, 'the dialog\'s Confirm saves: no second save needed')

  await visual.getByRole('button', { name: 'Add model' }).click()
  const add = page.getByRole('dialog', { name: 'Add a model' })
  await add.getByLabel('Model name').fill('gpt-4o')
  await add.getByLabel('Ratio', { exact: true }).fill('1')
  await add.getByRole('button', { name: 'Confirm' }).click()
  await add.getByText('Model gpt-4o already exists').waitFor()
  t.pass('a duplicate model name is refused')
  await add.getByLabel('Model name').fill('flat-model')
  await add.getByLabel('Fixed price ($ per call)').fill('0.02')
  t.ok(await add.getByLabel('Ratio', { exact: true }).isDisabled(), 'a fixed price disables the ratio')
  t.ok(await add.getByLabel('Completion ratio').isDisabled(), 'a fixed price disables the completion ratio')
  await add.getByRole('button', { name: 'Confirm' }).click()
  await add.waitFor({ state: 'detached' })
  await visual.getByLabel('Search models').fill('flat')
  t.equal(await visual.getByTestId('ratio-row-flat-model').getByTestId('ratio-price').innerText(), '0.02')
  await until(async () => 'flat-model' in (JSON.parse(await option('ModelPrice') ?? '{}') as Record<string, number>), 15_000)
  t.pass('an added row is saved as it is confirmed')
  const ratios = JSON.parse(await option('ModelRatio') ?? '{}') as Record<string, number>
  const prices = JSON.parse(await option('ModelPrice') ?? '{}') as Record<string, number>
  t.equal(ratios['gpt-4o'], 2.5, 'GET /api/option/ has the new ratio')
  t.equal(prices['flat-model'], 0.02, 'the priced row is stored as a price')
  t.notOk('flat-model' in ratios, 'and only as a price')
  // The control plane's options reach every replica through the change channel: polled, not read once.
  const pricedAt = async () => ((await (await page.request.get('/api/pricing')).json()) as { data: Array<{ model_name: string, model_ratio: number }> })
    .data.find((p) => p.model_name === 'gpt-4o')?.model_ratio
  await until(async () => await pricedAt() === 2.5, 15_000).catch(() => {})
  t.equal(await pricedAt(), 2.5, 'GET /api/pricing prices gpt-4o at the new ratio')
  await card(page, 'ratio').getByRole('tab', { name: 'JSON' }).click()
  t.match(await card(page, 'ratio').getByLabel('Model ratios').inputValue(), /"gpt-4o": 2\.5,/, 'the JSON editor shows the same maps')
  await card(page, 'ratio').getByRole('button', { name: 'Reset model ratios' }).click()
  await page.getByRole('dialog', { name: 'Reset model ratios?' }).getByRole('button', { name: 'Reset model ratios' }).click()
  await toast(page, 'success', 'Model ratios reset')
  t.equal((JSON.parse(await option('ModelRatio') ?? '{}') as Record<string, number>)['gpt-4o'], 1.25, 'the reset restores the default ratio')
  t.notOk('flat-model' in (JSON.parse(await option('ModelPrice') ?? '{}') as Record<string, number>), 'and drops the added price')
  t.match(await card(page, 'ratio').getByLabel('Model ratios').inputValue(), /"gpt-4o": 1\.25,/, 'the editor shows the defaults again')

  // Group settings: broken JSON and repeated names are refused before anything is sent.
  const groups = card(page, 'groups').getByLabel('Group ratios')
  const storedGroups = await option('GroupRatio')
  await groups.fill('{"default": 1,')
  await save(page, 'groups')
  t.match(await toast(page, 'error', 'is not valid JSON'), /^Group ratios is not valid JSON/, 'invalid JSON is refused with a message')
  await groups.fill('{"default": 1, "vip": 2, "vip": 3}')
  await save(page, 'groups')
  await toast(page, 'error', 'the name vip appears more than once')
  t.equal(await option('GroupRatio'), storedGroups, 'the group ratios did not change')
  await save(page, 'general')
  await toast(page, 'warning', 'Nothing changed')

  // Log card: clearing before 2021 deletes the three old rows and says so.
  const logs = card(page, 'log')
  await logs.getByLabel('Logs created before').fill('2021-01-01T00:00')
  await logs.getByRole('button', { name: 'Clear logs' }).click()
  await page.getByRole('dialog', { name: 'Clear logs?' }).getByRole('button', { name: 'Clear logs' }).click()
  await toast(page, 'success', '3 logs cleared')
  t.equal(await logs.getByTestId('logs-cleared').innerText(), '3 logs cleared', 'the count is shown')
  const left = await db.selectFrom('logs').select('content').execute()
  t.same(left.map((l) => l.content).filter((c) => c.startsWith('old') || c === 'recent'), ['recent'], 'the old rows are gone, the recent one stays')
  await screenshot(page, 'admin-settings-operation-1280')

  // System tab.
  await page.getByRole('tab', { name: 'System' }).click()
  await card(page, 'server').getByLabel('Server address').fill('https://gw.example.com//')
  await save(page, 'server')
  await toast(page, 'success', 'Saved')
  t.equal(await option('ServerAddress'), 'https://gw.example.com', 'trailing slashes are stripped')
  t.equal(await card(page, 'server').getByLabel('Server address').inputValue(), 'https://gw.example.com')
  // The worker is stored for compatibility but not used, and the card says so.
  const worker = card(page, 'worker')
  await worker.getByText('Not used yet: this gateway does not fetch user-supplied URLs.', { exact: true }).waitFor()
  await worker.getByText(/image and file links in requests go to the upstream as sent/).waitFor()
  t.ok(await worker.getByLabel('Worker address').isEditable() && await worker.getByLabel('Worker key').isEditable(), 'the worker fields stay editable')
  await card(page, 'worker').getByLabel('Worker address').fill('ftp://worker.example.com')
  await save(page, 'worker')
  t.match(await toast(page, 'error', 'WorkerUrl must be an http(s) address'), /^Save failed, please retry/, 'the server\'s refusal is shown')

  const login = card(page, 'login')
  const passwordLogin = login.getByLabel('Password login', { exact: true })
  await passwordLogin.click()
  const confirm = page.getByRole('dialog', { name: 'Turn off password login?' })
  await confirm.getByText('administrators included').waitFor()
  await confirm.getByRole('button', { name: 'Cancel' }).click()
  t.ok(await passwordLogin.isChecked(), 'cancelling keeps password login on')
  await passwordLogin.click()
  await confirm.getByRole('button', { name: 'Turn off' }).click()
  t.notOk(await passwordLogin.isChecked())
  await save(page, 'login')
  await toast(page, 'success', 'Saved')
  t.equal(await option('PasswordLoginEnabled'), 'false', 'password login is off after the confirmation')
  // Back on, so that the narrow pass can sign in with a password.
  await root.call('PUT', '/api/option/', { key: 'PasswordLoginEnabled', value: 'true' })

  const whitelist = card(page, 'whitelist')
  await whitelist.getByLabel('Domain').fill('gmail.com')
  await whitelist.getByRole('button', { name: 'Add' }).click()
  await toast(page, 'warning', 'gmail.com is already in the list')
  await whitelist.getByLabel('Domain').fill('@Example.org')
  await whitelist.getByRole('button', { name: 'Add' }).click()
  await whitelist.getByTestId('whitelist-domains').getByText('example.org').waitFor()
  await save(page, 'whitelist')
  await toast(page, 'success', 'Saved')
  t.match(await option('EmailDomainWhitelist'), /,example\.org$/, 'the new domain is stored once, lower-cased')

  await card(page, 'smtp').getByLabel('SMTP password or token').fill('mail-secret')
  await save(page, 'smtp')
  // A credential needs a fresh secure verification: the dialog asks for root's password, then the save goes on.
  await confirmIdentity(page, '123456')
  await toast(page, 'success', 'Saved')
  const smtp = await db.selectFrom('options').select('value').where('key', '=', 'SMTPToken').executeTakeFirst()
  t.equal(smtp?.value, 'mail-secret', 'a credential is stored')
  t.equal(await card(page, 'smtp').getByLabel('SMTP password or token').inputValue(), '', 'and not shown again')
  await save(page, 'smtp')
  await toast(page, 'warning', 'Nothing changed')
  t.pass('a blank credential keeps the stored one')
  await screenshot(page, 'admin-settings-system-1280')
  // Clearing a credential is its own, confirmed action (a blank field keeps it).
  await card(page, 'smtp').getByRole('button', { name: 'Clear' }).click()
  const clearDialog = page.getByRole('dialog', { name: 'Clear SMTP password or token?' })
  await clearDialog.getByRole('button', { name: 'Clear' }).click()
  await toast(page, 'success', 'SMTP password or token cleared')
  t.equal((await db.selectFrom('options').select('value').where('key', '=', 'SMTPToken').executeTakeFirst())?.value ?? '', '', 'the credential is removed')
  t.equal(await card(page, 'smtp').getByRole('button', { name: 'Clear' }).count(), 0, 'nothing left to clear')
  t.equal(await card(page, 'smtp').getByLabel('SMTP password or token').getAttribute('placeholder'), 'Not set')

  // An admin (role 10) sees only the personal tab, whatever the address asks for.
  const admin = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(admin, 'ops', 'ops-secret-1')
  for (const path of ['/setting', '/setting?tab=system', '/setting?tab=operation']) {
    await admin.goto(path)
    await admin.getByTestId('personal-bindings').waitFor()
    t.equal(await admin.getByRole('tab').count(), 0, `${path}: no super-admin tabs for an admin`)
    t.equal(await admin.getByTestId(/^option-card-/).count(), 0, `${path}: no option cards`)
  }
})

t.test('each tab at 600 px: usable and no wider than the window', async (t) => {
  const system = await startSystem(t)
  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  await signIn(page, 'root', '123456')
  for (const tab of ['operation', 'system', 'other'] as const) {
    await page.goto(`/setting?tab=${tab}`)
    await page.getByTestId(/^option-card-/).first().waitFor()
    await noOverflow(t, page, `${tab} tab at 600 px`)
    await screenshot(page, `admin-settings-${tab}-600`)
  }
  await page.goto('/setting?tab=operation')
  await page.getByTestId('ratio-visual').getByRole('button', { name: 'Add model' }).click()
  const add = page.getByRole('dialog', { name: 'Add a model' })
  await add.getByLabel('Model name').fill('narrow-model')
  await add.getByLabel('Ratio', { exact: true }).fill('0.5')
  await add.getByRole('button', { name: 'Confirm' }).click()
  await page.getByTestId('ratio-visual').getByTestId('ratio-row-narrow-model').waitFor()
  await noOverflow(t, page, 'the visual editor with a new row at 600 px')
})
