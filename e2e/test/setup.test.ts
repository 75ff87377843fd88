import t from 'tap'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow, toast } from '../src/ui.js'

t.test('first run without INITIAL_ROOT_PASSWORD: every visitor is sent to /setup, which creates the super admin once', async (t) => {
  // An empty INITIAL_ROOT_PASSWORD is unset: the database starts with no account at all.
  const system = await startSystem(t, { INITIAL_ROOT_PASSWORD: '' })
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)
  t.equal((await db.selectFrom('users').select('id').execute()).length, 0, 'no account was created at start')

  await t.test('at 600 px the setup screen fits the window', async (t) => {
    const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
    await narrow.goto('/login')
    await narrow.waitForURL('**/setup')
    t.pass('the login page leads to /setup')
    await narrow.getByRole('form', { name: 'Set up the system' }).getByText('Database: PostgreSQL').waitFor()
    await noOverflow(t, narrow, '600px setup')
    await screenshot(narrow, 'setup-600')
  })

  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })

  await t.test('the form checks its fields, then creates the super admin', async (t) => {
    await page.goto('/')
    await page.waitForURL('**/setup')
    t.pass('the console\'s home leads to /setup')
    const form = page.getByRole('form', { name: 'Set up the system' })
    await form.getByText('Database: PostgreSQL').waitFor()
    const submit = form.getByRole('button', { name: 'Create the super admin' })

    await submit.click()
    await toast(page, 'error', 'Enter a username and a password')
    await form.locator('input[name=username]').fill('owner')
    await form.locator('input[name=password]').fill('short')
    await form.locator('input[name=confirmPassword]').fill('short')
    await submit.click()
    await toast(page, 'error', 'The password must be 8 to 20 characters')
    await form.locator('input[name=password]').fill('Owner-pass-1')
    await form.locator('input[name=confirmPassword]').fill('Owner-pass-2')
    await submit.click()
    await toast(page, 'error', 'The two passwords differ')
    t.equal((await db.selectFrom('users').select('id').execute()).length, 0, 'refused forms create nothing')

    await form.locator('input[name=confirmPassword]').fill('Owner-pass-1')
    await noOverflow(t, page, '1280px setup')
    await screenshot(page, 'setup-1280')
    await submit.click()
    await toast(page, 'success', 'Setup complete: sign in with the new account')
    await page.waitForURL('**/login')
    const users = await db.selectFrom('users').select(['username', 'role', 'password_is_default']).execute()
    t.same(users, [{ username: 'owner', role: 100, password_is_default: false }], 'one super admin, with the chosen password')
  })

  await t.test('the new super admin signs in; /setup now leads to /login', async (t) => {
    await page.locator('input[name=username]').fill('owner')
    await page.locator('input[name=password]').fill('Owner-pass-1')
    await page.getByRole('button', { name: 'Log in', exact: true }).last().click()
    await page.waitForURL((url) => url.pathname !== '/login')
    t.equal(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').role), 100, 'signed in as the super admin')
    await page.getByRole('dialog', { name: 'Change the default password' }).waitFor({ state: 'detached', timeout: 2000 })
    t.pass('no default-password warning')

    await page.goto('/setup')
    await page.waitForURL('**/login')
    t.pass('/setup is done')
    const again = await page.request.post('/api/setup', { data: { username: 'intruder', password: 'Intruder-1', confirmPassword: 'Intruder-1' } })
    t.same(await again.json(), { success: false, message: 'The system is already set up' }, 'a second setup is refused')
    t.equal((await db.selectFrom('users').select('id').execute()).length, 1)
  })
})

t.test('with INITIAL_ROOT_PASSWORD the console never shows the setup screen', async (t) => {
  const system = await startSystem(t)
  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await page.goto('/setup')
  await page.waitForURL('**/login')
  await page.locator('input[name=username]').waitFor()
  t.pass('/setup leads to /login')
})
