import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { httpTestProxy } from '@modelgate/testing'
import { balanceSupported, queryBalance } from '../src/index.js'

const MiB = 1024 * 1024

/**
 * Billing answers on 127.0.0.1 picked by the first path segment: `ok` (OpenAI's dashboard
 * billing), `shape` (a subscription without hard_limit_usd), `text` (not JSON), `huge` (a 2 MiB
 * answer), `slow` (no answer) and `moved` (a redirect, which is not followed).
 */
async function upstream (t: Test) {
  const seen: Array<{ url: string, headers: Record<string, string | string[] | undefined> }> = []
  const server = createServer((req, res) => {
    req.resume()
    seen.push({ url: req.url ?? '', headers: req.headers })
    const [, mode = '', ...rest] = (req.url ?? '').split('?')[0]!.split('/')
    const path = `/${rest.join('/')}`
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (mode === 'slow') return
    if (mode === 'moved') {
      res.writeHead(302, { location: '/ok/v1/dashboard/billing/subscription' })
      res.end()
    } else if (mode === 'text') {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<html>login</html>')
    } else if (mode === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(`{"hard_limit_usd":1,"pad":"${'p'.repeat(2 * MiB)}"}`)
    } else if (path.endsWith('/subscription')) {
      json(mode === 'shape' ? { object: 'billing_subscription' } : { hard_limit_usd: 10 })
    } else {
      json({ total_usage: 250 })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const channel = (baseUrl: string, extra: Record<string, unknown> = {}) => ({ id: 1, type: 1, key: 'sk-x', baseUrl, other: '', organization: null, setting: {}, ...extra })

t.test('a balance goes through the channel\'s proxy with its header override', async (t) => {
  const up = await upstream(t)
  const proxy = await httpTestProxy(t, 'alice:s3cret')
  const answer = await queryBalance(channel(`${up.base}/ok`, { proxyUrl: proxy.url, headerOverride: { 'X-Account': 'acct-{api_key}' } }))
  t.same(answer, { status: 'ok', usd: 7.5 }, '10 USD less 250 cents')
  t.equal(proxy.targets.length, 2, 'both billing calls went through the proxy')
  t.ok(proxy.targets.every((target) => target.startsWith(`${up.base}/ok/v1/dashboard/billing/`)))
  t.ok(up.seen.every((s) => s.headers['x-account'] === 'acct-sk-x' && s.headers.authorization === 'Bearer sk-x'), 'with the key and the header override')
})

t.test('answers that are not a balance fail with a short reason, never the body', async (t) => {
  const up = await upstream(t)
  t.same(await queryBalance(channel(`${up.base}/shape`)), { status: 'failed', message: 'the OpenAI balance answer has no usable hard_limit_usd' })
  t.same(await queryBalance(channel(`${up.base}/text`)), { status: 'failed', message: 'the upstream balance answer is not a JSON object' })
  t.same(await queryBalance(channel(`${up.base}/huge`)), { status: 'failed', message: 'the upstream answer exceeds 1 MiB' })
  t.same(await queryBalance(channel(`${up.base}/slow`), 300), { status: 'failed', message: 'no answer within 300 ms' })
  t.same(await queryBalance(channel(`${up.base}/moved`)), { status: 'failed', message: 'upstream answered HTTP 302' }, 'redirects are not followed')
  t.match(await queryBalance(channel('ftp://example.com')), { status: 'failed', message: /must start with http/ })
})

t.test('types without a billing endpoint are unsupported and send nothing', async (t) => {
  const up = await upstream(t)
  for (const type of [3, 4, 14, 19, 42, 999]) {
    t.equal(balanceSupported(type), false, `type ${type}`)
    t.same(await queryBalance(channel(`${up.base}/ok`, { type })), { status: 'unsupported' })
  }
  t.equal(up.seen.length, 0)
  for (const type of [1, 8, 25, 40, 43]) t.equal(balanceSupported(type), true, `type ${type}`)
})
