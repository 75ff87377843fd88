import t from 'tap'
import { apiSession, pageCall } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { overflow, until } from '../src/ui.js'
import { fakeOpenAI } from '../src/upstream.js'

/** Milliseconds the fake upstream takes to answer a chat: a test must measure a response time above 0. */
const ANSWER_DELAY_MS = 150

t.test('an admin adds, tests, tags, edits and cleans up channels in the console', async (t) => {
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const upstream = await fakeOpenAI(t, { models: ['gpt-4o-mini', 'my-model'], reply: 'Hello from upstream', delayMs: ANSWER_DELAY_MS })
  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const root = await signIn(page, 'root', '123456')
  const channelOf = async (name: string) => await db.selectFrom('channels').selectAll().where('name', '=', name).executeTakeFirstOrThrow()
  // By test id, not role: while a drawer or dialog is open the rest of the page (toasts included) is aria-hidden.
  const toast = (text: string | RegExp) => page.locator('[data-testid^="toast-"]').filter({ hasText: text }).first()
  /** Closes the toasts on screen, so a screenshot shows what they would cover. */
  const dismissToasts = async () => {
    const close = page.locator('[data-testid^="toast-"] button')
    while (await close.count() > 0) await close.first().click()
  }

  await page.goto('/channel')
  await page.getByText('No channels yet').waitFor()

  let primaryId = 0
  await t.test('a channel added through the drawer with the fetched model list is stored with its routing', async (t) => {
    await page.getByRole('button', { name: 'Add channel' }).click()
    await page.waitForURL((u) => u.pathname === '/channel/add')
    const form = page.getByRole('form', { name: 'Add channel' })
    await form.getByRole('combobox', { name: 'Type' }).getByText('OpenAI').waitFor()

    await form.getByRole('button', { name: 'Clear', exact: true }).click()
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('Please fill in the channel name').waitFor()
    await form.getByText('Please choose at least one model').waitFor()
    t.pass('name, models and key are checked before sending')

    await form.getByLabel('Base URL').fill(`${upstream.url}/`)
    await form.getByRole('button', { name: 'Fetch model list' }).click()
    await toast('Please fill in the key').waitFor()
    t.pass('fetching the model list of a new channel needs a key')

    await form.getByRole('textbox', { name: 'Key', exact: true }).fill('sk-upstream-1')
    await form.getByRole('button', { name: 'Fetch model list' }).click()
    await toast('Fetched 2 models').waitFor()
    await form.getByRole('button', { name: 'my-model', exact: true }).waitFor()
    await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).waitFor()
    t.pass('the fetched models fill the selection')
    const note = form.getByTestId('unpriced-note')
    await note.getByRole('link', { name: 'my-model', exact: true }).waitFor()
    t.match(await note.innerText(), /No price yet, so the relay refuses them/, 'an unpriced model is named in the drawer')
    t.equal(await note.getByRole('link', { name: 'my-model', exact: true }).getAttribute('href'), '/setting?tab=operation&price=my-model', 'with a link to the price editor on it')
    t.equal(await note.getByRole('link', { name: 'gpt-4o-mini', exact: true }).count(), 0, 'priced models are not named')
    await note.scrollIntoViewIfNeeded()
    await screenshot(page, 'channel-unpriced-note-1280')

    await form.getByLabel('Custom model names').fill('my-model')
    await form.getByRole('button', { name: 'Add', exact: true }).click()
    await toast('Some models already exist: my-model').waitFor()
    t.pass('a model already chosen is refused')

    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('primary')
    await form.getByRole('button', { name: 'Fill template' }).click()
    t.equal(await form.getByLabel('Requested model of rule 1').inputValue(), 'gpt-3.5-turbo')
    t.equal(await form.getByLabel('Upstream model of rule 1').inputValue(), 'gpt-3.5-turbo-0125')
    await form.getByRole('button', { name: 'Add rule' }).click()
    await form.getByLabel('Requested model of rule 2').fill('half-filled')
    await form.getByLabel('Status code mapping').fill('{"429": "500"')
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('The status code mapping must be a valid JSON object of HTTP status codes').waitFor()
    await form.getByLabel('Status code mapping').fill('{"429": "500"}')
    await form.getByRole('combobox', { name: 'Type' }).scrollIntoViewIfNeeded()
    await dismissToasts()
    await screenshot(page, 'channel-drawer-1280')
    await form.getByRole('button', { name: 'Create' }).click()
    await toast('Channel created').waitFor()
    await page.waitForURL((u) => u.pathname === '/channel')
    const offer = page.getByRole('dialog', { name: 'New models without a price (1)' })
    await offer.waitFor()
    t.match(await offer.innerText(), /refuses requests for a model without a ratio or a price: my-model\./, 'saved with an unpriced model, root is offered to price it')
    await screenshot(page, 'channel-price-offer-1280')
    await offer.getByRole('button', { name: 'Set prices' }).click()
    const editor = page.getByRole('dialog', { name: 'Add a model' })
    await editor.waitFor()
    t.equal(await editor.getByLabel('Model name').inputValue(), 'my-model', 'the price editor opens on the model')
    await editor.getByRole('button', { name: 'Cancel' }).click()
    await page.goto('/channel')

    const stored = await channelOf('primary')
    primaryId = stored.id
    t.equal(stored.type, 1)
    t.equal(stored.base_url, upstream.url, 'the trailing slash is removed')
    t.equal(stored.models, 'gpt-4o-mini,my-model')
    t.equal(stored.group, 'default')
    t.equal(stored.auto_ban, 1)
    t.same(JSON.parse(stored.model_mapping), { 'gpt-3.5-turbo': 'gpt-3.5-turbo-0125' }, 'the half-filled rule is dropped')
    t.same(JSON.parse(stored.status_code_mapping), { 429: '500' })
    const abilities = await db.selectFrom('abilities').select(['group', 'model', 'enabled']).where('channel_id', '=', stored.id).orderBy('model').execute()
    t.same(abilities, [{ group: 'default', model: 'gpt-4o-mini', enabled: true }, { group: 'default', model: 'my-model', enabled: true }], 'routing rows for every group and model')
    const row = page.getByTestId(`channel-row-${stored.id}`)
    await row.getByText('primary').waitFor()
    await row.getByText('OpenAI').waitFor()
    await row.getByText('Untested').waitFor()
  })

  await t.test('testing a channel shows its response time and stores it', async (t) => {
    const row = page.getByTestId(`channel-row-${primaryId}`)
    await row.getByRole('button', { name: 'Test', exact: true }).click()
    await toast(/passed the test with gpt-4o-mini/).waitFor()
    const shown = await row.getByTestId('response-time').textContent()
    t.match(shown, /^\d+\.\d\d s$/, `the row shows the response time (${shown})`)
    const stored = await channelOf('primary')
    t.ok(stored.response_time >= ANSWER_DELAY_MS, `response_time ${stored.response_time} ms stored`)
    t.ok(stored.test_time > 0)

    await row.getByRole('button', { name: 'Test a chosen model' }).click()
    await page.getByRole('menuitem', { name: 'my-model' }).click()
    await toast(/passed the test with my-model/).waitFor()
    t.pass('a chosen model is tested')
  })

  await t.test('a user\'s token is relayed through the new channel', async (t) => {
    const root = await apiSession(t, system.url, 'root', '123456')
    t.equal((await root.send('POST', '/api/user/', { username: 'alice', password: 'password123' })).success, true)
    const alice = await apiSession(t, system.url, 'alice', 'password123')
    await root.send('PUT', '/api/user/', { id: alice.id, quota: 5_000_000 })
    const token = await alice.send<{ full_key: string }>('POST', '/api/token/', { name: 'laptop', remain_quota: 1_000_000 })
    t.equal(token.success, true, token.message)
    let answer: { status: number, body: string } = { status: 0, body: '' }
    await until(async () => {
      if (answer.status !== 0 && answer.status !== 503) return true
      const res = await fetch(`${system.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.data.full_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      })
      answer = { status: res.status, body: await res.text() }
      return res.status === 200
    })
    t.equal(answer.status, 200, answer.body)
    t.match(answer.body, /Hello from upstream/)
    t.equal(upstream.keys.at(-1), 'Bearer sk-upstream-1', 'the upstream got the channel key')
  })

  let copyId = 0
  await t.test('editing keeps a blank key, shows only its hint, and a copy carries the fields and the key', async (t) => {
    await page.getByTestId(`channel-row-${primaryId}`).getByRole('button', { name: 'Edit' }).click()
    await page.waitForURL((u) => u.pathname === `/channel/edit/${primaryId}`)
    const form = page.getByRole('form', { name: 'Edit channel' })
    await form.getByText('Leave blank to keep the stored key').waitFor()
    t.equal(await form.getByRole('textbox', { name: 'Key', exact: true }).inputValue(), '', 'the key is not filled in')
    t.equal(await form.getByRole('textbox', { name: 'Name', exact: true }).inputValue(), 'primary')
    t.equal(await form.getByTestId('stored-key-hint').getByText('Stored key: sk-…am-1').count(), 1, 'the stored key shows as its hint')
    t.notOk((await form.textContent())?.includes('sk-upstream-1'), 'and never whole (the reveal is e2e/test/channel-keys.test.ts)')
    await form.getByLabel('Tag', { exact: true }).fill('team')
    await form.getByRole('button', { name: 'Save' }).click()
    await toast('Channel updated').waitFor()
    const stored = await channelOf('primary')
    t.equal(stored.tag, 'team')

    await page.getByTestId(`channel-row-${primaryId}`).getByRole('button', { name: 'Copy' }).click()
    await toast('Channel copied').waitFor()
    const copy = await channelOf('primary_copy')
    copyId = copy.id
    t.equal(copy.tag, 'team')
    t.equal(copy.models, stored.models)
    t.equal(copy.base_url, stored.base_url)
    await page.getByTestId(`channel-row-${copy.id}`).waitFor()

    // The copy works upstream with the same key.
    await page.getByTestId(`channel-row-${copy.id}`).getByRole('button', { name: 'Test', exact: true }).click()
    await toast(/primary_copy passed the test/).waitFor()
    t.equal(upstream.keys.at(-1), 'Bearer sk-upstream-1', 'the copy calls upstream with the copied key')
  })

  await t.test('the tag row edits and disables both channels of the tag', async (t) => {
    await page.getByLabel('Group by tag').check()
    const tagRow = page.getByTestId('tag-row-team')
    await tagRow.getByText('2 channels').waitFor()
    await tagRow.getByRole('button', { name: 'Show the channels of tag team' }).click()
    await page.getByTestId(`channel-row-${primaryId}`).waitFor()
    await page.getByTestId(`channel-row-${copyId}`).waitFor()
    await screenshot(page, 'channel-tags-1280')

    await tagRow.getByRole('button', { name: 'Edit tag' }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit tag team' })
    await dialog.getByRole('button', { name: 'Save' }).click()
    await toast('Nothing was changed').waitFor()
    await dialog.getByLabel('Weight').fill('-2')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.getByText('The weight must be a non-negative integer').waitFor()
    await dialog.getByLabel('Priority').fill('7')
    await dialog.getByLabel('Weight').fill('3')
    await until(async () => await dialog.evaluate((el) => getComputedStyle(el.parentElement!).opacity === '1'))
    await screenshot(page, 'channel-tag-dialog-1280')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await toast('2 channels updated').waitFor()
    await dialog.waitFor({ state: 'hidden' })
    for (const name of ['primary', 'primary_copy']) {
      const c = await channelOf(name)
      t.equal(c.priority, 7, `${name} priority`)
      t.equal(c.weight, 3, `${name} weight`)
    }

    await tagRow.getByRole('button', { name: 'Disable all' }).click()
    await toast('2 channels disabled').waitFor()
    await until(async () => (await db.selectFrom('channels').select('status').where('tag', '=', 'team').execute()).every((c) => c.status === 2))
    await tagRow.getByText('Disabled').waitFor()
    t.pass('both children are disabled')
    const abilities = await db.selectFrom('abilities').select('enabled').where('channel_id', 'in', [primaryId, copyId]).execute()
    t.ok(abilities.every((a) => !a.enabled), 'their routing is off')
    await page.getByLabel('Group by tag').uncheck()
    // The grouped rows (the tag's children included) stay until the flat list arrives.
    await tagRow.waitFor({ state: 'detached' })
  })

  await t.test('priority and weight are edited in the row', async (t) => {
    const priority = page.getByLabel('Priority of primary', { exact: true })
    await priority.fill('-1000')
    await priority.press('Enter')
    await toast('The priority must be an integer of at least -999').waitFor()
    await until(async () => await priority.inputValue() === '7')
    t.pass('a refused priority reverts')
    await priority.fill('-5')
    await priority.press('Enter')
    await toast('Priority updated').waitFor()
    t.equal((await channelOf('primary')).priority, -5)

    const weight = page.getByLabel('Weight of primary', { exact: true })
    await weight.fill('-4')
    await weight.press('Enter')
    await toast('Weight updated').waitFor()
    await until(async () => await weight.inputValue() === '0')
    t.equal((await channelOf('primary')).weight, 0, 'a negative weight becomes 0')
    await weight.fill('12')
    await weight.press('Tab')
    await until(async () => (await channelOf('primary')).weight === 12)
    t.pass('leaving the field saves it')

    // A list reload that lands while the admin types (another admin's change, or the reload after
    // an earlier save) keeps what they typed, and leaving the field still saves it.
    await weight.fill('30')
    await db.updateTable('channels').set({ weight: 9, priority: 4 }).where('name', '=', 'primary').execute()
    // A click from script: the focus stays in the field, as when the reload comes by itself.
    await page.getByRole('button', { name: 'Refresh' }).evaluate((b: HTMLElement) => { b.click() })
    await until(async () => await priority.inputValue() === '4')
    t.equal(await weight.inputValue(), '30', 'the typed value stays through a reload')
    await weight.press('Tab')
    await until(async () => (await channelOf('primary')).weight === 30)
    t.pass('and is saved when the field is left')
  })

  await t.test('a batch creates one channel per key line, and a row is deleted after confirming', async (t) => {
    await page.getByRole('button', { name: 'Add channel' }).click()
    const form = page.getByRole('form', { name: 'Add channel' })
    const pickType = async (name: string) => {
      await form.getByRole('combobox', { name: 'Type' }).click()
      await page.getByRole('option', { name, exact: true }).click()
    }
    await form.getByRole('combobox', { name: 'Type' }).waitFor()
    t.equal(await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).count(), 0, 'a new channel starts with no models')
    await pickType('Midjourney Proxy')
    await pickType('OpenAI')
    t.equal(await form.getByRole('button', { name: 'mj_imagine', exact: true }).count() + await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).count(), 0, 'a type change fills nothing by itself')
    await form.getByRole('button', { name: 'Fill related models' }).click()
    await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).waitFor()
    t.pass('the type\'s models come on request')
    await pickType('Midjourney Proxy')
    await form.getByRole('button', { name: 'mj_imagine', exact: true }).waitFor()
    t.equal(await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).count(), 0, 'the drawing actions replace the untouched models')
    await pickType('Azure OpenAI')
    await form.getByLabel('Azure endpoint').waitFor()
    t.equal(await form.getByLabel('Default API version').getAttribute('placeholder'), '2023-06-01-preview')
    await pickType('Vertex AI')
    await form.getByLabel('Service account JSON key').waitFor()
    await form.getByLabel('Region').waitFor()
    await pickType('custom')
    await form.getByLabel('Full base URL').waitFor()
    await form.getByLabel('Extra settings').waitFor()
    t.equal(await form.getByLabel('Organization').count(), 0, 'organization is for OpenAI only')
    await pickType('OpenAI')
    await form.getByLabel('Organization').waitFor()
    t.pass('each type shows its own fields')
    await form.getByRole('button', { name: 'Fill related models' }).click()
    await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).waitFor()
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('batch')
    await form.getByLabel('Base URL').fill(upstream.url)
    await form.getByLabel('Batch create').check()
    await form.getByLabel('Keys, one per line').fill('sk-b1\nsk-b2')
    await form.getByRole('button', { name: 'Create' }).click()
    await toast('2 channels created').waitFor()
    const made = await db.selectFrom('channels').select(['id', 'group', 'priority', 'weight', 'auto_ban', 'models']).where('name', '=', 'batch').orderBy('id').execute()
    // The filled models without a default price are offered for pricing (declined here).
    const priced = await pageCall<string[]>(page, root.id, 'get', '/api/models/priced')
    const unpriced = (made[0]?.models ?? '').split(',').filter((m) => !priced.includes(m))
    const offer = page.getByRole('dialog', { name: /^New models without a price/ })
    if (unpriced.length > 0) {
      await offer.waitFor()
      t.match(await offer.innerText(), `: ${unpriced.join(', ')}.`, 'the offer names the unpriced models')
      await offer.getByRole('button', { name: 'Cancel' }).click()
      await offer.waitFor({ state: 'detached' })
    } else {
      t.equal(await offer.count(), 0, 'with every model priced nothing is offered')
    }
    t.equal(made.length, 2)
    t.ok(made.every((c) => c.group === 'default' && c.priority === 0 && c.weight === 0 && c.auto_ban === 1), 'the channel defaults')

    const doomed = page.getByTestId(`channel-row-${made[1]!.id}`)
    await doomed.getByRole('button', { name: 'Delete' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete channel' })
    await confirm.getByText('Delete the channel "batch"?').waitFor()
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await toast('Channel deleted').waitFor()
    await until(async () => await doomed.count() === 0)
    t.equal((await db.selectFrom('channels').select('id').where('name', '=', 'batch').execute()).length, 1)

    await page.getByRole('button', { name: 'Fix database consistency' }).click()
    await toast('Routing data rebuilt for 3 channels').waitFor()
    await page.getByRole('button', { name: 'Test all channels' }).click()
    await toast('Testing all channels in the background').waitFor()
    await until(async () => (await channelOf('batch')).response_time > 0)
    t.pass('fix and test all report back; the background test reaches the new channel')
  })

  await t.test('search, the remembered id sort, an auto-disabled reason on hover, and per-row enable', async (t) => {
    await page.getByLabel('Search by ID, name or key').fill('copy')
    await page.getByRole('button', { name: 'Search' }).click()
    await until(async () => await page.getByTestId(`channel-row-${primaryId}`).count() === 0)
    await page.getByTestId(`channel-row-${copyId}`).waitFor()
    await page.getByLabel('Search by ID, name or key').fill('sk-upstream-1')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByTestId(`channel-row-${primaryId}`).waitFor()
    t.pass('keyword search by name and by a whole key')
    await page.getByLabel('Search by ID, name or key').fill('')
    await page.getByRole('button', { name: 'Search' }).click()

    await page.getByLabel('Sort by ID').check()
    await page.reload()
    t.equal(await page.getByLabel('Sort by ID').isChecked(), true, 'the id sort survives a reload')
    t.equal(await page.evaluate(() => localStorage.getItem('id-sort')), 'true')
    const ids = await page.locator('[data-testid^="channel-row-"]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-testid')!.slice('channel-row-'.length))))
    t.same(ids, [...ids].sort((a, b) => b - a), 'newest id first')

    await db.updateTable('channels').set({ status: 3, other_info: JSON.stringify({ status_reason: 'upstream said 401 invalid key', status_time: 1700000000 }) }).where('id', '=', copyId).execute()
    await page.getByRole('button', { name: 'Refresh' }).click()
    const copyRow = page.getByTestId(`channel-row-${copyId}`)
    await copyRow.getByText('Auto-disabled').hover()
    await page.getByRole('tooltip').getByText('Reason: upstream said 401 invalid key').waitFor()
    t.pass('the reason shows on hover')

    await page.getByTestId(`channel-row-${primaryId}`).getByRole('button', { name: 'Enable' }).click()
    await toast('Channel enabled').waitFor()
    t.equal((await channelOf('primary')).status, 1)
    await page.getByTestId(`channel-row-${primaryId}`).getByText('Enabled').waitFor()
  })

  await t.test('at 600 px the list, the drawer and the tag dialog fit the window', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await signIn(narrow, 'root', '123456')
    await narrow.goto('/channel')
    await narrow.getByTestId(`channel-row-${primaryId}`).waitFor()
    t.equal(await overflow(narrow), 0, '600px: nothing wider than the window')
    await screenshot(narrow, 'channel-600')

    await narrow.goto(`/channel/edit/${primaryId}`)
    const form = narrow.getByRole('form', { name: 'Edit channel' })
    await until(async () => await form.getByRole('textbox', { name: 'Name', exact: true }).inputValue() === 'primary')
    const box = await form.boundingBox()
    t.equal(Math.round(box?.width ?? 0), NARROW.width, 'the drawer is full width')
    await screenshot(narrow, 'channel-drawer-600')
    await form.getByRole('button', { name: 'Close' }).click()
    await narrow.waitForURL((u) => u.pathname === '/channel')

    await narrow.getByLabel('Group by tag').check()
    await narrow.getByTestId('tag-row-team').getByRole('button', { name: 'Edit tag' }).click()
    const dialog = narrow.getByRole('dialog', { name: 'Edit tag team' })
    await dialog.waitFor()
    // Screenshot once the fade-in is over.
    await until(async () => await dialog.evaluate((el) => getComputedStyle(el.parentElement!).opacity === '1'))
    t.equal(await overflow(narrow), 0, 'the tag dialog fits')
    await screenshot(narrow, 'channel-tag-dialog-600')
  })

  await t.test('a row\'s actions stay in view at 1280 and 600 px, however long its name and groups', async (t) => {
    await db.updateTable('channels').set({ name: 'primary-openai-compatible-upstream-eu-west', group: 'default,enterprise-customers,research-lab' }).where('id', '=', primaryId).execute()
    for (const viewport of [DESKTOP, NARROW]) {
      const view = viewport === DESKTOP ? page : await openPage(t, browser, system.url, { viewport })
      if (viewport !== DESKTOP) await signIn(view, 'root', '123456')
      await view.goto('/channel')
      const row = view.getByTestId(`channel-row-${primaryId}`)
      await row.getByText('research-lab').waitFor()
      for (const name of ['Edit', 'Copy', 'Delete']) {
        const box = await row.getByRole('button', { name, exact: true }).boundingBox()
        t.ok(box !== null && box.x >= 0 && box.x + box.width <= viewport.width, `${viewport.width}px: ${name} is in view`)
      }
      await screenshot(view, `channel-actions-${viewport.width}`)
      // Scrolled sideways, the actions stay where they were, over the other columns.
      const before = await row.getByRole('button', { name: 'Delete', exact: true }).boundingBox()
      await view.getByRole('table', { name: 'Channels' }).evaluate((table) => { table.parentElement!.scrollLeft = 10_000 })
      const after = await row.getByRole('button', { name: 'Delete', exact: true }).boundingBox()
      t.equal(Math.round(after?.x ?? -1), Math.round(before?.x ?? -2), `${viewport.width}px: the actions column does not move when the table scrolls`)
      await row.getByRole('button', { name: 'Edit', exact: true }).click()
      await view.waitForURL((u) => u.pathname === `/channel/edit/${primaryId}`)
      t.pass(`${viewport.width}px: and it can be pressed`)
      await view.goto('/channel')
    }
    await db.updateTable('channels').set({ name: 'primary', group: 'default' }).where('id', '=', primaryId).execute()
  })

  await t.test('delete disabled removes the disabled and auto-disabled channels and tells how many', async (t) => {
    await db.updateTable('channels').set({ status: 2 }).where('id', '=', primaryId).execute()
    t.equal(await overflow(page), 0, '1280px: nothing wider than the window')
    await screenshot(page, 'channel-1280')
    await page.getByRole('button', { name: 'Delete disabled channels' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete disabled channels' })
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await toast('2 disabled channels deleted').waitFor()
    t.same((await db.selectFrom('channels').select('name').execute()).map((c) => c.name), ['batch'], 'only the enabled channel is left')
    t.equal((await db.selectFrom('abilities').select('channel_id').where('channel_id', 'in', [primaryId, copyId]).execute()).length, 0, 'with no routing left behind')
    await until(async () => await page.getByTestId(`channel-row-${primaryId}`).count() === 0)
  })
})
