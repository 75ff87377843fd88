import t from 'tap'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow } from '../src/ui.js'

t.test('the console shell: guard, not-found page, language, theme and layout at both widths', async (t) => {
  const system = await startSystem(t)
  const browser = await launchBrowser(t)
  for (const viewport of [DESKTOP, NARROW]) {
    const page = await openPage(t, browser, system.url, { viewport })
    await page.goto('/')
    await page.waitForURL('**/login')
    t.pass(`${viewport.width}px: / without a stored user goes to /login`)

    await page.goto('/no/such/page')
    await page.getByText('Page not found').waitFor()
    await screenshot(page, `not-found-${viewport.width}`)

    await page.goto('/about')
    await page.getByText('has not written an About page').waitFor()
    await page.getByRole('button', { name: 'Language' }).click()
    await page.getByText('管理员暂未设置关于页面内容').waitFor()
    await page.reload()
    await page.getByText('管理员暂未设置关于页面内容').waitFor()
    t.pass('the language choice survives a reload')
    await noOverflow(t, page, `${viewport.width}px`)
  }
})
