import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { until } from '../src/ui.js'

/**
 * The drawing (/midjourney) and music and video (/task) screens as a user meets them: task rows as
 * the gateway and the billing worker write them (with their billing columns) straight into
 * Postgres, then changed there while the screens are open, which must show the change on their own.
 */

/** A 1x1 PNG: thumbnails and covers load from a real image server. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

/** A tenth of a second of silence as a PCM WAV (8 kHz, 8-bit, mono): a song the player can load. */
function silentWav (): Buffer {
  const samples = 800
  const header = Buffer.alloc(44)
  header.write('RIFF', 0)
  header.writeUInt32LE(36 + samples, 4)
  header.write('WAVE', 8)
  header.write('fmt ', 12)
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(1, 22) // mono
  header.writeUInt32LE(8000, 24)
  header.writeUInt32LE(8000, 28)
  header.writeUInt16LE(1, 32)
  header.writeUInt16LE(8, 34)
  header.write('data', 36)
  header.writeUInt32LE(samples, 40)
  return Buffer.concat([header, Buffer.alloc(samples, 128)])
}

/** The upstream's media server: images, songs and videos by extension; counts what is asked of it. */
async function mediaServer (t: Test): Promise<{ url: string, hits: Map<string, number> }> {
  const wav = silentWav()
  const hits = new Map<string, number>()
  const server = createServer((req, res) => {
    const path = req.url ?? '/'
    hits.set(path, (hits.get(path) ?? 0) + 1)
    if (path.endsWith('.png')) res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL)
    else if (path.endsWith('.wav')) res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length }).end(wav)
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits }
}

/** What the billing columns of a charged task hold; a poll lease an hour ahead keeps the worker's poller off these rows. */
function billing (username: string, model: string, requestId: string) {
  return { token_id: 0, token_name: `${username}-key`, unlimited_token: false, username, model_name: model, group: 'default', request_id: requestId, refunded_at: 0, lease_until: Date.now() + 3_600_000, quota: 50_000 }
}

/** Whether the page is wider than its window (the brief's measure). */
const overflows = async (page: Page): Promise<boolean> => await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)

/** Console list requests of `path` the page makes, and how many were in flight at most at once. */
function watchRequests (page: Page, path: string): { count: () => number, maxInFlight: () => number } {
  let count = 0
  let inFlight = 0
  let max = 0
  const mine = (url: string) => new URL(url).pathname.startsWith(path)
  page.on('request', (r) => { if (mine(r.url())) { count++; inFlight++; max = Math.max(max, inFlight) } })
  const done = (r: { url: () => string }) => { if (mine(r.url())) inFlight-- }
  page.on('requestfinished', done)
  page.on('requestfailed', done)
  return { count: () => count, maxInFlight: () => max }
}

/** The ids of the rows shown (the data-testid suffixes), sorted. */
async function shownIds (page: Page, prefix: string): Promise<string[]> {
  return (await page.locator(`tbody tr[data-testid^="${prefix}"]`).evaluateAll((rows, p) => rows.map((r) => r.getAttribute('data-testid')!.slice(p.length)), prefix)).sort()
}

/** Marks the document: the mark survives exactly as long as the page is not reloaded. */
async function markDocument (page: Page): Promise<void> {
  await page.evaluate(() => { (window as unknown as { __noReload: string }).__noReload = 'still here' })
}
const stillMarked = async (page: Page): Promise<boolean> => await page.evaluate(() => (window as unknown as { __noReload?: string }).__noReload === 'still here')

/** Makes the page report itself hidden (or visible again), as a background tab does. */
async function setHidden (page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((h) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => h ? 'hidden' : 'visible' })
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => h })
    document.dispatchEvent(new Event('visibilitychange'))
  }, hidden)
}

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('drawing and music screens: own tasks, live progress and results, at 1280 and 600 px', async (t) => {
  const media = await mediaServer(t)
  const system = await startSystem(t)
  const db = system.controlPlane.db
  const root = await apiSession(t, system.url, 'root', '123456')
  for (const name of ['alice', 'bob']) await root.call('POST', '/api/user/', { username: name, password: `${name}-pass-1` })
  const idOf = async (username: string) => (await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id
  const alice = await idOf('alice')
  const bob = await idOf('bob')
  const browser = await launchBrowser(t)

  const now = () => Math.floor(Date.now() / 1000)
  const longPrompt = 'a lighthouse on a cliff at dusk, waves crashing below, volumetric light, seagulls circling, ' +
    'oil painting in the style of the old masters, warm palette, very detailed, ending with the word LIGHTHOUSE-END'
  const xssPrompt = '<img src=x onerror="window.__xss=1">'

  // Another user's unfinished tasks: never shown to alice, even while her lists refresh.
  await db.insertInto('midjourneys').values({ user_id: bob, mj_id: 'mj-bob', action: 'IMAGINE', code: 1, channel_id: 9, status: 'IN_PROGRESS', progress: '10%', prompt: 'bob draws', image_url: `${media.url}/bob.png`, submit_time: now() - 30, ...billing('bob', 'mj_imagine', 'req-mj-bob') }).execute()
  await db.insertInto('tasks').values({ user_id: bob, task_id: 'suno-bob', platform: 'suno', action: 'MUSIC', channel_id: 9, status: 'IN_PROGRESS', progress: '20%', submit_time: now() - 5, data: JSON.stringify([]), ...billing('bob', 'suno_music', 'req-suno-bob') }).execute()

  for (const viewport of [DESKTOP, NARROW]) {
    const w = viewport.width
    await t.test(`${w}px: drawing tasks show progress live, thumbnails, prompts and failures`, async (t) => {
      const live = `mj-live-${w}`
      const failed = `mj-fail-${w}`
      await db.insertInto('midjourneys').values([
        { user_id: alice, mj_id: live, action: 'IMAGINE', code: 1, channel_id: 9, status: 'IN_PROGRESS', progress: '45%', prompt: longPrompt, prompt_en: 'a lighthouse (English)', image_url: `${media.url}/${live}-draft.png`, submit_time: now() - 60, start_time: now() - 55, ...billing('alice', 'mj_imagine', `req-${live}`) },
        { user_id: alice, mj_id: failed, action: 'UPSCALE', code: 1, channel_id: 9, status: 'FAILURE', progress: '0%', prompt: xssPrompt, fail_reason: 'banned prompt detected', image_url: 'javascript:window.__xss=2', submit_time: now() - 120, finish_time: now() - 100, ...billing('alice', 'mj_upscale', `req-${failed}`), refunded_at: now() - 100 }
      ]).execute()
      const page = await openPage(t, browser, system.url, { viewport })
      await signIn(page, 'alice', 'alice-pass-1')
      const requests = watchRequests(page, '/api/mj/self')
      await page.goto('/midjourney')
      const row = page.getByTestId(`mj-row-${live}`)
      await row.waitFor()
      const ids = await shownIds(page, 'mj-row-')
      t.ok(ids.includes(live) && ids.includes(failed), 'her tasks are listed')
      t.notOk(ids.includes('mj-bob'), 'not another user\'s task')
      t.same(await page.locator('thead th').allTextContents().then((h) => h.filter((x) => x === 'Channel' || x === 'Submit result')), [], 'no admin columns for a user')

      await row.getByText('In progress').waitFor()
      t.equal(await row.getByTestId('progress-text').innerText(), '45%', 'progress as a percentage')
      t.equal(await row.getByRole('progressbar').getAttribute('aria-valuenow'), '45', 'and as a bar')
      await page.getByTestId('task-live').waitFor()
      t.pass('the page says it updates itself')
      const thumb = row.locator('img')
      t.equal(await thumb.getAttribute('src'), `${media.url}/${live}-draft.png`, 'the thumbnail is the task image')
      await until(async () => await thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
      t.pass('the thumbnail loads')
      await row.getByRole('link', { name: `Open the image of task ${live}` }).click()
      const preview = page.getByRole('dialog').getByTestId('image-preview')
      await preview.waitFor()
      t.equal(await preview.getAttribute('src'), `${media.url}/${live}-draft.png`, 'a click opens a larger preview in the page')
      t.equal(page.url(), `${system.url}/midjourney`, 'without leaving the page')
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()
      await page.getByRole('dialog').waitFor({ state: 'detached' })

      await row.getByText('LIGHTHOUSE-END').click()
      const full = page.getByRole('dialog').getByTestId('full-text')
      t.equal(await full.innerText(), longPrompt, 'a click on the truncated prompt shows all of it')
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()
      await page.getByRole('dialog').waitFor({ state: 'detached' })
      await row.getByText('a lighthouse (English)').waitFor()

      const bad = page.getByTestId(`mj-row-${failed}`)
      await bad.getByText('Failed').waitFor()
      await bad.getByText('banned prompt detected').waitFor()
      t.pass('the failure reason is shown')
      await bad.getByText(xssPrompt).waitFor()
      t.equal(await bad.locator('img, a').count(), 0, 'a javascript: image address becomes neither image nor link; the prompt is text')
      t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'nothing ran')
      t.notOk(await overflows(page), `${w}px: nothing wider than the window`)
      await screenshot(page, `task-screens-midjourney-${w}`)

      // A background tab asks nothing; shown again, it asks at once.
      await setHidden(page, true)
      await sleep(500)
      const hiddenFrom = requests.count()
      await sleep(6000)
      t.equal(requests.count(), hiddenFrom, 'no refresh while the page is hidden')
      await setHidden(page, false)
      await until(async () => requests.count() > hiddenFrom, 3000)
      t.pass('a refresh as soon as the page is shown again')

      // The worker's poller reports success: the open page shows it without a reload.
      await markDocument(page)
      await db.updateTable('midjourneys').set({ status: 'SUCCESS', progress: '100%', image_url: `${media.url}/${live}-final.png`, finish_time: now(), updated_at: now() }).where('mj_id', '=', live).execute()
      await row.getByText('Succeeded').waitFor({ timeout: 15_000 })
      await until(async () => await row.getByTestId('progress-text').innerText() === '100%')
      await until(async () => await thumb.getAttribute('src') === `${media.url}/${live}-final.png`)
      t.ok(await stillMarked(page), 'status, progress and image changed in place, without a reload')
      t.equal(await row.getByRole('progressbar').getAttribute('aria-valuenow'), '100', 'the bar is full')
      await page.getByTestId('task-live').waitFor({ state: 'detached' })
      t.pass('with every task finished the page stops saying it updates')
      const finishedFrom = requests.count()
      await sleep(6000)
      t.equal(requests.count(), finishedFrom, 'and stops asking')
      t.equal(requests.maxInFlight(), 1, 'never two list requests at once')
      t.notOk(await overflows(page), `${w}px: still nothing wider than the window`)
    })

    await t.test(`${w}px: music and video tasks show songs, players, covers and video links, live`, async (t) => {
      const live = `suno-live-${w}`
      const song = (n: number) => ({ id: `clip-${w}-${n}`, title: `Moon song ${n}`, audio_url: `${media.url}/clip-${w}-${n}.wav`, image_url: `${media.url}/cover-${w}-${n}.png`, video_url: `${media.url}/clip-${w}-${n}.mp4`, metadata: { tags: 'dream pop' } })
      await db.insertInto('tasks').values([
        { user_id: alice, task_id: live, platform: 'suno', action: 'MUSIC', channel_id: 9, status: 'IN_PROGRESS', progress: '30%', submit_time: now() - 4, data: JSON.stringify([]), ...billing('alice', 'suno_music', `req-${live}`) },
        { user_id: alice, task_id: `suno-done-${w}`, platform: 'suno', action: 'MUSIC', channel_id: 9, status: 'SUCCESS', progress: '100%', submit_time: now() - 20, finish_time: now() - 2, data: JSON.stringify([song(1), song(2)]), ...billing('alice', 'suno_music', `req-suno-done-${w}`) },
        { user_id: alice, task_id: `lyrics-${w}`, platform: 'suno', action: 'LYRICS', channel_id: 9, status: 'SUCCESS', progress: '100%', submit_time: now() - 30, finish_time: now() - 25, data: JSON.stringify({ id: 'l1', title: 'Night verse', text: 'la la la\nunder the LYRICS-MOON' }), ...billing('alice', 'suno_lyrics', `req-lyrics-${w}`) },
        { user_id: alice, task_id: `video-url-${w}`, platform: 'video', action: 'generate', channel_id: 9, status: 'SUCCESS', progress: '100%', submit_time: now() - 40, finish_time: now() - 10, data: JSON.stringify({ id: 'v1', object: 'video', status: 'completed', url: `${media.url}/v1.mp4` }), ...billing('alice', 'sora-2', `req-video-url-${w}`) },
        { user_id: alice, task_id: `video-api-${w}`, platform: 'video', action: 'generate', channel_id: 9, status: 'FAILURE', progress: '12%', fail_reason: 'content policy violation', submit_time: now() - 50, finish_time: now() - 45, data: JSON.stringify({ id: 'v2', object: 'video', status: 'failed', progress: 12 }), ...billing('alice', 'sora-2', `req-video-api-${w}`), refunded_at: now() - 45 }
      ]).execute()
      const page = await openPage(t, browser, system.url, { viewport })
      await signIn(page, 'alice', 'alice-pass-1')
      const requests = watchRequests(page, '/api/task/self')
      await page.goto('/task')
      const row = page.getByTestId(`task-row-${live}`)
      await row.waitFor()
      const ids = await shownIds(page, 'task-row-')
      t.ok([live, `suno-done-${w}`, `lyrics-${w}`, `video-url-${w}`, `video-api-${w}`].every((id) => ids.includes(id)), 'her tasks are listed')
      t.notOk(ids.includes('suno-bob'), 'not another user\'s task')
      t.notOk((await page.locator('thead th').allTextContents()).includes('Channel'), 'no channel column for a user')

      await row.getByText('In progress').waitFor()
      t.equal(await row.getByTestId('progress-text').innerText(), '30%', 'progress as a percentage')
      t.equal(await row.locator('audio').count(), 0, 'no song yet')
      await page.getByTestId('task-live').waitFor()

      const done = page.getByTestId(`task-row-suno-done-${w}`)
      const clips = done.getByTestId('task-clip')
      t.equal(await clips.count(), 2, 'both songs of the task')
      for (const n of [1, 2]) {
        const clip = clips.nth(n - 1)
        await clip.getByText(`Moon song ${n}`).waitFor()
        const audio = clip.locator('audio')
        t.equal(await audio.getAttribute('src'), `${media.url}/clip-${w}-${n}.wav`, `song ${n}: a player of its audio`)
        t.equal(await audio.getAttribute('controls'), '', 'with controls')
        t.equal(await clip.getByRole('link', { name: 'Video' }).getAttribute('href'), `${media.url}/clip-${w}-${n}.mp4`, 'and its video')
        const cover = clip.locator('img')
        t.equal(await cover.getAttribute('src'), `${media.url}/cover-${w}-${n}.png`, 'its cover')
        await until(async () => await cover.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
      }
      // The console's security policy lets the player load the upstream's audio.
      const first = clips.first().locator('audio')
      await first.evaluate((a: HTMLAudioElement) => { a.preload = 'auto'; a.load() })
      await until(async () => await first.evaluate((a: HTMLAudioElement) => a.readyState >= 1 && a.error === null))
      t.ok((media.hits.get(`/clip-${w}-1.wav`) ?? 0) > 0, 'the song loads in the player')
      await clips.first().getByRole('link', { name: 'Cover of Moon song 1' }).click()
      const preview = page.getByRole('dialog').getByTestId('image-preview')
      t.equal(await preview.getAttribute('src'), `${media.url}/cover-${w}-1.png`, 'a click on a cover opens it larger')
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click()
      await page.getByRole('dialog').waitFor({ state: 'detached' })

      const lyrics = page.getByTestId(`task-row-lyrics-${w}`)
      await lyrics.getByText('Night verse').waitFor()
      await lyrics.getByText('Generate lyrics').waitFor()
      await lyrics.getByText(/LYRICS-MOON/).waitFor()
      t.pass('the lyrics of a lyrics task')

      const video = page.getByTestId(`task-row-video-url-${w}`)
      await video.getByText('Generate video').waitFor()
      t.equal(await video.getByRole('link', { name: 'Play or download the video' }).getAttribute('href'), `${media.url}/v1.mp4`, 'a video the data name is linked')
      const apiVideo = page.getByTestId(`task-row-video-api-${w}`)
      await apiVideo.getByText('content policy violation').waitFor()
      await apiVideo.getByText('Failed').waitFor()
      t.equal(await apiVideo.getByRole('link').count(), 0, 'a video object without an address gets no link')
      t.equal(await apiVideo.getByTestId('progress-text').innerText(), '12%', 'the progress it reached')
      t.notOk(await overflows(page), `${w}px: nothing wider than the window`)
      await screenshot(page, `task-screens-task-${w}`)

      // The worker's poller reports the songs: the open page plays them without a reload.
      await markDocument(page)
      await db.updateTable('tasks').set({ status: 'SUCCESS', progress: '100%', finish_time: now(), updated_at: now(), data: JSON.stringify([{ ...song(3), id: `clip-${w}-live` }]) }).where('task_id', '=', live).execute()
      await row.getByText('Succeeded').waitFor({ timeout: 15_000 })
      await until(async () => await row.getByTestId('progress-text').innerText() === '100%')
      await row.locator('audio').waitFor()
      t.equal(await row.locator('audio').getAttribute('src'), `${media.url}/clip-${w}-3.wav`, 'the new song has a player')
      await row.getByText('Moon song 3').waitFor()
      t.ok(await stillMarked(page), 'changed in place, without a reload')
      await page.getByTestId('task-live').waitFor({ state: 'detached' })
      const finishedFrom = requests.count()
      await sleep(6000)
      t.equal(requests.count(), finishedFrom, 'all finished: no more refreshes')
      t.equal(requests.maxInFlight(), 1, 'never two list requests at once')
      t.notOk(await overflows(page), `${w}px: still nothing wider than the window`)
    })
  }

  await t.test('a slow answer is waited for: refreshes never overlap', async (t) => {
    await db.insertInto('midjourneys').values({ user_id: alice, mj_id: 'mj-slow', action: 'IMAGINE', code: 1, channel_id: 9, status: 'SUBMITTED', progress: '0%', prompt: 'slow', submit_time: now() - 10, ...billing('alice', 'mj_imagine', 'req-mj-slow') }).execute()
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'alice', 'alice-pass-1')
    let inFlight = 0
    let max = 0
    let answered = 0
    // Each list answer takes longer than the refresh interval.
    await page.route((url) => url.pathname.startsWith('/api/mj/self'), async (route) => {
      inFlight++
      max = Math.max(max, inFlight)
      await sleep(6500)
      await route.continue()
      inFlight--
      answered++
    })
    await page.goto('/midjourney')
    await page.getByTestId('mj-row-mj-slow').waitFor({ timeout: 15_000 })
    await until(async () => answered >= 2, 40_000)
    t.equal(max, 1, 'one request at a time')
    await db.updateTable('midjourneys').set({ status: 'SUCCESS', progress: '100%', finish_time: now() }).where('mj_id', '=', 'mj-slow').execute()
    await page.getByTestId('mj-row-mj-slow').getByText('Succeeded').waitFor({ timeout: 30_000 })
    t.pass('and the answer still arrives')
  })

  await t.test('another user sees none of alice\'s tasks', async (t) => {
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'bob', 'bob-pass-1')
    await page.goto('/midjourney')
    await page.getByTestId('mj-row-mj-bob').waitFor()
    t.same(await shownIds(page, 'mj-row-'), ['mj-bob'], 'only his drawing')
    await page.getByLabel('Task ID').fill(`mj-live-${DESKTOP.width}`)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByText('No drawing tasks in this range').waitFor()
    t.pass('alice\'s task id finds nothing')
    await page.goto('/task')
    await page.getByTestId('task-row-suno-bob').waitFor()
    t.same(await shownIds(page, 'task-row-'), ['suno-bob'], 'only his music task')
    t.equal(await page.locator('audio').count(), 0, 'none of alice\'s songs')
  })

  await t.test('an admin sees everyone\'s tasks with channel and submit result', async (t) => {
    const page = await openPage(t, browser, system.url, { viewport: DESKTOP })
    await signIn(page, 'root', '123456')
    await page.goto('/midjourney')
    await page.getByTestId('mj-row-mj-bob').waitFor()
    await page.getByTestId(`mj-row-mj-live-${DESKTOP.width}`).waitFor()
    const headers = await page.locator('thead th').allTextContents()
    t.ok(headers.includes('Channel') && headers.includes('Submit result'), 'the admin columns')
    await page.getByTestId('mj-row-mj-bob').getByRole('cell', { name: '9', exact: true }).waitFor()
    t.equal(await page.getByTestId('mj-row-mj-bob').getByTestId('progress-text').innerText(), '10%', 'progress of every user')
    await page.goto('/task')
    await page.getByTestId('task-row-suno-bob').waitFor()
    t.ok((await page.locator('thead th').allTextContents()).includes('Channel'), 'the channel column')
    t.notOk(await overflows(page), 'nothing wider than the window')
  })
})
