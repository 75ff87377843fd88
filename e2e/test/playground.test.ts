import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Locator, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { apiSession } from '../src/api.js'
import { DESKTOP, launchBrowser, NARROW, openPage, screenshot, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { noOverflow } from '../src/ui.js'

const PASSWORD = 'password123'
const WORDS = ['Hello', ' from', ' the', ' fake', ' upstream', ' model.']
const REPLY = WORDS.join('')

interface UpstreamCall { model: string, body: Record<string, unknown>, headers: IncomingMessage['headers'] }

/**
 * An OpenAI-compatible upstream on 127.0.0.1 that streams its answers word by word. The model
 * picks the behaviour: `broken-model` refuses with HTTP 400, `dying-model` drops the connection
 * after one word, and a question containing "slowly" streams for a long time.
 */
async function fakeUpstream (t: Test): Promise<{ url: string, calls: UpstreamCall[] }> {
  const calls: UpstreamCall[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => { void answer(req, res, Buffer.concat(chunks).toString()) })
  })
  const chunk = (model: string, choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model, choices, ...extra })}\n\n`
  const pause = async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)) }
  const answer = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }))
      return
    }
    const body = JSON.parse(text) as Record<string, unknown>
    const model = String(body['model'])
    calls.push({ model, body, headers: req.headers })
    if (model === 'broken-model') {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'broken-model refuses this request', type: 'invalid_request_error', param: null, code: 'refused' } }))
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    if (model === 'dying-model') {
      res.write(chunk(model, [{ index: 0, delta: { role: 'assistant', content: 'Half an answer' }, finish_reason: null }]))
      await pause(200)
      res.destroy()
      return
    }
    const messages = body['messages'] as Array<{ content: string }>
    const slow = messages.at(-1)?.content.includes('slowly') === true
    const words = slow ? Array.from({ length: 60 }, (_v, i) => ` word${i}`) : WORDS
    for (const word of words) {
      if (res.destroyed) return
      res.write(chunk(model, [{ index: 0, delta: { content: word }, finish_reason: null }]))
      await pause(slow ? 250 : 300)
    }
    res.write(chunk(model, [{ index: 0, delta: {}, finish_reason: 'stop' }]))
    res.write(chunk(model, [], { usage: { prompt_tokens: 12, completion_tokens: words.length, total_tokens: 12 + words.length } }))
    res.end('data: [DONE]\n\n')
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls }
}

/** Picks `model` in the panel (unfolding it first on a small screen). */
async function chooseModel (page: Page, model: string): Promise<void> {
  const select = page.getByRole('combobox', { name: 'Model' })
  if (!await select.isVisible()) await page.getByRole('button', { name: /^Settings/ }).click()
  await select.click()
  await page.getByRole('option', { name: model, exact: true }).click()
}

async function ask (page: Page, text: string): Promise<Locator> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text)
  await page.getByRole('button', { name: 'Send' }).click()
  return page.getByTestId('chat-message').and(page.locator('[data-role="assistant"]')).last()
}

const system = await startSystem(t)
const upstream = await fakeUpstream(t)
const browser = await launchBrowser(t)
const root = await apiSession(t, system.url, 'root', '123456')
const db = system.controlPlane.db

await root.call('POST', '/api/channel/', {
  name: 'fake upstream',
  type: 1,
  key: 'sk-fake-upstream',
  base_url: upstream.url,
  models: 'gpt-4o-mini,broken-model,dying-model',
  groups: 'default',
  auto_ban: 0
})
// The two failing models need a price, or the gateway refuses them before calling the upstream.
const options = await root.call<Array<{ key: string, value: string }>>('GET', '/api/option/')
const ratios = JSON.parse(options.find((o) => o.key === 'ModelRatio')?.value ?? '{}') as Record<string, number>
await root.call('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ ...ratios, 'broken-model': 1, 'dying-model': 1 }) })
for (const username of ['pg1280', 'pg600', 'pgnomodel']) await root.call('POST', '/api/user/', { username, password: PASSWORD, display_name: username })
await db.updateTable('users').set({ quota: 50_000_000 }).where('username', 'in', ['pg1280', 'pg600']).execute()
// A group no channel serves: this user has no models at all.
await db.updateTable('users').set({ group: 'lonely' }).where('username', '=', 'pgnomodel').execute()

t.test('a playground message streams back from the upstream, and failures show as errors, at both widths', async (t) => {
  for (const viewport of [DESKTOP, NARROW]) {
    const username = `pg${viewport.width}`
    const page = await openPage(t, browser, system.url, { viewport })
    const { id } = await signIn(page, username, PASSWORD)
    await page.goto('/playground')
    if (viewport === NARROW) {
      // The panel is folded above the chat and names the chosen model.
      await page.getByRole('button', { name: 'Settings · gpt-4o-mini' }).waitFor()
      t.notOk(await page.getByRole('combobox', { name: 'Model' }).isVisible(), '600px: the settings panel starts folded')
    } else {
      await page.getByRole('combobox', { name: 'Model' }).filter({ hasText: 'gpt-4o-mini' }).waitFor()
      await page.getByRole('textbox', { name: 'System prompt' }).fill('You are a test.')
      // The slider starts at its 0.1 end (temperature 0 until moved); one step right is 0.2.
      await page.getByRole('slider').focus()
      await page.keyboard.press('ArrowRight')
      await page.getByText('Temperature: 0.2').waitFor()
    }
    t.pass(`${viewport.width}px: the default model gpt-4o-mini is chosen`)

    const calls = upstream.calls.length
    const reply = await ask(page, 'Say hello')
    await page.getByTestId('chat-message').filter({ hasText: 'Say hello' }).waitFor()
    // Progressive: part of the answer is on screen while the stream is still running.
    await reply.and(page.locator('[data-state="incomplete"]')).filter({ hasText: 'Hello from' }).waitFor()
    t.notOk((await reply.innerText()).includes('model.'), `${viewport.width}px: the first words show before the last one arrived`)
    await page.getByRole('button', { name: 'Stop' }).waitFor()
    await reply.and(page.locator('[data-state="complete"]')).waitFor({ timeout: 20_000 })
    t.equal((await reply.getByTestId('message-text').innerText()).trim(), REPLY, `${viewport.width}px: the whole reply ends complete`)
    await page.getByRole('button', { name: 'Send' }).waitFor()

    const call = upstream.calls[calls]!
    t.equal(call.body['stream'], true, 'the upstream was asked for a stream')
    t.equal(call.model, 'gpt-4o-mini')
    if (viewport === DESKTOP) {
      t.same(call.body['messages'], [{ role: 'system', content: 'You are a test.' }, { role: 'user', content: 'Say hello' }], 'the system prompt goes first')
      t.equal(call.body['temperature'], 0.2, 'the temperature from the slider is sent')
      t.notOk('max_tokens' in call.body, 'max tokens 0 means no limit and is not sent')
    }

    // The playground bills the signed-in user: the worker writes a consume log for the call.
    let log: { quota: number, model_name: string } | undefined
    for (let i = 0; i < 100 && log === undefined; i++) {
      log = await db.selectFrom('logs').select(['quota', 'model_name']).where('user_id', '=', id).where('type', '=', 2).executeTakeFirst()
      if (log === undefined) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    t.equal(log?.model_name, 'gpt-4o-mini', `${viewport.width}px: the playground call is logged for the user`)
    await screenshot(page, `playground-${viewport.width}`)
    await noOverflow(t, page, `playground ${viewport.width}px`)

    // An upstream that refuses: the server's message becomes the reply, marked as an error.
    await chooseModel(page, 'broken-model')
    const refused = await ask(page, 'Please fail')
    await refused.and(page.locator('[data-state="error"]')).waitFor()
    t.match(await refused.innerText(), /broken-model refuses this request/, `${viewport.width}px: an HTTP error shows the server's message`)

    if (viewport === DESKTOP) {
      // An upstream that dies mid-stream: the received text stays and the error data is appended.
      await chooseModel(page, 'dying-model')
      const cut = await ask(page, 'Start and stop')
      await cut.and(page.locator('[data-state="error"]')).waitFor()
      const text = await cut.innerText()
      t.match(text, /Half an answer/, 'the words received before the failure stay')
      t.match(text, /stream_interrupted/, 'the stream error data is appended to the reply')
      await screenshot(page, 'playground-errors-1280')

      // Stop ends a long reply where it is.
      await chooseModel(page, 'gpt-4o-mini')
      const long = await ask(page, 'Count slowly')
      await long.filter({ hasText: 'word1' }).waitFor()
      await page.getByRole('button', { name: 'Stop' }).click()
      await long.and(page.locator('[data-state="complete"]')).waitFor()
      t.match(await long.innerText(), /Stopped/, 'a stopped reply says so')
      t.notOk((await long.innerText()).includes('word59'), 'the reply stopped before its end')

      await page.getByRole('button', { name: 'Clear conversation' }).click()
      t.equal(await page.getByTestId('chat-message').count(), 0, 'clearing removes every message')
      await page.getByText('Pick a model and send a message to start.').waitFor()
    }
  }
})

t.test('a user without models is told so', async (t) => {
  const page = await openPage(t, browser, system.url, { viewport: NARROW })
  await signIn(page, 'pgnomodel', PASSWORD)
  await page.goto('/playground')
  await page.getByTestId('no-models').getByText('No models are available to you yet').waitFor()
  t.ok(await page.getByRole('textbox', { name: 'Message' }).isDisabled(), 'the message box is disabled')
  await screenshot(page, 'playground-no-models-600')
})

t.test('the super admin is led from an unpriced model\'s refusal to the price editor, prefilled, at both widths', async (t) => {
  await root.call('POST', '/api/channel/', {
    name: 'unpriced', type: 1, key: 'sk-fake-upstream', base_url: upstream.url, models: 'unpriced-model', groups: 'default', auto_ban: 0
  })
  const before = upstream.calls.length
  for (const viewport of [DESKTOP, NARROW]) {
    const page = await openPage(t, browser, system.url, { viewport })
    await signIn(page, 'root', '123456')
    await page.goto('/playground')
    if (viewport === NARROW) await page.getByRole('button', { name: /^Settings · / }).waitFor()
    else await page.getByRole('combobox', { name: 'Model' }).filter({ hasText: 'gpt-4o-mini' }).waitFor()
    await chooseModel(page, 'unpriced-model')
    const reply = await ask(page, 'Hello?')
    await reply.and(page.locator('[data-state="error"]')).waitFor()
    const link = reply.getByRole('link', { name: 'Set a price for unpriced-model in the price editor' })
    await link.waitFor()
    await screenshot(page, `playground-unpriced-${viewport.width}`)
    await link.click()
    const dialog = page.getByRole('dialog', { name: 'Add a model' })
    await dialog.waitFor()
    t.equal(await dialog.getByLabel('Model name').inputValue(), 'unpriced-model', `${viewport.width}px: the editor opens a new row with the model's name`)
    t.equal(new URL(page.url()).searchParams.get('tab'), 'operation')
    await dialog.getByLabel('Ratio', { exact: true }).fill('1')
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.getByTestId('ratio-row-unpriced-model').waitFor()
    await screenshot(page, `playground-unpriced-priced-${viewport.width}`)
    // Back to unpriced for the next width.
    const options = await root.call<Array<{ key: string, value: string }>>('GET', '/api/option/')
    const stored = JSON.parse(options.find((o) => o.key === 'ModelRatio')?.value ?? '{}') as Record<string, number>
    t.equal(stored['unpriced-model'], 1, 'Confirm stored the price')
    delete stored['unpriced-model']
    await root.call('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify(stored) })
  }
  t.equal(upstream.calls.length, before, 'the refused requests never reached the upstream')
})
