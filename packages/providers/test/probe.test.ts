import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
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
