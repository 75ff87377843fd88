import { createDb } from '@modelgate/db'
import type { Page } from 'playwright-core'
import t from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { until } from '../src/ui.js'
import { fakeOpenAI } from '../src/upstream.js'

/** Whether the element is inside the window horizontally. */
async function inView (page: Page, box: { x: number, width: number } | null): Promise<boolean> {
  return box !== null && box.x >= 0 && box.x + box.width <= (page.viewportSize()?.width ?? 0)
}

// An operator's first hour in Chinese, at 1280 and 600 px: a new channel starts without models,
// saving one with an unpriced model offers the price editor, the price is stored on its dialog's
// confirm, the row's actions stay in view, toasts keep clear of drawer titles and end with the
// page, and the logs lead with time, model and quota.
t.test('an operator\'s first hour, in Chinese, at 1280 and 600 px', async (t) => {
  const system = await startSystem(t)
  const upstream = await fakeOpenAI(t, { models: ['zh-model-1280', 'zh-model-600'] })
  const db = createDb(system.env.DATABASE_URL!, { max: 2 })
  t.teardown(() => db.destroy())
  const root = await apiSession(t, system.url, 'root', '123456')
  const alice = await root.call<{ id: number }>('POST', '/api/user/', { username: 'alice', password: 'alice-secret-1' })
  await root.call('PUT', '/api/user/', { id: alice.id, quota: 100_000_000 })
  const aliceSession = await apiSession(t, system.url, 'alice', 'alice-secret-1')
  const key = (await aliceSession.call<{ full_key: string }>('POST', '/api/token/', { name: 'alice-key', remain_quota: 50_000_000 })).full_key
  const browser = await launchBrowser(t)

  for (const viewport of [DESKTOP, NARROW]) {
    const w = viewport.width
    const model = `zh-model-${w}`
    const page = await openPage(t, browser, system.url, { viewport, lang: 'zh' })
    await signIn(page, 'root', '123456')

    await page.goto('/channel')
    await page.getByRole('button', { name: '添加渠道' }).click()
    const form = page.getByRole('form', { name: '添加渠道' })
    await form.getByRole('button', { name: '填入相关模型' }).waitFor()
    t.equal(await form.getByRole('button', { name: 'gpt-4o-mini', exact: true }).count(), 0, `${w}px: a new channel starts with no models`)
    await screenshot(page, `zh-channel-new-${w}`)

    await form.getByRole('textbox', { name: '名称', exact: true }).fill(`zh-${w}-primary-openai-compatible-upstream`)
    await form.getByRole('textbox', { name: '密钥', exact: true }).fill('sk-upstream-zh')
    await form.getByLabel('代理地址（Base URL）').fill(upstream.url)
    await form.getByLabel('自定义模型名称').fill(model)
    await form.getByRole('button', { name: '添加', exact: true }).click()
    await form.getByRole('button', { name: model, exact: true }).waitFor()
    await form.getByRole('button', { name: '创建' }).click()

    const offer = page.getByRole('dialog', { name: '新模型尚未定价（1 个）' })
    await offer.waitFor()
    t.match(await offer.innerText(), `没有倍率或价格的模型的请求会被中转拒绝：${model}。`, `${w}px: saved with an unpriced model, the offer names it`)
    await screenshot(page, `zh-price-offer-${w}`)
    await offer.getByRole('button', { name: '去定价' }).click()
    const editor = page.getByRole('dialog', { name: '添加模型' })
    await editor.waitFor()
    t.equal(await editor.getByLabel('模型名称').inputValue(), model, `${w}px: the price editor opens on the model`)
    await editor.getByLabel('模型倍率', { exact: true }).fill('2')
    await screenshot(page, `zh-price-editor-${w}`)
    await editor.getByRole('button', { name: '确定' }).click()
    await editor.waitFor({ state: 'detached' })
    await until(async () => {
      const row = await db.selectFrom('options').select('value').where('key', '=', 'ModelRatio').executeTakeFirst()
      return (JSON.parse(row?.value ?? '{}') as Record<string, number>)[model] === 2
    }, 30_000)
    t.pass(`${w}px: the dialog's confirm stores the price, without a second save`)
    await screenshot(page, `zh-price-saved-${w}`)

    await page.goto('/channel')
    const channel = await db.selectFrom('channels').select('id').where('name', '=', `zh-${w}-primary-openai-compatible-upstream`).executeTakeFirstOrThrow()
    const row = page.getByTestId(`channel-row-${channel.id}`)
    await row.waitFor()
    for (const name of ['编辑', '复制', '删除']) t.ok(await inView(page, await row.getByRole('button', { name, exact: true }).boundingBox()), `${w}px: ${name} is in view`)
    await screenshot(page, `zh-channel-list-${w}`)

    // A toast stays clear of a drawer's title, and does not follow the operator to the next page.
    await page.getByRole('button', { name: '添加渠道' }).click()
    const drawer = page.getByRole('form', { name: '添加渠道' })
    await drawer.getByRole('button', { name: '创建' }).click()
    const toast = page.locator('[data-testid="toast-error"]')
    await toast.getByText('请填写渠道名称').waitFor()
    const title = await drawer.getByRole('heading', { name: '添加渠道' }).boundingBox()
    const note = await toast.boundingBox()
    t.ok(title !== null && note !== null && (note.y >= title.y + title.height || note.x >= title.x + title.width), `${w}px: the toast does not cover the drawer's title`)
    await screenshot(page, `zh-toast-drawer-${w}`)
    // Older than the 2 s a toast is carried to the page a save leads to (an error stays 6 s).
    await page.waitForTimeout(2_200)
    await drawer.getByRole('button', { name: '关闭' }).click()
    await page.waitForURL((u) => u.pathname === '/channel')
    await until(async () => await toast.count() === 0, 2_500)
    t.pass(`${w}px: leaving the page dismisses the toast`)

    // The model now has a price: alice's request is served and logged.
    await until(async () => (await fetch(`${system.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: '你好' }] })
    })).status === 200, 30_000)
    // The billing worker writes the log row after the answer.
    await until(async () => {
      await page.goto('/log')
      await page.getByTestId('log-table').waitFor()
      await page.getByRole('progressbar').waitFor({ state: 'detached' })
      return await page.getByTestId('log-table').getByRole('cell', { name: model, exact: true }).count() > 0
    }, 30_000)
    const headers = (await page.getByTestId('log-table').getByRole('columnheader').allInnerTexts()).map((h) => h.trim())
    t.same(headers.slice(1, 4), ['时间', '模型', '花费'], `${w}px: time, model and quota come first`)
    t.ok(await inView(page, await page.getByTestId('log-table').getByRole('columnheader', { name: '花费', exact: true }).boundingBox()), `${w}px: the quota column is in view`)
    await screenshot(page, `zh-log-${w}`)
  }
})
