import type { Page } from 'playwright-core'
import t from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow } from '../src/ui.js'
import { fakeOpenAI } from '../src/upstream.js'

/** The prompt and completion price cells of a model's row. */
async function prices (page: Page, model: string): Promise<[string, string]> {
  const row = page.getByTestId('pricing-row').filter({ has: page.getByRole('cell', { name: model, exact: true }) })
  return [await row.getByTestId('price-prompt').innerText(), await row.getByTestId('price-completion').innerText()]
}

t.test('the public pricing page: prices per group, badges, search and copy selected', async (t) => {
  const system = await startSystem(t)
  // Healthy: the billing worker tests channels (first when it starts) and auto-disables an
  // unreachable one, which would take its models off sale.
  const upstream = (await fakeOpenAI(t, { models: ['gpt-4o', 'gpt-4o-mini', 'dall-e-3'] })).url
  const root = await apiSession(t, system.url, 'root', '123456')
  await root.call('PUT', '/api/option/', { key: 'GroupRatio', value: JSON.stringify({ default: 1, vip: 2, pro: 4, svip: 6 }) })
  await root.call('PUT', '/api/option/', { key: 'UserUsableGroups', value: JSON.stringify({ default: 'Default group', vip: 'VIP', pro: 'Pro', svip: 'SVIP' }) })
  // Models on sale are those an enabled channel serves.
  await root.call('POST', '/api/channel/', { type: 1, name: 'main', key: 'sk-a', base_url: upstream, models: 'gpt-4o,gpt-4o-mini,dall-e-3', groups: 'default,vip' })
  await root.call('POST', '/api/channel/', { type: 1, name: 'premium', key: 'sk-b', base_url: upstream, models: 'gpt-4o', groups: 'svip' })

  const browser = await launchBrowser(t)
  for (const viewport of [DESKTOP, NARROW]) {
    const w = viewport.width
    const page = await openPage(t, browser, system.url, { viewport })
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url })
    await page.goto('/pricing')
    await page.getByTestId('pricing-row').nth(2).waitFor()
    t.equal(await page.getByTestId('pricing-row').count(), 3, `${w}px signed out: the three models on sale`)
    t.same(await prices(page, 'gpt-4o'), ['$2.5 / 1M tokens', '$10 / 1M tokens'], 'ratio 1.25 x 2, completion x 4, group default 1')
    t.same(await prices(page, 'gpt-4o-mini'), ['$0.15 / 1M tokens', '$0.6 / 1M tokens'], 'ratio 0.075')
    t.same(await prices(page, 'dall-e-3'), ['$0.04 / call', '-'], 'a per-call model')
    t.equal(await page.getByTestId('group-default').getAttribute('aria-checked'), 'true', 'group default first when signed out')

    const colours: Record<string, string | null> = {}
    for (const g of ['default', 'vip', 'pro', 'svip']) colours[g] = await page.getByTestId(`group-${g}`).locator('[data-colour]').getAttribute('data-colour')
    t.same(colours, { default: 'default', vip: 'info', pro: 'warning', svip: 'error' }, 'ratio badges: over 5 red, over 3 orange, over 1 blue')

    await page.getByTestId('group-vip').click()
    await page.getByTestId('group-hint').getByText('group vip (ratio 2)').waitFor()
    t.same(await prices(page, 'gpt-4o'), ['$5 / 1M tokens', '$20 / 1M tokens'], `${w}px: switching to vip doubles the price`)
    t.same(await prices(page, 'dall-e-3'), ['$0.08 / call', '-'], 'per-call prices follow the group ratio too')
    await page.getByTestId('group-pro').click()
    await page.getByTestId('group-hint').getByText('group pro (ratio 4)').waitFor()
    t.same(await prices(page, 'gpt-4o-mini'), ['$0.6 / 1M tokens', '$2.4 / 1M tokens'], 'pro is 4x')
    t.equal(await page.getByText('Not available in group pro').count(), 3, 'no channel serves group pro')
    await page.getByTestId('group-svip').click()
    await page.getByTestId('group-hint').getByText('group svip (ratio 6)').waitFor()
    t.equal(await page.getByText('Not available in group svip').count(), 2, 'svip only has gpt-4o')
    await page.getByTestId('group-default').click()
    await page.getByTestId('group-hint').getByText('group default (ratio 1)').waitFor()

    await page.getByLabel('Search model name').fill('MINI')
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=pricing-row]').length === 1)
    t.equal(await page.getByTestId('pricing-row').getByRole('cell', { name: 'gpt-4o-mini', exact: true }).count(), 1, 'search matches case-insensitively')
    await page.getByLabel('Search model name').fill('')
    await page.getByTestId('pricing-row').nth(2).waitFor()

    await page.getByRole('button', { name: 'Copy selected' }).click()
    await page.getByTestId('toast-warning').getByText('Select at least one row first').waitFor()
    t.pass('copy with nothing selected is refused with a message')
    await page.getByTestId('toast-warning').getByRole('button', { name: 'Close' }).click()

    await page.getByRole('checkbox', { name: 'Select gpt-4o', exact: true }).check()
    await page.getByRole('checkbox', { name: 'Select dall-e-3', exact: true }).check()
    await page.getByRole('button', { name: 'Copy selected (2)' }).click()
    await page.getByTestId('toast-success').getByText('Copied 2 model names').waitFor()
    t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), 'dall-e-3,gpt-4o', `${w}px: the selected names, comma-joined`)

    await screenshot(page, `pricing-${w}`)
    await noOverflow(t, page, `${w}px`)
  }

  const vip = await root.call<{ id: number }>('POST', '/api/user/', { username: 'carol', password: 'carol-secret-1' })
  await root.call('PUT', '/api/user/', { id: vip.id, group: 'vip' })
  const page = await openPage(t, browser, system.url)
  await signIn(page, 'carol', 'carol-secret-1')
  await page.goto('/pricing')
  await page.getByTestId('pricing-row').nth(2).waitFor()
  t.equal(await page.getByTestId('group-vip').getAttribute('aria-checked'), 'true', 'a signed-in user starts on their own group')
  t.same(await prices(page, 'gpt-4o'), ['$5 / 1M tokens', '$20 / 1M tokens'], 'at their group ratio')
  await screenshot(page, 'pricing-signed-in-1280')
})
