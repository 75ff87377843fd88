import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import t from 'tap'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { overflow, until } from '../src/ui.js'

/** The ids the table shows (the data-testid suffixes of its rows), sorted. */
async function shownIds (page: Page, prefix: string): Promise<string[]> {
  return (await page.locator(`tbody tr[data-testid^="${prefix}"]`).evaluateAll((rows, p) => rows.map((r) => r.getAttribute('data-testid')!.slice(p.length)), prefix)).sort()
}

async function waitForIds (page: Page, prefix: string, want: string[]): Promise<void> {
  await until(async () => JSON.stringify(await shownIds(page, prefix)) === JSON.stringify([...want].sort()))
}

/** A 1x1 PNG: the drawing thumbnails load from a real image server. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

t.test('drawing and music tasks: users see their own, admins everyone\'s with channels', async (t) => {
  const images = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL) })
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve))
  t.teardown(() => images.close())
  const imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/mj-a1.png`

  const system = await startSystem(t)
  const db = system.controlPlane.db
  const browser = await launchBrowser(t)
  const admin = await openPage(t, browser, system.url, { viewport: DESKTOP })
  const root = await signIn(admin, 'root', '123456')
  for (const username of ['alice', 'bob']) {
    const res = await admin.request.post('/api/user/', { data: { username, password: `${username}-pass-1` }, headers: { 'new-api-user': String(root.id) } })
    t.equal((await res.json() as { success: boolean }).success, true, `${username} created`)
  }
  const idOf = async (username: string) => (await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id
  const alice = await idOf('alice')
  const bob = await idOf('bob')

  // The channels the tasks name. The billing worker polls unfinished tasks every 15 s and fails
  // (and refunds) those whose channel was deleted: these exist, with a key the worker cannot open,
  // so it leaves the tasks as they are whenever it polls, and the screens show what was seeded.
  await db.insertInto('channels').values([5, 7].map((id) => ({ id, type: 36, name: `tasks-${id}`, key: 'not sealed with CRYPTO_SECRET', openai_organization: null, tag: null, other_info: {} }))).execute()
  const now = Math.floor(Date.now() / 1000)
  const startOfToday = Math.floor(new Date(new Date().setHours(0, 0, 0, 0)).getTime() / 1000)
  await db.insertInto('midjourneys').values([
    { user_id: alice, mj_id: 'mj-a1', action: 'IMAGINE', code: 1, channel_id: 5, status: 'SUCCESS', progress: '100%', prompt: '一只猫', prompt_en: 'a cat on the moon', image_url: imageUrl, submit_time: now - 3600, start_time: now - 3590, finish_time: now - 3540 },
    { user_id: alice, mj_id: 'mj-a2', action: 'UPSCALE', code: 22, channel_id: 7, status: 'FAILURE', progress: '0%', prompt: 'a dog', fail_reason: 'banned prompt detected', submit_time: now - 600 },
    { user_id: alice, mj_id: 'mj-old', action: 'IMAGINE', code: 1, channel_id: 5, status: 'SUCCESS', progress: '100%', prompt: 'older', submit_time: now - 40 * 86_400, finish_time: now - 40 * 86_400 + 30 },
    { user_id: bob, mj_id: 'mj-b1', action: 'VARIATION', code: 21, channel_id: 7, status: 'IN_PROGRESS', progress: '45%', prompt: 'bob draws', submit_time: now - 300 }
  ]).execute()
  await db.insertInto('tasks').values([
    { user_id: alice, task_id: 'suno-a1', platform: 'suno', action: 'MUSIC', channel_id: 5, status: 'SUCCESS', progress: '100%', submit_time: now - 10, finish_time: now },
    { user_id: alice, task_id: 'suno-a2', platform: 'suno', action: 'LYRICS', channel_id: 7, status: '', submit_time: now - 5 },
    { user_id: alice, task_id: 'suno-old', platform: 'suno', action: 'MUSIC', channel_id: 5, status: 'FAILURE', fail_reason: 'upstream timeout', submit_time: startOfToday - 3600 },
    { user_id: bob, task_id: 'suno-b1', platform: 'suno', action: 'MUSIC', channel_id: 7, status: 'QUEUED', submit_time: now - 8 }
  ]).execute()

  const user = await openPage(t, browser, system.url, { viewport: DESKTOP })
  await signIn(user, 'alice', 'alice-pass-1')

  await t.test('a user sees only their own drawings of the last 30 days, without admin columns', async (t) => {
    await user.goto('/midjourney')
    await waitForIds(user, 'mj-row-', ['mj-a1', 'mj-a2'])
    t.pass('own tasks of the last 30 days only')
    const headers = await user.locator('thead th').allTextContents()
    t.notOk(headers.includes('Channel'), 'no channel column')
    t.notOk(headers.includes('Submit result'), 'no submit result column')
    t.equal(await user.getByLabel('Channel ID').count(), 0, 'no channel filter')
    const done = user.getByTestId('mj-row-mj-a1')
    await done.getByText('Succeeded').waitFor()
    await done.getByText('Imagine').waitFor()
    await done.getByText('a cat on the moon').waitFor()
    await done.getByText('60 s').waitFor()
    t.equal(await done.getByRole('link', { name: 'Open the image of task mj-a1' }).getAttribute('href'), imageUrl, 'the image links to its address')
    await until(async () => await done.locator('img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
    t.pass('the thumbnail loads')
    const failed = user.getByTestId('mj-row-mj-a2')
    await failed.getByText('Failed').waitFor()
    await failed.getByText('banned prompt detected').waitFor()
    t.pass('status, prompt, image, failure reason and duration are shown')
    t.equal(await overflow(user), 0, '1280px: nothing wider than the window')
    await screenshot(user, 'midjourney-user-1280')

    await user.getByLabel('From').fill(new Date((now - 60 * 86_400) * 1000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16))
    await user.getByRole('button', { name: 'Search' }).click()
    await waitForIds(user, 'mj-row-', ['mj-a1', 'mj-a2', 'mj-old'])
    t.pass('a wider range shows the older task')
    await user.getByLabel('Task ID').fill('mj-a2')
    await user.getByRole('button', { name: 'Search' }).click()
    await waitForIds(user, 'mj-row-', ['mj-a2'])
    t.pass('the task id filter')
    await user.getByRole('button', { name: 'Reset' }).click()
    await waitForIds(user, 'mj-row-', ['mj-a1', 'mj-a2'])
    t.equal(await user.getByLabel('Task ID').inputValue(), '', 'reset clears the filters')
  })

  await t.test('a user sees only their own music tasks from the start of today', async (t) => {
    await user.goto('/task')
    await waitForIds(user, 'task-row-', ['suno-a1', 'suno-a2'])
    t.pass('own tasks of today only')
    const headers = await user.locator('thead th').allTextContents()
    t.notOk(headers.includes('Channel'), 'no channel column')
    t.equal(await user.getByLabel('Channel ID').count(), 0, 'no channel filter')
    await user.getByTestId('task-row-suno-a2').getByText('Submitting').waitFor()
    await user.getByTestId('task-row-suno-a2').getByText('Generate lyrics').waitFor()
    await user.getByTestId('task-row-suno-a1').getByText('Succeeded').waitFor()
    await user.getByTestId('task-row-suno-a1').getByText('10 s').waitFor()
    t.pass('an empty status reads as submitting')
    t.equal(await overflow(user), 0, '1280px: nothing wider than the window')
    await screenshot(user, 'task-user-1280')
  })

  await t.test('an admin sees every drawing with channel and submit result, and filters by channel', async (t) => {
    await admin.goto('/midjourney')
    await waitForIds(admin, 'mj-row-', ['mj-a1', 'mj-a2', 'mj-b1'])
    t.pass('everyone\'s tasks')
    const headers = await admin.locator('thead th').allTextContents()
    t.ok(headers.includes('Channel'), 'the channel column')
    t.ok(headers.includes('Submit result'), 'the submit result column')
    await admin.getByTestId('mj-row-mj-a1').getByText('Submitted', { exact: true }).waitFor()
    await admin.getByTestId('mj-row-mj-a2').getByText('Duplicate').waitFor()
    await admin.getByTestId('mj-row-mj-b1').getByText('Waiting').waitFor()
    await admin.getByTestId('mj-row-mj-b1').getByRole('cell', { name: '7', exact: true }).waitFor()
    t.pass('submit result codes and channels are shown')
    await admin.getByLabel('Channel ID').fill('7')
    await admin.getByRole('button', { name: 'Search' }).click()
    await waitForIds(admin, 'mj-row-', ['mj-a2', 'mj-b1'])
    t.pass('the channel filter')
    t.equal(await overflow(admin), 0, '1280px: nothing wider than the window')
    await screenshot(admin, 'midjourney-admin-1280')
  })

  await t.test('an admin sees every music task with channels and filters by channel', async (t) => {
    await admin.goto('/task')
    await waitForIds(admin, 'task-row-', ['suno-a1', 'suno-a2', 'suno-b1'])
    t.ok((await admin.locator('thead th').allTextContents()).includes('Channel'), 'the channel column')
    await admin.getByTestId('task-row-suno-b1').getByText('Queued').waitFor()
    await admin.getByLabel('Channel ID').fill('5')
    await admin.getByRole('button', { name: 'Search' }).click()
    await waitForIds(admin, 'task-row-', ['suno-a1'])
    t.pass('the channel filter')
    await admin.getByLabel('Task ID').fill('suno-b1')
    await admin.getByLabel('Channel ID').fill('')
    await admin.getByRole('button', { name: 'Search' }).click()
    await waitForIds(admin, 'task-row-', ['suno-b1'])
    t.pass('the task id filter')
    await screenshot(admin, 'task-admin-1280')
  })

  await t.test('both screens fit 600 px for users and admins', async (t) => {
    for (const [who, name] of [['alice', 'user'], ['root', 'admin']] as const) {
      const narrow = await openPage(t, browser, system.url, { viewport: NARROW })
      await signIn(narrow, who, who === 'root' ? '123456' : 'alice-pass-1')
      await narrow.goto('/midjourney')
      await narrow.getByTestId('mj-row-mj-a1').waitFor()
      t.equal(await overflow(narrow), 0, `600px drawing (${name}): nothing wider than the window`)
      await screenshot(narrow, `midjourney-${name}-600`)
      await narrow.goto('/task')
      await narrow.getByTestId('task-row-suno-a1').waitFor()
      t.equal(await overflow(narrow), 0, `600px music (${name}): nothing wider than the window`)
      await screenshot(narrow, `task-${name}-600`)
    }
  })
})
