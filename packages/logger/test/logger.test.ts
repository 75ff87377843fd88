import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { loggerOptions, redactSecrets, redactUrl } from '../src/index.js'

function capture () {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
      cb()
    }
  })
  return { logger: pino(loggerOptions({ service: 'test', level: 'info' }), stream), lines }
}

t.test('credentials never reach the log line', async (t) => {
  const { logger, lines } = capture()
  const secrets = ['sk-live-abcdef', 'goog-key-123', 'anthropic-key-9', 'channel-secret-7', 'hunter2', 'sk-browser-42', 'rt-rotated-1']
  logger.info({
    req: { method: 'POST', url: '/v1beta/models/x:generateContent?key=goog-key-123&alt=sse', headers: { authorization: 'Bearer sk-live-abcdef', 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-browser-42' } },
    credentials: { refresh_token: 'rt-rotated-1' },
    headers: { 'x-api-key': 'anthropic-key-9', authorization: 'Bearer sk-live-abcdef' },
    channel: { id: 3, key: 'channel-secret-7' },
    user: { password: 'hunter2' }
  }, 'relay')
  logger.error(new Error('upstream https://api.example.com/v1?key=goog-key-123 failed'))
  const text = JSON.stringify(lines)
  for (const s of secrets) t.notMatch(text, s, `${s} is redacted`)
  t.match(text, /\[redacted\]/)
  t.match(lines[0], { service: 'test', msg: 'relay', req: { method: 'POST', url: '/v1beta/models/x:generateContent?key=[redacted]&alt=sse' } })
})

t.test('redactUrl strips query credentials and URL passwords', async (t) => {
  t.equal(redactUrl('/v1/models?key=abc&x=1'), '/v1/models?key=[redacted]&x=1')
  t.equal(redactUrl('/x?api_key=abc'), '/x?api_key=[redacted]')
  t.equal(redactUrl('postgres://user:pa55@db:5432/x'), 'postgres://user:[redacted]@db:5432/x')
  t.equal(redactUrl('/v1/chat/completions'), '/v1/chat/completions')
})

t.test('query credentials are redacted whatever the case or percent-encoding of their name', async (t) => {
  const key = `sk-${'q7'.repeat(20)}`
  t.equal(redactUrl(`/v1beta/models/x?KEY=${key}&alt=sse`), '/v1beta/models/x?KEY=[redacted]&alt=sse')
  t.equal(redactUrl(`/v1beta/models/x?alt=sse&Key=${key}`), '/v1beta/models/x?alt=sse&Key=[redacted]')
  t.equal(redactUrl(`/x?Api_Key=${key}&ACCESS_TOKEN=t0k`), '/x?Api_Key=[redacted]&ACCESS_TOKEN=[redacted]')
  // Servers decode parameter names: `%4Bey` and `%6B%65%79` are `Key` and `key`.
  t.equal(redactUrl(`/x?%4Bey=${key}&%6B%65%79=${key}`), '/x?%4Bey=[redacted]&%6B%65%79=[redacted]')
  t.equal(redactUrl('/x?keyboard=qwerty&monkey=1&key_id=7'), '/x?keyboard=qwerty&monkey=1&key_id=7', 'other names are kept')

  const { logger, lines } = capture()
  logger.info({ req: { method: 'POST', url: `/v1beta/models/x:generateContent?KEY=${key}` } }, `POST /v1beta/models/x?Key=${key}`)
  logger.info('upstream %s answered %d', `https://g.test/v1beta/models?KEY=${key}`, 200)
  logger.error(new Error(`upstream https://g.test/v1?Key=${key} failed`))
  t.notOk(JSON.stringify(lines).includes(key), 'no key in the request URL, the message, an interpolated value or an error')
  t.match(lines[0], { req: { url: '/v1beta/models/x:generateContent?KEY=[redacted]' }, msg: 'POST /v1beta/models/x?Key=[redacted]' })
  t.match(lines[1], { msg: 'upstream https://g.test/v1beta/models?KEY=[redacted] answered 200' })
})

t.test('error texts lose keys by shape and known values, keeping a masked form', async (t) => {
  const key = `sk-${'a1B2'.repeat(10)}`
  const google = `AIza${'x9_Y'.repeat(9)}`
  const text = `upstream said: Incorrect API key provided: ${key}; google ${google}; Authorization: Bearer eyJhbGciOi.payload.sig; secret s3cr3t-value at https://u:pw@h.test/p?key=abc`
  const out = redactSecrets(text, ['s3cr3t-value'])
  for (const leaked of [key, google, 'eyJhbGciOi.payload.sig', 's3cr3t-value', 'key=abc', ':pw@']) t.notOk(out.includes(leaked), `no ${leaked}`)
  t.ok(out.includes('sk-a1...B2') && out.includes('AIza..._Y'), `masked forms stay: ${out}`)

  const { logger, lines } = capture()
  logger.error({ err: new Error(`401 from upstream: ${key}`) }, 'relay failed')
  t.notOk(JSON.stringify(lines).includes(key), 'an error\'s message is scrubbed when logged')
})
