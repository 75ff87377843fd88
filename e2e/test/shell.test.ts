import t from 'tap'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { apiSession } from '../src/api.js'
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

t.test('signed in: home with the notice, theme restored after a reload, and a 401 sends the user to log in again', async (t) => {
  const system = await startSystem(t)
  const browser = await launchBrowser(t)
  await (await apiSession(t, system.url, 'root', '123456')).setOptions({ Notice: 'Maintenance **tonight**' })
  for (const viewport of [DESKTOP, NARROW]) {
    const page = await openPage(t, browser, system.url, { viewport })
    await signIn(page, 'root', '123456')
    await page.goto('/')
    await page.getByRole('heading', { name: 'One API for every model' }).waitFor()
    const subtitle = page.getByText(/^Point any OpenAI client or SDK at \S+\/v1 \(an OpenAI-compatible API\)/)
    t.ok(await subtitle.isVisible(), 'the home page names the OpenAI base URL')
    t.match(await subtitle.textContent(), /Anthropic clients such as Claude Code and Google's Gemini SDK work too, with http:\/\/\S+ as their base URL\.$/, 'and the other client protocols with theirs')
    t.equal(await page.getByTestId('notice').locator('strong').textContent(), 'tonight', 'the notice renders as Markdown')
    await noOverflow(t, page, `${viewport.width}px home`)
    await screenshot(page, `home-${viewport.width}`)

    const background = async () => await page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    await page.getByRole('button', { name: 'Theme' }).click()
    await page.getByRole('menuitem', { name: 'Dark' }).click()
    t.equal(await background(), 'rgb(18, 18, 18)', 'dark theme applied')
    await page.reload()
    await page.getByRole('heading', { name: 'One API for every model' }).waitFor()
    t.equal(await background(), 'rgb(18, 18, 18)', 'and restored after a reload')
    await page.getByRole('button', { name: 'Theme' }).click()
    await page.getByRole('menuitem', { name: 'Light' }).click()
    t.equal(await background(), 'rgb(255, 255, 255)', 'light again')

    // The session ends on the server while the console still holds the user.
    await page.request.get('/api/user/logout')
    await page.goto('/token')
    await page.waitForURL((u) => u.pathname === '/login' && u.searchParams.get('expired') === 'true')
    await page.getByText('Not logged in, or the login has expired; please log in again').waitFor()
    t.equal(await page.evaluate(() => localStorage.getItem('user')), null, 'the stored user is forgotten')
  }
})
