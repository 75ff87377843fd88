import { createHash } from 'node:crypto'
import type { Page } from 'playwright-core'
import t from 'tap'
import { apiSession, pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast, until } from '../src/ui.js'
import { fakeOpenAI } from '../src/upstream.js'

const KEY_1 = 'sk-alive-one-1111'
const DEAD = 'sk-dead-two-2222'
const KEY_3 = 'sk-alive-three-3333'
/** The name a key's state goes by: the first 16 hex digits of its SHA-256. */
const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16)

t.test('an admin runs a channel with several keys: overrides, mode, per-key tests and states', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const upstream = await fakeOpenAI(t, { models: ['gpt-4o-mini'], deadKeys: [DEAD] })
  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(page, 'root', '123456')
  const stored = async () => await db.selectFrom('channels').selectAll().where('name', '=', 'multi').executeTakeFirstOrThrow()
  const dialogShown = async (dialog: ReturnType<typeof page.getByRole>) => {
    await dialog.waitFor()
    await until(async () => await dialog.evaluate((el) => getComputedStyle(el.parentElement!).opacity === '1'))
  }

  await page.goto('/channel')
  await page.getByText('No channels yet').waitFor()

  let id = 0
  await t.test('the drawer sets the overrides, the multi-key mode and max input tokens', async (t) => {
    await page.getByRole('button', { name: 'Add channel' }).click()
    const form = page.getByRole('form', { name: 'Add channel' })
    await form.getByRole('combobox', { name: 'Type' }).getByText('OpenAI').waitFor()
    await form.getByLabel('Base URL').fill(upstream.url)
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('multi')
    await form.getByLabel('Custom model names').fill('gpt-4o-mini')
    await form.getByRole('button', { name: 'Add', exact: true }).click()

    const key = form.getByRole('textbox', { name: 'Key', exact: true })
    await key.fill(KEY_1)
    t.equal(await form.getByRole('combobox', { name: 'Multi-key mode' }).count(), 0, 'no mode for a single key')
    await key.fill([KEY_1, DEAD, KEY_3].join('\n'))
    await form.getByRole('combobox', { name: 'Multi-key mode' }).click()
    await page.getByRole('option', { name: 'Round robin' }).click()
    t.pass('several key lines offer the multi-key mode')

    await form.getByLabel('Parameter override').fill('{"temperature": ')
    await form.getByLabel('Header override').fill('{"X-Upstream-Key": 1}')
    await form.getByLabel('Max input tokens').fill('-5')
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('The parameter override must be a valid JSON object').waitFor()
    await form.getByText('The header override must be a JSON object of header names to one-line text values').waitFor()
    await form.getByText('Max input tokens must be a whole number of 0 or more').waitFor()
    t.pass('bad overrides and limits are shown before sending')

    await form.getByLabel('Parameter override').fill('{"temperature": 0.3}')
    await form.getByLabel('Header override').fill('{"X-Upstream-Key": "key={api_key}"}')
    await form.getByLabel('Max input tokens').fill('100000')
    await form.getByText('{api_key} stands for the key used', { exact: false }).waitFor()
    await screenshot(page, 'channel-drawer-overrides-1280')
    await form.getByRole('button', { name: 'Create' }).click()
    await toast(page, 'success', 'Channel created')
    await page.waitForURL((u) => u.pathname === '/channel')

    const row = await stored()
    id = row.id
    t.same(JSON.parse(row.param_override), { temperature: 0.3 })
    t.same(JSON.parse(row.header_override), { 'X-Upstream-Key': 'key={api_key}' })
    t.equal(row.multi_key_mode, 'polling')
    t.equal(row.max_input_tokens, 100000)

    await page.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('form', { name: 'Edit channel' })
    await until(async () => await edit.getByRole('textbox', { name: 'Name', exact: true }).inputValue() === 'multi')
    t.equal(await edit.getByRole('combobox', { name: 'Multi-key mode' }).textContent(), 'Round robin', 'the stored keys keep the mode shown')
    t.same(JSON.parse(await edit.getByLabel('Parameter override').inputValue()), { temperature: 0.3 })
    t.same(JSON.parse(await edit.getByLabel('Header override').inputValue()), { 'X-Upstream-Key': 'key={api_key}' })
    t.equal(await edit.getByLabel('Max input tokens').inputValue(), '100000')
    await edit.getByRole('combobox', { name: 'Multi-key mode' }).click()
    await page.getByRole('option', { name: 'Random' }).click()
    await edit.getByRole('button', { name: 'Save' }).click()
    await toast(page, 'success', 'Channel updated')
    t.equal((await stored()).multi_key_mode, 'random', 'an edit changes the mode')
    t.equal((await stored()).param_override, row.param_override, 'and keeps the rest')
  })

  await t.test('testing the channel auto-disables the dead key only', async (t) => {
    const line = page.getByTestId(`channel-row-${id}`)
    await line.getByRole('button', { name: 'Test', exact: true }).click()
    const shown = await toast(page, 'success', /2 of 3 keys passed/)
    t.match(shown, /Key 2 failed: upstream answered HTTP 401 \(invalid_api_key\): Incorrect API key provided\. Key 2 has been auto-disabled\./)
    await line.getByText('Enabled', { exact: true }).waitFor()
    t.equal((await stored()).status, 1, 'the channel stays enabled')
    const sent = upstream.chats.filter((c) => c.headers['x-upstream-key'] !== undefined)
    t.same(sent.map((c) => c.headers['x-upstream-key']).sort(), [`key=${KEY_1}`, `key=${DEAD}`, `key=${KEY_3}`].sort(), 'each key was sent with its header override')
    t.ok(sent.every((c) => c.body.temperature === 0.3), 'and the parameter override')
  })

  await t.test('the keys dialog shows each key, tests one and disables and enables another', async (t) => {
    await page.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Keys' }).click()
    const dialog = page.getByRole('dialog', { name: 'Keys of multi' })
    await dialogShown(dialog)
    const row = (i: number) => dialog.getByTestId(`key-row-${i}`)
    await row(2).waitFor()
    t.equal(await row(0).getByRole('cell').nth(1).textContent(), 'sk-…1111', 'keys are masked')
    await row(0).getByText('Enabled', { exact: true }).waitFor()
    await row(1).getByText('Auto-disabled', { exact: true }).waitFor()
    await row(1).getByText('Reason: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided').waitFor()
    t.equal(await row(1).getByText(/^Last error/).count(), 0, 'an error that is the reason is shown once')
    await row(2).getByText('Enabled', { exact: true }).waitFor()
    t.notOk((await dialog.textContent())?.includes('alive-one'), 'no key is shown whole')
    await noOverflow(t, page, '1280px keys dialog')
    await screenshot(page, 'channel-keys-1280')

    const before = upstream.keys.length
    await dialog.getByRole('button', { name: 'Test key 1' }).click()
    t.match(await toast(page, 'success', 'Key 1 of channel multi passed'), /^Key 1 of channel multi passed the test with gpt-4o-mini in \d+\.\d\d s\.$/)
    t.same(upstream.keys.slice(before), [`Bearer ${KEY_1}`], 'only that key was tried')

    await dialog.getByRole('button', { name: 'Test key 2' }).click()
    t.match(await toast(page, 'error', 'Key 2 of channel multi failed'), /Incorrect API key provided/)
    await row(1).getByText('Auto-disabled', { exact: true }).waitFor()

    await dialog.getByRole('button', { name: 'Disable key 3' }).click()
    await toast(page, 'success', 'Key 3 disabled')
    await row(2).getByText('Disabled', { exact: true }).waitFor()
    await row(2).getByText('Reason: disabled by admin root').waitFor()
    const states = (await stored()).key_states
    t.match(states, { [fingerprint(DEAD)]: { status: 3 }, [fingerprint(KEY_3)]: { status: 2 } }, 'the dead key is auto-disabled, key 3 disabled by the admin')
    t.equal((await stored()).status, 1, 'the channel itself is left as it is')

    const untested = upstream.keys.length
    await page.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Test', exact: true }).click()
    await toast(page, 'success', /1 of 2 keys passed/)
    t.notOk(upstream.keys.slice(untested).includes(`Bearer ${KEY_3}`), 'a key an admin disabled is not tested')

    await page.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Keys' }).click()
    await dialogShown(dialog)
    await dialog.getByRole('button', { name: 'Enable key 3' }).click()
    await toast(page, 'success', 'Key 3 enabled')
    await row(2).getByText('Enabled', { exact: true }).waitFor()
    t.match((await stored()).key_states, { [fingerprint(DEAD)]: { status: 3 }, [fingerprint(KEY_3)]: { status: 1, reason: 'enabled by admin root' } })

    await dialog.getByRole('button', { name: 'Enable key 2' }).click()
    await toast(page, 'success', 'Key 2 enabled')
    await row(1).getByText('Reason: enabled by admin root').waitFor()
    await row(1).getByText('Last error: upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided').waitFor()
    t.pass('an admin may enable an auto-disabled key; its last error stays in view')
    await page.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'hidden' })
  })

  await t.test('at 600 px the keys dialog and the drawer fit the window; the table scrolls inside', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/channel')
    await narrow.getByTestId(`channel-row-${id}`).waitFor()
    await noOverflow(t, narrow, '600px list')
    await narrow.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Keys' }).click()
    const dialog = narrow.getByRole('dialog', { name: 'Keys of multi' })
    await dialogShown(dialog)
    await dialog.getByTestId('key-row-2').waitFor()
    await noOverflow(t, narrow, '600px keys dialog')
    const box = await dialog.boundingBox()
    t.ok(box !== null && box.width <= NARROW.width, 'the dialog is no wider than the window')
    const scrolls = await dialog.locator('.MuiTableContainer-root').evaluate((el) => el.scrollWidth > el.clientWidth && getComputedStyle(el).overflowX === 'auto')
    t.ok(scrolls, 'the key table scrolls inside the dialog')
    await screenshot(narrow, 'channel-keys-600')
    await dialog.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'hidden' })

    await narrow.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Edit' }).click()
    const edit = narrow.getByRole('form', { name: 'Edit channel' })
    await edit.getByLabel('Parameter override').waitFor()
    // Once it has slid in, the drawer takes the whole width.
    await until(async () => {
      const box = await edit.boundingBox()
      return box !== null && Math.round(box.x) === 0 && Math.round(box.width) === NARROW.width
    })
    await edit.getByLabel('Parameter override').scrollIntoViewIfNeeded()
    await noOverflow(t, narrow, '600px drawer')
    await screenshot(narrow, 'channel-drawer-overrides-600')
  })
})

t.test('keys are write-only in the console: the drawer shows a hint; root reveals a key through the verification dialog', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const upstream = await fakeOpenAI(t, { models: ['gpt-4o-mini'] })
  const browser = await launchBrowser(t)
  const root = await apiSession(t, system.url, 'root', '123456')
  const [channel] = await root.call<Array<{ id: number }>>('POST', '/api/channel/', { name: 'sealed', type: 1, key: [KEY_1, KEY_3].join('\n'), base_url: upstream.url, models: 'gpt-4o-mini', groups: 'default' })
  const id = channel!.id
  const ops = await root.call<{ id: number }>('POST', '/api/user/', { username: 'ops', password: 'ops-secret-1' })
  await root.call('POST', '/api/user/manage', { id: ops.id, action: 'promote' })
  const reveals = async () => (await db.selectFrom('audit_logs').select(['actor_name', 'target_id']).where('action', '=', 'channel.key.reveal').execute())

  /** Opens the edit drawer of the channel; the bodies of every /api answer the page receives collect in `seen`. */
  const openDrawer = async (page: Page, seen: Array<Promise<string>>) => {
    page.on('response', (res) => {
      if (new URL(res.url()).pathname.startsWith('/api/')) seen.push(res.text().catch(() => ''))
    })
    await page.goto('/channel')
    await page.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit channel' })
    await until(async () => await form.getByRole('textbox', { name: 'Name', exact: true }).inputValue() === 'sealed')
    return form
  }

  await t.test('an admin sees the hint only, and no answer the console gets carries the key', async (t) => {
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'ops', 'ops-secret-1')
    const seen: Array<Promise<string>> = []
    const form = await openDrawer(page, seen)
    await form.getByTestId('stored-key-hint').getByText('Stored: 2 keys, the first sk-…1111').waitFor()
    t.equal(await form.getByRole('textbox', { name: 'Key', exact: true }).inputValue(), '', 'the key field is blank')
    t.equal(await form.getByRole('button', { name: 'Reveal key' }).count(), 0, 'an admin is offered no reveal')
    t.notOk((await form.textContent())?.includes('alive-one'), 'the drawer shows no key')
    const bodies = await Promise.all(seen)
    t.ok(bodies.some((body) => body.includes('"key_hint":"sk-…1111"')), `the channel's own answer was read (${bodies.length} API answers)`)
    t.same(bodies.filter((body) => body.includes(KEY_1) || body.includes(KEY_3) || body.includes('alive-')), [], 'none carries a key')
    const refused = await pageCall(page, ops.id, 'post', `/api/channel/${id}/key`).catch((err: Error) => err.message)
    t.match(refused, /Permission denied/, 'and the reveal route refuses an admin')

    // Pointing the channel elsewhere would send the stored key there: the key must be typed again.
    await form.getByLabel('Base URL').fill('https://collector.example.com')
    await form.getByRole('button', { name: 'Save' }).click()
    await form.getByText('Changing the type, base URL or proxy sends the key somewhere else: enter the key again').waitFor()
    t.equal((await db.selectFrom('channels').select('base_url').where('id', '=', id).executeTakeFirstOrThrow()).base_url, upstream.url, 'nothing was saved')
    await screenshot(page, 'channel-key-elsewhere-1280')
  })

  for (const [viewport, width] of [[DESKTOP, 1280], [NARROW, 600]] as const) {
    await t.test(`at ${width} px root reveals the stored keys once, after verifying again`, async (t) => {
      const page = await openPage(t, browser, system.url, { viewport })
      await signIn(page, 'root', '123456')
      const before = (await reveals()).length
      const seen: Array<Promise<string>> = []
      const form = await openDrawer(page, seen)
      await form.getByTestId('stored-key-hint').getByText('Stored: 2 keys, the first sk-…1111').waitFor()
      t.equal(await form.getByRole('textbox', { name: 'Key', exact: true }).inputValue(), '', 'the key field is blank')
      t.same((await Promise.all(seen)).filter((body) => body.includes(KEY_1)), [], 'nothing loaded so far carries the key')

      // Closing the dialog without verifying reveals nothing.
      await form.getByRole('button', { name: 'Reveal key' }).click()
      const dialog = page.getByTestId('verify-dialog')
      await dialog.getByRole('dialog').waitFor()
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      await dialog.getByRole('dialog').waitFor({ state: 'hidden' })
      await toast(page, 'error', /fresh verification/)
      t.equal(await form.getByLabel('Stored key').count(), 0, 'not verified: no key')
      t.equal((await reveals()).length, before, 'and nothing audited')

      await form.getByRole('button', { name: 'Reveal key' }).click()
      await dialog.getByRole('dialog').waitFor()
      await dialog.getByTestId('verify-password').fill('wrong-password')
      await dialog.getByRole('button', { name: 'Verify' }).click()
      await dialog.getByTestId('verify-error').waitFor()
      t.equal(await form.getByLabel('Stored key').count(), 0, 'a wrong password reveals nothing')
      await dialog.getByTestId('verify-password').fill('123456')
      await dialog.getByRole('button', { name: 'Verify' }).click()
      await dialog.getByRole('dialog').waitFor({ state: 'hidden' })
      const revealed = form.getByLabel('Stored key')
      await revealed.waitFor()
      t.equal(await revealed.inputValue(), [KEY_1, KEY_3].join('\n'), 'the stored keys, one per line')
      t.equal(await form.getByRole('textbox', { name: 'Key', exact: true }).inputValue(), '', 'the key field stays blank')
      await form.getByText('Shown once', { exact: false }).waitFor()
      t.same((await reveals()).slice(before), [{ actor_name: 'root', target_id: String(id) }], 'one audited reveal')
      await noOverflow(t, page, `${width}px drawer with the revealed key`)
      await revealed.scrollIntoViewIfNeeded()
      await screenshot(page, `channel-key-reveal-${width}`)

      // Saving with the key field blank keeps the keys.
      await form.getByRole('textbox', { name: 'Name', exact: true }).fill(`sealed-${width}`)
      await form.getByRole('button', { name: 'Save' }).click()
      await toast(page, 'success', 'Channel updated')
      const row = await db.selectFrom('channels').select(['key', 'name']).where('id', '=', id).executeTakeFirstOrThrow()
      t.equal(row.name, `sealed-${width}`)
      t.equal(system.controlPlane.secrets.open(row.key), [KEY_1, KEY_3].join('\n'), 'an edit with a blank key keeps the keys')
      await root.call('PUT', '/api/channel/', { id, name: 'sealed' })

      // Opened again, the drawer is back to the hint.
      await page.getByTestId(`channel-row-${id}`).getByRole('button', { name: 'Edit' }).click()
      const again = page.getByRole('form', { name: 'Edit channel' })
      await again.getByTestId('stored-key-hint').getByText('Stored: 2 keys, the first sk-…1111').waitFor()
      t.equal(await again.getByLabel('Stored key').count(), 0, 'the revealed key is gone once the drawer closed')
    })
  }
})
