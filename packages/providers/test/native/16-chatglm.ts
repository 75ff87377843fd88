// Type 16: Zhipu's ChatGLM on the BigModel v4 API (OpenAI-shaped), authorized by an HS256 JWT made
// from the id.secret key (exp and timestamp in milliseconds).
import { ZHIPU_TOKEN_TTL_MS } from '../../src/chatglm/index.js'
import { CredentialError, clearTokenCache } from '../../src/index.js'
import { bytesOf, type NativeProtocol, parsed, relayRequest } from '../kit.js'
import { lastToken, ZHIPU_ERRORS, zhipuAuthorized, zhipuChat, zhipuError } from './zhipu-wire.js'

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 16, type: 16, key: 'zp16id.zp16secretvalue', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'zp16id.not-the-secret',
  authorized: zhipuAuthorized,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(zhipuError('1004', '提供的Authorization Token验证失败'))
  },
  chat: zhipuChat((t, body, seen) => {
    t.same(body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }], 'messages as the client wrote them')
    t.equal(body.model, 'gpt-4.1-mini')
    t.match(seen.headers.authorization, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT, never the key')
  }),
  endpoints: ['embeddings'],
  defaultUrls: () => ({ chat: 'https://open.bigmodel.cn/api/paas/v4/chat/completions' }),
  errors: ZHIPU_ERRORS,
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    t.test('the JWT: HS256 with sign_type SIGN, api_key the id, exp and timestamp in ms; cached', async (t) => {
      clearTokenCache()
      serve(fixture.chat?.answer)
      const before = Date.now()
      t.equal((await send(relayRequest('chat', { messages: [] }))).status, 200)
      const first = lastToken.token
      t.same(lastToken.header, { alg: 'HS256', sign_type: 'SIGN' })
      const payload = lastToken.payload ?? {}
      t.equal(payload.api_key, 'zp16id')
      const timestamp = Number(payload.timestamp)
      t.ok(timestamp >= before && timestamp <= Date.now(), 'timestamp is now, in milliseconds')
      t.equal(Number(payload.exp) - timestamp, ZHIPU_TOKEN_TTL_MS, 'exp in milliseconds')
      t.equal((await send(relayRequest('chat', { messages: [] }))).status, 200)
      t.equal(lastToken.token, first, 'the token is reused while it is valid')
      t.equal(up.last().headers.authorization, `Bearer ${first ?? ''}`)
    })

    t.test('a key that is not id.secret is refused before any call', async (t) => {
      const before = up.seen.length
      for (const key of ['no-dot', '.secret', 'id.', 'a.b.c']) {
        const err = await send(relayRequest('chat', { messages: [] }), { ...channel, key }).catch((e: unknown) => e)
        t.ok(err instanceof CredentialError && err.action === 'disable', key)
      }
      t.equal(up.seen.length, before)
    })

    t.test('embeddings go to /api/paas/v4/embeddings with their usage', async (t) => {
      serve({ model: 'embedding-3', object: 'list', data: [{ index: 0, object: 'embedding', embedding: [0.1, 0.2] }], usage: { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 } })
      const req = { ...relayRequest('embeddings', { input: 'hi' }), model: 'embedding-3' }
      const res = await send(req)
      t.equal(up.last().url, '/api/paas/v4/embeddings')
      t.same(parsed(up.last().body), { input: 'hi', model: 'embedding-3' })
      const converted = adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))
      t.same(converted.usage, { promptTokens: 3, completionTokens: 0 })
      t.equal(adaptor.testRequest(channel, 'embedding-3').endpoint, 'embeddings')
      // The OpenAI SDKs ask for base64 by default: Zhipu is asked for floats, the client gets base64.
      const b64 = { ...req, body: { input: 'hi', encoding_format: 'base64' } }
      const encoded = adaptor.convertResponse(channel, b64, 200, 'application/json', await bytesOf(await send(b64)))
      t.same(parsed(up.last().body), { input: 'hi', model: 'embedding-3' }, 'no encoding_format upstream')
      const vector = (parsed(Buffer.from(encoded.body)) as { data: Array<{ embedding: string }> }).data[0]?.embedding ?? ''
      t.same([...new Float32Array(new Uint8Array(Buffer.from(vector, 'base64')).buffer)], [Math.fround(0.1), Math.fround(0.2)])
      t.same(encoded.usage, { promptTokens: 3, completionTokens: 0 })
    })

    t.test('a streamed request asks for no stream_options (usage comes unasked) and a pasted /api/paas/v4 is not doubled', async (t) => {
      serve(fixture.chat?.stream() ?? '')
      await send(relayRequest('chat', { messages: [], stream: true, stream_options: { include_usage: true } }, true))
      t.match(parsed(up.last().body), { stream: true })
      t.equal(parsed(up.last().body).stream_options, undefined)
      t.equal(adaptor.buildRequest({ ...channel, baseUrl: 'https://open.bigmodel.cn/api/paas/v4/' }, relayRequest('chat', {})).url, 'https://open.bigmodel.cn/api/paas/v4/chat/completions')
      t.equal(adaptor.listModelsRequest(channel), undefined, 'Zhipu has no model list')
    })
  }
}
