// Type 26: Zhipu's GLM-4V vision models, the ChatGLM protocol (see 16-chatglm.ts) with images;
// an inline image goes as its bare base64 text.
import { type NativeProtocol, parsed, relayRequest } from '../kit.js'
import { ZHIPU_ERRORS, zhipuAuthorized, zhipuChat, zhipuError } from './zhipu-wire.js'

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 26, type: 26, key: 'zp26id.zp26secretvalue', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'zp26id.not-the-secret',
  authorized: zhipuAuthorized,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(zhipuError('1000', '身份验证失败。'))
  },
  chat: zhipuChat((t, body) => {
    t.same(body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }])
    t.equal(body.model, 'gpt-4.1-mini')
  }),
  defaultUrls: () => ({ chat: 'https://open.bigmodel.cn/api/paas/v4/chat/completions' }),
  errors: ZHIPU_ERRORS,
  extra: async (t, { up, adaptor, serve, send }) => {
    t.test('images: data: URLs as bare base64, links as they are', async (t) => {
      serve(fixture.chat?.answer)
      await send(relayRequest('chat', {
        messages: [{
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }
          ]
        }]
      }))
      t.same(parsed(up.last().body).messages, [{
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'iVBORw0KGgo=', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }
        ]
      }])
      t.notOk(adaptor.supports('embeddings', 'openai'), 'vision models only')
    })
  }
}
