import { createDb } from '@modelgate/db'
import t from 'tap'
import type { Page } from 'playwright-core'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow } from '../src/ui.js'
import { fakeOpenAI } from '../src/upstream.js'

/** Token counts the fake upstream reports per model, and the quota they cost at the default ratios. */
const USAGE = {
  // (1000 + 500 x completion ratio 4) x model ratio 1.25 x group ratio 1
  'gpt-4o': { prompt_tokens: 1000, completion_tokens: 500, quota: 3750 },
  // (2000 + 1000 x 4) x 0.075
  'gpt-4o-mini': { prompt_tokens: 2000, completion_tokens: 1000, quota: 450 }
} as const
type Model = keyof typeof USAGE

async function relay (url: string, key: string, model: Model, stream = false): Promise<number> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Say hello' }] })
  })
  await res.arrayBuffer()
  return res.status
}

const money = (quota: number) => `$${(quota / 500_000).toFixed(6)}`

t.test('logs and dashboard from really relayed requests, for a user and for an admin', async (t) => {
  const system = await startSystem(t)
  const upstream = (await fakeOpenAI(t, { models: Object.keys(USAGE), usage: (model) => USAGE[model as Model] ?? USAGE['gpt-4o'] })).url
  const db = createDb(system.env.DATABASE_URL!, { max: 2 })
  t.teardown(() => db.destroy())

  const root = await apiSession(t, system.url, 'root', '123456')
  const users: Record<string, { id: number, key: string }> = {}
  for (const name of ['alice', 'bob']) {
    const created = await root.call<{ id: number }>('POST', '/api/user/', { username: name, password: `${name}-secret-1` })
    await root.call('PUT', '/api/user/', { id: created.id, quota: 100_000_000 })
    const session = await apiSession(t, system.url, name, `${name}-secret-1`)
    const token = await session.call<{ full_key: string }>('POST', '/api/token/', { name: `${name}-key`, remain_quota: 50_000_000 })
    users[name] = { id: created.id, key: token.full_key }
  }
  const [channel] = await root.call<Array<{ id: number }>>('POST', '/api/channel/', {
    type: 1, name: 'fake upstream', key: 'sk-upstream-secret', base_url: upstream, models: 'gpt-4o,gpt-4o-mini', groups: 'default'
  })
  const alice = users['alice']!
  const bob = users['bob']!

  // The gateways learn of the new channel through a change notice: wait until it serves.
  for (let i = 0; ; i++) {
    if (await relay(system.url, alice.key, 'gpt-4o') === 200) break
    if (i > 50) throw new Error('the gateway never served the new channel')
    await new Promise((r) => setTimeout(r, 200))
  }
  for (const [key, model, stream] of [
    [alice.key, 'gpt-4o', false], [alice.key, 'gpt-4o', true], [alice.key, 'gpt-4o-mini', false],
    [alice.key, 'gpt-4o-mini', true], [bob.key, 'gpt-4o', false]
  ] as const) t.equal(await relay(system.url, key, model, stream), 200, `${model} relayed`)

  // The billing worker writes the logs asynchronously.
  const deadline = Date.now() + 30_000
  let consumed: Array<{ user_id: number, model_name: string, quota: number }> = []
  while (Date.now() < deadline) {
    consumed = await db.selectFrom('logs').select(['user_id', 'model_name', 'quota']).where('type', '=', 2).execute()
    if (consumed.length >= 6) break
    await new Promise((r) => setTimeout(r, 250))
  }
  t.equal(consumed.length, 6, 'six consume logs written')
  for (const row of consumed) t.equal(row.quota, USAGE[row.model_name as Model].quota, `${row.model_name} billed at the default ratios`)
  const aliceTotal = consumed.filter((r) => r.user_id === alice.id).reduce((s, r) => s + r.quota, 0)
  t.equal(aliceTotal, 3 * 3750 + 2 * 450)

  const browser = await launchBrowser(t)
  for (const viewport of [DESKTOP, NARROW]) {
    const w = viewport.width
    const page = await openPage(t, browser, system.url, { viewport })
    await signIn(page, 'alice', 'alice-secret-1')

    await page.goto('/log')
    const rows = page.getByTestId('log-row')
    await rows.nth(5).waitFor()
    // Their five requests and the admin's quota grant; nothing of bob's.
    t.equal(await rows.count(), 6, `${w}px: the user's log shows exactly their rows`)
    const consumeRows = rows.filter({ has: page.getByRole('cell', { name: 'Consume', exact: true }) })
    t.equal(await consumeRows.count(), 5, 'five consume rows')
    t.equal(await rows.filter({ has: page.getByRole('cell', { name: 'Manage', exact: true }) }).count(), 1, 'one manage row (the quota grant)')
    t.notOk(await page.getByRole('cell', { name: 'bob', exact: true }).count(), 'no row of another user')
    await page.getByTestId('stat-quota').getByText(money(aliceTotal)).waitFor()
    t.pass(`${w}px: total quota of the filter ${money(aliceTotal)}`)
    t.same((await consumeRows.getByTestId('log-quota').allInnerTexts()).sort(), [money(450), money(450), money(3750), money(3750), money(3750)].sort(), 'each row shows its quota')
    t.equal(await page.getByLabel('Username').count(), 0, 'no username filter for users')
    t.equal(await page.getByTestId('log-retention').innerText(), 'Usage details are kept visible for the last 3 days.', `${w}px: the user is told how far back details go`)
    const earliest = Date.parse(await page.getByLabel('Start time').getAttribute('min') ?? '')
    t.ok(Math.abs(earliest - (Date.now() - 3 * 86_400_000)) < 600_000, 'the start time picker stops 3 days back')
    t.equal(await page.getByRole('columnheader', { name: 'Channel' }).count(), 0, 'no channel column for users')
    // What an operator reads first leads, and at 1280 px nothing needs scrolling sideways.
    t.same((await page.getByTestId('log-table').getByRole('columnheader').allInnerTexts()).slice(1, 4).map((h) => h.trim()), ['Time', 'Model', 'Quota'], `${w}px: time, model and quota come first`)
    t.ok(await headerInView(page, 'Quota'), `${w}px: the quota column is in view`)
    if (w === DESKTOP.width) t.ok(await fitsWidth(page), '1280px: the table fits without scrolling sideways')
    t.equal(await page.getByRole('columnheader', { name: 'Stream', exact: true }).count(), 0, `${w}px: the timings and the stream flag wait for a wider window`)

    const gpt4o = rows.filter({ has: page.getByRole('cell', { name: 'gpt-4o', exact: true }) }).first()
    await gpt4o.getByRole('button', { name: 'Show billing details' }).click()
    // Once the row has finished opening.
    const formula = page.locator('.MuiCollapse-entered').getByTestId('log-formula')
    await formula.waitFor()
    t.match(await formula.innerText(), '(prompt 1000 + completion 500 × completion ratio 4) × model ratio 1.25 × group ratio 1 = 3750', 'the breakdown shows the formula')
    await page.getByText('Charged: 3750 quota units ($0.0075)').waitFor()
    await page.getByText('Model ratio: 1.25').waitFor()
    t.match(await page.locator('.MuiCollapse-entered').innerText(), /Use time: \d+ s[\s\S]*Answer: (Stream|Non-stream)/, 'the details show the timings and whether it streamed')
    t.equal(await page.getByText('Channels tried').count(), 0, 'retried channels are for admins only')
    await screenshot(page, `log-user-${w}`)
    await noOverflow(t, page, `${w}px /log`)

    await page.getByLabel('Model name').fill('gpt-4o-mini')
    await page.getByRole('button', { name: 'Query' }).click()
    await page.getByTestId('stat-quota').getByText(money(900)).waitFor()
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=log-row]').length === 2)
    t.same(await page.getByTestId('log-row').getByRole('cell', { name: 'gpt-4o-mini', exact: true }).count(), 2, `${w}px: the model filter narrows to two rows`)

    // The charts then draw at once, so the screenshot shows them finished.
    await page.emulateMedia({ reducedMotion: 'reduce' })
    await page.goto('/detail')
    await page.getByTestId('card-requests').getByText('5', { exact: true }).waitFor()
    await page.getByTestId('card-quota').getByText(`$${(aliceTotal / 500_000).toFixed(4)}`).waitFor()
    await page.locator('[data-testid=chart-requests] path.MuiLineChart-line').first().waitFor()
    await page.locator('[data-testid=chart-quota] .MuiBarChart-element:not([height="0"])').first().waitFor()
    t.pass(`${w}px: the dashboard draws the user's usage`)
    t.equal(await page.getByLabel('Username').count(), 0, 'no username filter on the dashboard for users')
    await screenshot(page, `detail-user-${w}`)
    await noOverflow(t, page, `${w}px /detail`)

    const admin = await openPage(t, browser, system.url, { viewport })
    await signIn(admin, 'root', '123456')
    await admin.goto('/log')
    await admin.getByRole('columnheader', { name: 'Channel' }).waitFor()
    t.equal(await admin.getByTestId('log-retention').count(), 0, 'admins see every day, without the 3-day caption')
    t.equal(await admin.getByLabel('Start time').getAttribute('min'), null, 'nor a limited picker')
    t.ok(await headerInView(admin, 'Quota'), `${w}px: the admin's quota column is in view`)
    if (w === DESKTOP.width) t.ok(await fitsWidth(admin), '1280px: the admin\'s table fits without scrolling sideways')
    await admin.getByLabel('Username').fill('alice')
    await admin.getByLabel('Channel ID').fill(String(channel!.id))
    await admin.getByLabel('Log type').click()
    await admin.getByRole('option', { name: 'Consume' }).click()
    await admin.getByRole('button', { name: 'Query' }).click()
    await admin.getByTestId('stat-quota').getByText(money(aliceTotal)).waitFor()
    await admin.waitForFunction(() => document.querySelectorAll('[data-testid=log-row]').length === 5)
    t.pass(`${w}px: the admin's username and channel filters find alice's five requests`)
    await admin.getByTestId('log-row').first().getByRole('button', { name: 'Show billing details' }).click()
    await admin.locator('.MuiCollapse-entered').getByText(`Channels tried: ${channel!.id}`).waitFor()
    await admin.getByLabel('Username').fill('')
    await admin.getByRole('button', { name: 'Query' }).click()
    await admin.waitForFunction(() => document.querySelectorAll('[data-testid=log-row]').length === 6)
    t.pass(`${w}px: without the username filter the admin sees everyone's requests`)
    await admin.getByRole('button', { name: 'Show the information of bob' }).first().click()
    const info = admin.getByTestId('user-info')
    await info.getByRole('row', { name: 'Username bob' }).waitFor()
    t.match(await info.innerText(), /Used quota\s+\$0\.0075/, 'the user dialog shows the used quota')
    t.match(await info.innerText(), /Requests\s+1/, 'and the request count')
    await screenshot(admin, `log-admin-${w}`)
    await admin.getByRole('button', { name: 'Close' }).click()
    await noOverflow(t, admin, `${w}px admin /log`)

    await admin.emulateMedia({ reducedMotion: 'reduce' })
    await admin.goto('/detail')
    await admin.getByTestId('detail-scope').getByText('All users').waitFor()
    await admin.getByTestId('card-requests').getByText('6', { exact: true }).waitFor()
    await admin.getByLabel('Username').fill('bob')
    await admin.getByRole('button', { name: 'Query' }).click()
    await admin.getByTestId('card-requests').getByText('1', { exact: true }).waitFor()
    t.pass(`${w}px: the admin dashboard covers all users or one`)
    await admin.locator('[data-testid=chart-requests] path.MuiLineChart-line').first().waitFor()
    await screenshot(admin, `detail-admin-${w}`)
    await noOverflow(t, admin, `${w}px admin /detail`)
  }

  await root.call('PUT', '/api/option/', { key: 'DataExportEnabled', value: 'false' })
  const page = await openPage(t, browser, system.url)
  await signIn(page, 'alice', 'alice-secret-1')
  await page.goto('/detail')
  await page.getByTestId('detail-disabled').waitFor()
  t.pass('with data export off the dashboard explains why it is empty')
})

/** Whether the header `name` of the log table is inside the window, with the table scrolled to its start. */
async function headerInView (page: Page, name: string): Promise<boolean> {
  const box = await page.getByTestId('log-table').getByRole('columnheader', { name, exact: true }).boundingBox()
  return box !== null && box.x >= 0 && box.x + box.width <= (page.viewportSize()?.width ?? 0)
}

/** Whether the log table's box shows every column without scrolling sideways. */
async function fitsWidth (page: Page): Promise<boolean> {
  return await page.getByTestId('log-table').evaluate((table) => {
    const box = table.parentElement
    return box !== null && box.scrollWidth <= box.clientWidth
  })
}
