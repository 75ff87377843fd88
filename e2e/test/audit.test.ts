import { readFileSync } from 'node:fs'
import t from 'tap'
import { apiContext, apiSession, login } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, until } from '../src/ui.js'

/** Values that must never reach the page or the export. */
const SECRETS = ['sk-audit-first-secret-1111', 'sk-audit-second-secret-2222', 'smtp-audit-secret-3333', 'adm-password-4444'] as const

t.test('root reads the audit trail: changes made through the API, filters, details and CSV; admins are refused', async (t) => {
  const system = await startSystem(t)
  const root = await apiSession(t, system.url, 'root', '123456')
  const [channel] = await root.call<Array<{ id: number }>>('POST', '/api/channel/', { type: 1, name: 'audit-main', key: SECRETS[0], models: 'gpt-4o' })
  await root.call('PUT', '/api/channel/', { id: channel!.id, name: 'audit-renamed', key: SECRETS[1] })
  await root.call('PUT', '/api/option/', { key: 'SystemName', value: 'Audit Gate' })
  await root.call('POST', '/api/verify', { method: 'password', value: '123456' })
  await root.call('PUT', '/api/option/', { key: 'SMTPToken', value: SECRETS[2] })
  const admin = await root.call<{ id: number }>('POST', '/api/user/', { username: 'adm', password: SECRETS[3], role: 10 })
  const browser = await launchBrowser(t)

  await t.test('an admin (role 10) can call neither the API nor open the page', async (t) => {
    const ctx = await apiContext(t, system.url)
    t.equal((await login(ctx, 'adm', SECRETS[3])).success, true)
    for (const path of ['/api/audit/', '/api/audit/export']) {
      const res = await ctx.get(path, { headers: { 'new-api-user': String(admin.id) } })
      t.equal(res.status(), 403, `${path}: 403`)
    }
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'adm', SECRETS[3])
    await page.goto('/audit')
    await page.getByText('Permission denied: insufficient rights for this page').waitFor()
    t.equal(await page.getByTestId('audit-table').count(), 0, 'no table')
    const menu = page.getByRole('navigation', { name: 'Console' })
    await menu.getByRole('button', { name: 'Logs' }).waitFor()
    t.equal(await menu.getByRole('button', { name: 'Audit trail' }).count(), 0, 'no menu entry for admins')
  })

  for (const viewport of [DESKTOP, NARROW]) {
    const w = viewport.width
    await t.test(`${w}px: entries, the action filter, an entry's before and after, CSV`, async (t) => {
      const page = await openPage(t, browser, system.url, { viewport })
      await signIn(page, 'root', '123456')
      if (w === DESKTOP.width) {
        await page.goto('/log')
        await page.getByRole('navigation', { name: 'Console' }).getByRole('button', { name: 'Audit trail' }).click()
        await page.waitForURL('**/audit')
        t.pass('the menu leads root to the page')
      } else {
        await page.goto('/audit')
      }
      const rows = page.getByTestId('audit-row')
      await rows.first().waitFor()
      const channelRow = rows.filter({ has: page.getByRole('cell', { name: 'channel.update', exact: true }) })
      const optionRows = rows.filter({ has: page.getByRole('cell', { name: 'option.update', exact: true }) })
      await channelRow.first().waitFor()
      t.equal(await channelRow.count(), 1, 'the channel change is listed')
      t.equal(await optionRows.count(), 2, 'both option changes are listed')
      await optionRows.filter({ hasText: 'SystemName' }).waitFor()
      t.match(await channelRow.innerText(), /root/, 'with its actor')
      await screenshot(page, `audit-${w}`)
      await noOverflow(t, page, `${w}px /audit`)

      await page.getByLabel('Action').click()
      await page.getByRole('option', { name: 'channel.update · Channel changed' }).click()
      await page.getByRole('button', { name: 'Query' }).click()
      await until(async () => await rows.count() === 1 && await channelRow.count() === 1)
      t.pass('filtered by action: only the channel change')

      await channelRow.getByRole('button', { name: /^Details of entry/ }).click()
      const dialog = page.getByRole('dialog', { name: /^Audit entry \d+$/ })
      await dialog.waitFor()
      const changes = dialog.getByTestId('audit-changes')
      const line = (field: string) => changes.getByRole('row').filter({ has: page.getByRole('cell', { name: field, exact: true }) })
      t.same(await line('name').getByRole('cell').allInnerTexts(), ['name', 'audit-main', 'audit-renamed'], 'the name before and after')
      t.same(await line('key').getByRole('cell').allInnerTexts(), ['key', '[changed]', '[changed]'], 'the key only as changed')
      await dialog.getByText('key changed').waitFor()
      t.equal(await changes.getByRole('row').count(), 3, 'a header and the two changed fields, nothing else')
      await screenshot(page, `audit-detail-${w}`)
      await noOverflow(t, page, `${w}px audit detail`)
      await dialog.getByRole('button', { name: 'Close' }).click()
      await dialog.waitFor({ state: 'detached' })

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()])
      t.match(download.suggestedFilename(), /^audit-\d{4}-\d{2}-\d{2}\.csv$/)
      const csv = readFileSync(await download.path(), 'utf8').trim().split('\r\n')
      t.equal(csv[0], 'id,time,actor_id,actor_name,actor_role,ip,action,target_type,target_id,changes,note')
      t.equal(csv.length, 2, 'the export applies the filter: one entry')
      t.match(csv[1], /,root,100,.*,channel\.update,channel,\d+,.*,key changed$/)

      await page.getByRole('button', { name: 'Reset filters' }).click()
      await until(async () => await rows.count() >= 5)
      const [all] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()])
      const everything = readFileSync(await all.path(), 'utf8')
      t.match(everything, /,option\.update,option,SMTPToken,/, 'the secret option change is exported')
      const html = await page.content()
      for (const secret of SECRETS) {
        t.notOk(everything.includes(secret), `${w}px: the CSV holds no ${secret.slice(0, 10)}…`)
        t.notOk(html.includes(secret), `${w}px: the page holds no ${secret.slice(0, 10)}…`)
      }
      // Open every entry's details: none shows a secret either.
      for (let i = 0; i < await rows.count(); i++) {
        await rows.nth(i).getByRole('button', { name: /^Details of entry/ }).click()
        const open = page.getByRole('dialog', { name: /^Audit entry \d+$/ })
        await open.waitFor()
        const text = await open.innerText()
        for (const secret of SECRETS) t.notOk(text.includes(secret), `entry ${i}: no ${secret.slice(0, 10)}…`)
        await open.getByRole('button', { name: 'Close' }).click()
        await open.waitFor({ state: 'detached' })
      }
    })
  }
})
