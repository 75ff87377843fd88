import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { apiSession } from '../src/api.js'
import { launchBrowser, openPage, signIn } from '../src/browser.js'
import { startSystem } from '../src/system.js'
import { until } from '../src/ui.js'
import { fakeOpenAI } from '../src/upstream.js'

/**
 * Everything here would run script in the console if it were rendered as HTML (each sets
 * window.__xss and calls alert), as links that run script, or as frames with script.
 */
const HTML_PAYLOADS = [
  '<a href="https://example.com" target="_blank">safe link</a> **bold**',
  '<img src=x onerror="window.__xss=1;alert(1)">',
  '<script>window.__xss=2;alert(2)</script>',
  '[x](javascript:window.__xss=3;alert(3))',
  '<iframe srcdoc="<script>parent.__xss=4;parent.alert(4)</script>"></iframe>',
  '<a href="data:text/html,<script>alert(5)</script>">data link</a>',
  '<a href="javascript:window.__xss=6;alert(6)">js link</a>',
  '<svg><script>window.__xss=7;alert(7)</script></svg>',
  '<details open ontoggle="window.__xss=9;alert(9)">d</details>',
  '<form action="javascript:alert(10)"><button>go</button></form>',
  // Last: an unclosed <style> inside MathML swallows what follows.
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=8;alert(8)">'
].join('\n\n')

/** An SVG logo with script: shown only as an image, where SVG never runs script. */
const SVG_LOGO = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" onload="parent.__xss=11"><script>parent.__xss=12;alert(12)</script><rect width="10" height="10"/></svg>')}`
const NAME_XSS = '<img src=x onerror="window.__xss=20;alert(20)">'
const MODEL_XSS = '<img src=x onerror=window.__xss=21>'
/** A redemption code name is at most 20 characters. */
const CODE_XSS = '<svg/onload=alert()>'

/** The DOM a sanitizer must never let through, described; [] when clean. */
async function unsafeDom (page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const found: string[] = []
    for (const el of Array.from(document.querySelectorAll('*'))) {
      for (const attr of Array.from(el.attributes)) {
        if (/^on/i.test(attr.name)) found.push(`${el.tagName} ${attr.name}`)
        if (/^(href|src|action|formaction|xlink:href)$/i.test(attr.name) && /^\s*(javascript|data:text)/i.test(attr.value)) found.push(`${el.tagName} ${attr.name}=${attr.value}`)
      }
      if (el.tagName === 'IFRAME' && el.hasAttribute('srcdoc')) found.push('iframe srcdoc')
      if (el.tagName === 'SCRIPT' && (el as HTMLScriptElement).src === '') found.push('inline script')
      if (el.tagName === 'FORM' && el.closest('#root') !== null && el.getAttribute('action') !== null) found.push('form with action')
    }
    return found
  })
}

/** Fails the test on any dialog (an alert a payload raised). */
function watch (t: Test, page: Page): void {
  page.on('dialog', (d) => { t.fail(`a dialog opened on ${page.url()}: ${d.message()}`); void d.dismiss() })
}

async function noScriptRan (t: Test, page: Page, screen: string): Promise<void> {
  t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, `${screen}: no payload ran`)
  t.same(await unsafeDom(page), [], `${screen}: no handler, script link, srcdoc frame or inline script in the DOM`)
}

/** A plain HTTP server on 127.0.0.1 answering `handler`; its base URL. */
async function serve (t: Test, handler: (path: string, query: URLSearchParams) => { type: string, body: string }): Promise<string> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const { type, body } = handler(url.pathname, url.searchParams)
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('SEC-30 admin-set HTML and user-controlled text never run script in the console: sanitised, CSP-enforced, URL pages sandboxed and messaged by origin', async (t) => {
  const system = await startSystem(t)
  const root = await apiSession(t, system.url, 'root', '123456')

  // The URL home page: on the console's message it reports what it got, tries to reach the
  // console, then moves to another origin that must not receive the next message.
  const got = { a: [] as Array<{ origin: string, data: string, parent: string, top: string }>, b: [] as string[] }
  const other = await serve(t, (path, q) => {
    if (path === '/got') got.b.push(q.get('seen') ?? '')
    return {
      type: 'text/html',
      // Reports what it received before the test's marker message.
      body: `<!doctype html><p>elsewhere</p><script>
        const seen = []
        window.addEventListener('message', (e) => { if (e.data === 'marker') fetch('/got?seen=' + encodeURIComponent(JSON.stringify(seen))); else seen.push(e.data) })
      </script>`
    }
  })
  const framed = await serve(t, (path, q) => {
    if (path === '/got') got.a.push({ origin: q.get('origin') ?? '', data: q.get('data') ?? '', parent: q.get('parent') ?? '', top: q.get('top') ?? '' })
    return {
      type: 'text/html',
      body: `<!doctype html><p>home</p><script>
        window.addEventListener('message', async (e) => {
          let parentReach = 'blocked'; try { parent.__xss = 30; parentReach = String(parent.document.title) } catch { }
          let topNav = 'blocked'; try { top.location.href = location.search.slice(1) + '/hijacked'; topNav = 'attempted' } catch { }
          await fetch('/got?origin=' + encodeURIComponent(e.origin) + '&data=' + encodeURIComponent(JSON.stringify(e.data)) + '&parent=' + parentReach + '&top=' + topNav)
          location.href = location.search.slice(1) + '/page'
        })
      </script>`
    }
  })

  await root.setOptions({
    ModelRatio: JSON.stringify({ 'gpt-4o-mini': 1, [MODEL_XSS]: 1 }),
    Notice: HTML_PAYLOADS,
    About: HTML_PAYLOADS,
    Footer: HTML_PAYLOADS,
    SystemName: NAME_XSS,
    Logo: SVG_LOGO,
    HomePageContent: `${framed}/?${other}`
  })

  // User-controlled names: a user's display name and token, a channel, a redemption code, a model
  // name an upstream lists.
  const upstream = await fakeOpenAI(t, { models: ['gpt-4o-mini', MODEL_XSS] })
  const fetched = await root.call<string[]>('POST', '/api/channel/fetch_models', { type: 1, key: 'sk-up', base_url: upstream.url })
  t.ok(fetched.includes(MODEL_XSS), 'the upstream model list carries the HTML name')
  const channel = await root.send<Array<{ id: number }>>('POST', '/api/channel/', { name: NAME_XSS, type: 1, key: 'sk-up', base_url: upstream.url, models: `gpt-4o-mini,${MODEL_XSS}`, group: 'default' })
  t.equal(channel.success, true, channel.message)
  await root.call('POST', '/api/user/', { username: '<i>u</i>', password: 'password123', display_name: NAME_XSS })
  const user = await apiSession(t, system.url, '<i>u</i>', 'password123')
  await root.call('PUT', '/api/user/', { id: user.id, username: '<i>u</i>', display_name: NAME_XSS, quota: 5_000_000, group: 'default' })
  const token = await user.call<{ full_key: string }>('POST', '/api/token/', { name: NAME_XSS, remain_quota: 1_000_000 })
  await root.call('POST', '/api/redemption/', { name: CODE_XSS, quota: 1000, count: 1 })
  for (const model of ['gpt-4o-mini', MODEL_XSS]) {
    let answer = ''
    await until(async () => {
      const res = await fetch(`${system.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.full_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] })
      })
      answer = `${res.status} ${await res.text()}`
      return res.status === 200
    }).catch(() => { t.fail(`relaying ${model}: ${answer}`) })
  }

  await t.test('the console is served with a CSP that allows no inline script, and the browser enforces it', async (t) => {
    for (const path of ['/', '/about', '/login', '/log']) {
      const res = await fetch(`${system.url}${path}`)
      const csp = res.headers.get('content-security-policy') ?? ''
      const script = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src ')) ?? ''
      t.match(script, /'self'/, `${path}: script-src 'self'`)
      t.notMatch(script, /unsafe-inline|unsafe-eval|\*|data:/, `${path}: no inline, eval, wildcard or data: scripts`)
      t.match(csp, /object-src 'none'/, `${path}: no plugins`)
      t.match(csp, /base-uri 'self'/, `${path}: <base> cannot move the script origin`)
    }
    const browser = await launchBrowser(t)
    const page = await openPage(t, browser, system.url)
    await page.goto('/about')
    const ran = await page.evaluate(async () => {
      const blocked = new Promise<string>((resolve) => { document.addEventListener('securitypolicyviolation', (e) => { resolve(e.violatedDirective) }, { once: true }) })
      const s = document.createElement('script')
      s.textContent = 'window.__csp = 1'
      document.body.appendChild(s)
      // An allowed inline script runs as it is appended; a blocked one is reported.
      if ((window as unknown as { __csp?: number }).__csp === 1) return { ran: true, directive: '' }
      return { ran: false, directive: await blocked }
    })
    t.equal(ran.ran, false, 'an injected inline script does not run')
    t.match(ran.directive, /^script-src/, 'the browser reports the CSP violation')
  })

  const browser = await launchBrowser(t)

  await t.test('about and login (signed out), home (signed in): admin HTML is sanitised, nothing runs', async (t) => {
    const page = await openPage(t, browser, system.url)
    watch(t, page)
    await page.goto('/about')
    const about = page.getByTestId('about-content')
    await about.getByText('safe link').waitFor()
    t.equal(await about.locator('strong').first().textContent(), 'bold', 'markdown still renders')
    t.equal(await about.getByText('safe link').getAttribute('rel'), 'noopener noreferrer', 'a link to a new tab cannot reach the console')
    t.equal(await about.locator('iframe, script, svg, math, form, button, style').count(), 0, 'no frame, script, SVG, MathML, form or style survives')
    t.equal(await about.getByText('data link').getAttribute('href'), null, 'the data: link lost its address')
    t.equal(await about.getByText('js link').getAttribute('href'), null, 'the javascript: link lost its address')
    const footer = page.getByRole('contentinfo')
    await footer.getByText('safe link').waitFor()
    t.equal(await footer.getByText('js link').getAttribute('href'), null, 'the footer is sanitised too')
    await page.getByText(NAME_XSS, { exact: true }).first().waitFor()
    t.pass('the system name shows as text')
    t.equal(await page.locator('header img').count(), 1, 'the SVG logo is shown')
    t.equal(await page.locator('header img').getAttribute('src'), SVG_LOGO, '... as an image, where SVG runs no script')
    await noScriptRan(t, page, 'about')

    await page.goto('/login')
    await page.getByRole('button', { name: /sign in|log in/i }).first().waitFor()
    await noScriptRan(t, page, 'login')

    // Home needs a signed-in user.
    await signIn(page, '<i>u</i>', 'password123')
    await page.addInitScript(() => {
      const w = window as unknown as { __frameLoads: number }
      w.__frameLoads = 0
      document.addEventListener('load', (e) => { if ((e.target as Element).tagName === 'IFRAME') w.__frameLoads++ }, true)
    })
    await page.goto('/')
    await page.getByTestId('notice').getByText('safe link').waitFor()
    const frame = page.getByTestId('home-frame')
    await frame.waitFor()
    const sandbox = (await frame.getAttribute('sandbox')) ?? ''
    t.match(sandbox, /allow-scripts/, 'the URL home page is framed with scripts allowed')
    t.notMatch(sandbox, /allow-top-navigation/, '... but it cannot navigate the console')
    t.equal(await frame.getAttribute('src'), `${framed}/?${other}`)
    await until(async () => got.a.length > 0)
    const first = got.a[0]!
    t.equal(first.origin, system.url, 'the frame got a message from the console origin')
    t.same(JSON.parse(first.data), { themeMode: 'light', lang: 'en' }, '... with theme and language')
    t.equal(first.parent, 'blocked', 'the frame cannot reach the console document')
    t.equal(page.url(), `${system.url}/`, 'the frame did not navigate the console')
    // The frame moved itself to another origin and loaded there, so the console sent its message
    // again; addressed to the configured page's origin, the browser drops it. The test's own
    // marker, sent after that load, arrives after anything the console sent.
    await until(async () => await page.evaluate(() => (window as unknown as { __frameLoads: number }).__frameLoads) >= 2)
    await page.evaluate(() => { document.querySelector<HTMLIFrameElement>('iframe[data-testid="home-frame"]')?.contentWindow?.postMessage('marker', '*') })
    await until(async () => got.b.length > 0)
    t.same(got.b, ['[]'], 'a frame that navigated to another origin received nothing from the console')
    await noScriptRan(t, page, 'home')
  })

  await t.test('token, log, user, channel and redemption screens show user-set names as text', async (t) => {
    const page = await openPage(t, browser, system.url)
    watch(t, page)
    await signIn(page, 'root', '123456')
    for (const [path, text] of [['/log', MODEL_XSS], ['/log', NAME_XSS], ['/user', NAME_XSS], ['/user', '<i>u</i>'], ['/channel', NAME_XSS], ['/redemption', CODE_XSS]] as const) {
      if (page.url() !== `${system.url}${path}`) await page.goto(path)
      await page.getByText(text, { exact: true }).first().waitFor()
      await noScriptRan(t, page, `${path} (${text})`)
    }
    await page.goto('/channel')
    await page.getByText(NAME_XSS, { exact: true }).first().waitFor()
    await page.getByRole('button', { name: 'Test a chosen model' }).first().click()
    await page.getByRole('menuitem', { name: MODEL_XSS }).waitFor()
    await noScriptRan(t, page, 'channel model menu')

    const userPage = await openPage(t, browser, system.url)
    watch(t, userPage)
    await signIn(userPage, '<i>u</i>', 'password123')
    await userPage.goto('/token')
    await userPage.getByText(NAME_XSS, { exact: true }).first().waitFor()
    await noScriptRan(t, userPage, '/token')
  })
})

/** Names that forge a log line, colour a terminal, or run as a spreadsheet formula (each fits a code name). */
const INJECTED = {
  forge: '\n{"level":50,"f":1}',
  ansi: '\u001b[31mred\u001b[0m',
  hyperlink: '=HYPERLINK("//x")',
  cmd: "+cmd|' /C calc'!A0"
}

t.test('SEC-31 names built to inject logs or spreadsheet formulas show as text, and downloaded code lists are neutralised', async (t) => {
  const system = await startSystem(t)
  const root = await apiSession(t, system.url, 'root', '123456')
  await root.call('POST', '/api/user/', { username: '=1+cmd|x', password: 'password123', display_name: INJECTED.hyperlink })
  const user = await apiSession(t, system.url, '=1+cmd|x', 'password123')
  for (const name of Object.values(INJECTED)) {
    await user.call('POST', '/api/token/', { name, remain_quota: 1000 })
    await root.call('POST', '/api/redemption/', { name, quota: 1000, count: 1 })
  }

  const browser = await launchBrowser(t)
  const page = await openPage(t, browser, system.url)
  await signIn(page, 'root', '123456')

  await t.test('the redemption screen shows each name as text', async (t) => {
    await page.goto('/redemption')
    await page.getByText(INJECTED.hyperlink, { exact: true }).first().waitFor()
    await page.getByText(INJECTED.cmd, { exact: true }).first().waitFor()
    await page.getByText('red', { exact: false }).first().waitFor()
    t.ok((await page.locator('#root').innerText()).includes('{"level":50,"f":1}'), 'the forged line is shown as text')
    t.equal(await page.locator('#root a[href*="//x"]').count(), 0, 'no link was made of =HYPERLINK')
  })

  await t.test('the user screen shows the name and display name as text', async (t) => {
    await page.goto('/user')
    await page.getByText('=1+cmd|x', { exact: true }).first().waitFor()
    await page.getByText(INJECTED.hyperlink, { exact: true }).first().waitFor()
    t.pass('shown as typed')
  })

  await t.test('the downloaded code list holds only the codes, none readable as a formula', async (t) => {
    await page.goto('/redemption')
    await page.getByRole('button', { name: 'Add codes' }).click()
    const form = page.getByRole('form', { name: 'Add redemption codes' })
    await form.getByLabel('Name').fill(INJECTED.hyperlink)
    await form.getByLabel('How many codes').fill('2')
    await form.getByRole('button', { name: 'Create' }).click()
    const dialog = page.getByRole('dialog', { name: '2 codes created' })
    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Download' }).click()])
    const lines = readFileSync(await download.path(), 'utf8').split('\n')
    t.equal(lines.length, 2, 'one code per line')
    t.ok(lines.every((l) => /^[0-9a-zA-Z]/.test(l)), 'no line starts with = + - @ or a control character')
    t.notMatch(download.suggestedFilename(), /[\\/:*?"<>|]/, 'the file name is made safe')
  })

  await t.test('the token screen shows each name as text', async (t) => {
    const userPage = await openPage(t, browser, system.url)
    await signIn(userPage, '=1+cmd|x', 'password123')
    await userPage.goto('/token')
    await userPage.getByText(INJECTED.hyperlink, { exact: true }).first().waitFor()
    await userPage.getByText(INJECTED.cmd, { exact: true }).first().waitFor()
    t.ok((await userPage.locator('#root').innerText()).includes('{"level":50,"f":1}'), 'the forged line is shown as text')
  })
})
