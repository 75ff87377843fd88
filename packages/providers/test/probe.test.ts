import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { httpTestProxy, socksTestProxy } from '@modelgate/testing'
import { adaptorFor, fetchModels, testChannel } from '../src/index.js'

t.test('a channel test times a real request and reports failures; model lists are fetched', async (t) => {
  let mode: 'ok' | 'bad-key' | 'slow' = 'ok'
  const server = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }, { id: 'o3', object: 'model' }] }))
      return
    }
    if (mode === 'bad-key') {
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }))
      return
    }
    if (mode === 'slow') return
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const channel = { id: 1, type: 1, key: 'sk-x', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, other: '', organization: null, setting: {} }
  const openai = adaptorFor(1)!
  const okRun = await testChannel(openai, channel, 'gpt-4o-mini')
  t.equal(okRun.ok, true)
  t.ok(okRun.ms >= 0)
  mode = 'bad-key'
  t.match(await testChannel(openai, channel, 'gpt-4o-mini'), { ok: false, message: /Incorrect API key/ })
  mode = 'slow'
  t.match(await testChannel(openai, channel, 'gpt-4o-mini', 300), { ok: false, message: 'no answer within 300 ms' })
  t.same(await fetchModels(openai, channel), ['gpt-4o-mini', 'o3'])
})

t.test("a channel's proxy carries its tests and model lists: HTTP with credentials, SOCKS5, SOCKS5h", async (t) => {
  const seen: string[] = []
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    res.writeHead(200, { 'content-type': 'application/json' })
    if (req.url === '/v1/models') res.end(JSON.stringify({ object: 'list', data: [{ id: 'via-proxy', object: 'model' }] }))
    else res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const port = (server.address() as AddressInfo).port
  const openai = adaptorFor(1)!
  const base = { id: 1, type: 1, key: 'sk-x', other: '', organization: null, setting: {} }

  const http = await httpTestProxy(t, 'alice:s3cret')
  const viaHttp = { ...base, baseUrl: `http://127.0.0.1:${port}`, proxyUrl: http.url }
  t.match(await testChannel(openai, viaHttp, 'm'), { ok: true })
  t.same(await fetchModels(openai, viaHttp), ['via-proxy'])
  t.same(http.targets, [`http://127.0.0.1:${port}/v1/chat/completions`, `http://127.0.0.1:${port}/v1/models`], 'both calls went through the HTTP proxy, with its credentials')
  t.equal(http.refused, 0)
  const wrongPassword = { ...viaHttp, proxyUrl: http.url.replace('s3cret', 'nope') }
  t.match(await testChannel(openai, wrongPassword, 'm'), { ok: false }, 'the proxy refusing the credentials fails the test')
  t.equal(http.refused, 1)

  const socks = await socksTestProxy(t, 'bob:pw')
  // A host name only the proxy resolves (localhost here): socks5h's point.
  const viaSocks = { ...base, baseUrl: `http://localhost:${port}`, proxyUrl: socks.url.replace('socks5:', 'socks5h:') }
  t.match(await testChannel(openai, viaSocks, 'm'), { ok: true })
  t.same(await fetchModels(openai, viaSocks), ['via-proxy'])
  t.match(await testChannel(openai, { ...viaSocks, proxyUrl: socks.url }, 'm'), { ok: true }, 'socks5:// as well')
  t.ok(socks.targets.length >= 2, 'the SOCKS proxy made the connections')
  t.ok(socks.targets.every((target) => target === `localhost:${port}`), 'and got the host name, not an address')
  t.equal(seen.length, 5, 'every call that passed a proxy reached the upstream')

  const deadProxy = { ...base, baseUrl: `http://127.0.0.1:${port}`, proxyUrl: 'http://127.0.0.1:1' }
  t.match(await testChannel(openai, deadProxy, 'm'), { ok: false, message: /request failed/ }, 'an unreachable proxy is a failed test, with the reason')
  t.equal(seen.length, 5, 'and nothing reached the upstream around it')
})

t.test('a channel pointed at an internal page fails its test with what the answer was, never what it said', async (t) => {
  const secret = '<html><title>Admin</title><body>root password: hunter2-7f3a; db at 10.9.8.7:5432</body></html>'
  let status = 500
  let type = 'text/html; charset=utf-8'
  const server = createServer((req, res) => {
    req.resume()
    res.writeHead(status, { 'content-type': type })
    res.end(secret)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const channel = { id: 1, type: 1, key: 'sk-x', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, other: '', organization: null, setting: {} }
  const openai = adaptorFor(1)!
  const bytes = Buffer.byteLength(secret)
  t.same(await testChannel(openai, channel, 'm').then(({ ms: _ms, ...r }) => r), { ok: false, message: `upstream answered HTTP 500: non-JSON answer (text/html, ${bytes} bytes)`, action: 'retry' }, 'an HTML 500')
  status = 200
  t.same(await testChannel(openai, channel, 'm').then(({ ms: _ms, ...r }) => r), { ok: false, message: `upstream answered HTTP 200 (non_json_answer): non-JSON answer (text/html, ${bytes} bytes)`, action: 'retry' }, 'an HTML 200 is no pass')
  type = 'text/plain'
  t.match(await testChannel(openai, channel, 'm'), { ok: false, message: /non-JSON answer \(text\/plain, \d+ bytes\)/ }, 'nor plain text')
  status = 403
  t.equal(await fetchModels(openai, channel).catch((err: Error) => err.message), `upstream answered HTTP 403: non-JSON answer (text/plain, ${bytes} bytes)`, 'a model list refused with a page')
})
