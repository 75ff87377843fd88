import t from 'tap'
import { classifyAnswer, cleanUpstreamMessage, failureSummary, looksLikeJson, nonJsonAnswer, unexpectedAnswer, UPSTREAM_MESSAGE_MAX_CHARS } from '../src/index.js'
import { classifyOpenAIFailure } from '../src/index.js'

t.test('cleanUpstreamMessage removes links, hosts, addresses and keys, and cuts to 300 characters', async (t) => {
  const cases: Array<[string, string]> = [
    ['see https://platform.openai.com/account/api-keys.', 'see [redacted].'],
    ['ws://10.1.2.3:8080/socket and http://localhost/x', '[redacted] and [redacted]'],
    ['connect to db.internal.corp:5432 failed', 'connect to [redacted] failed'],
    ['try admin-panel:8080 or redis:6379', 'try [redacted] or [redacted]'],
    ['from 10.0.0.3 and 192.168.1.20:443', 'from [redacted] and [redacted]'],
    ['v6 [fe80::1]:80, ::1 and 2001:db8::8a2e:370:7334', 'v6 [redacted], [redacted] and [redacted]'],
    ['bare api.openai.com, metadata.google.internal and localhost:3000', 'bare [redacted], [redacted] and [redacted]'],
    ['mail support@example.com', 'mail support@[redacted]'],
    ['key sk-proj-abcd1234efgh and Bearer abc.def', 'key sk-*** and Bearer ***'],
    ['google AIzaSyA1234567890abcdefghij aws AKIAIOSFODNN7EXAMPLE', 'google *** aws ***'],
    ['token 0123456789abcdef0123456789abcdef', 'token ***'],
    ['refresh rt_Ab-12cd_EF34-gh56_IJ78-kl90_MN12-op34', 'refresh ***'],
    ['  spaced \n\t out  ', 'spaced out']
  ]
  for (const [raw, clean] of cases) t.equal(cleanUpstreamMessage(raw), clean, raw)
  // What is not a host stays: field paths, file names, times, model names, numbers.
  const kept = "Invalid 'messages[0].content' at messages.content, see node.js: max_tokens:4096 for gpt-4.1 at 2024-01-01T10:30:00Z (e.g. 12:30), code max_completion_tokens_exceeded_by_request"
  t.equal(cleanUpstreamMessage(kept), kept, 'text that only looks technical is kept')
  const long = cleanUpstreamMessage('word '.repeat(200))
  t.equal(long.length, UPSTREAM_MESSAGE_MAX_CHARS, 'cut to 300 characters')
  const emoji = cleanUpstreamMessage(`${'ab '.repeat(99)}ab😀 more`)
  t.equal(emoji.length, UPSTREAM_MESSAGE_MAX_CHARS - 1, 'never half of a surrogate pair at the cut')
  for (const [raw] of cases) t.equal(cleanUpstreamMessage(cleanUpstreamMessage(raw)), cleanUpstreamMessage(raw), `cleaning twice changes nothing: ${raw}`)
})

t.test('a non-JSON answer is described, never quoted; a JSON one classified and cleaned', async (t) => {
  const secret = '<html><body>ADMIN PANEL root password hunter2 at http://10.0.0.9/admin</body></html>'
  const openai = { classifyFailure: classifyOpenAIFailure }
  t.same(classifyAnswer(openai, 500, 'text/html; charset=utf-8', secret), { action: 'retry', message: `non-JSON answer (text/html, ${Buffer.byteLength(secret)} bytes)` })
  t.same(classifyAnswer(openai, 400, '', 'hunter2'), { action: 'retry', message: 'non-JSON answer (no content type, 7 bytes)' }, 'plain text, even a 400, is not quoted, nor taken for the client\'s fault')
  t.same(classifyAnswer(openai, 429, 'text/plain', ''), { action: 'retry', message: 'empty answer (text/plain)' })
  // Even a classifier that would quote the body gets cleaned or replaced.
  const careless = { classifyFailure: (_status: number, body: string) => ({ action: 'client' as const, message: body }) }
  t.same(classifyAnswer(careless, 400, 'text/html', secret), { action: 'retry', message: `non-JSON answer (text/html, ${Buffer.byteLength(secret)} bytes)` })
  t.equal(classifyAnswer(careless, 400, 'application/json', '{"error":"see http://10.0.0.9/admin"}').message, '{"error":"see [redacted]"}')
  t.same(classifyAnswer(openai, 400, 'application/json', JSON.stringify({ error: { message: "This model's maximum context length is 128000 tokens (api.internal:8443)", type: 'invalid_request_error', code: 'context_length_exceeded' } })),
    { action: 'client', message: "This model's maximum context length is 128000 tokens ([redacted])", code: 'context_length_exceeded' })
  t.equal(nonJsonAnswer('TEXT/HTML;charset=utf-8', 12), 'non-JSON answer (text/html, 12 bytes)')
  t.equal(nonJsonAnswer('<script>', 3), 'non-JSON answer (no content type, 3 bytes)', 'a content type is shown only as a media type')
  t.equal(failureSummary(401, { message: 'Incorrect API key provided', code: 'invalid_api_key' }), 'upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided')
  t.equal(failureSummary(500, { message: 'upstream answered HTTP 500' }), 'upstream answered HTTP 500')
})

t.test('a 2xx answer that is not JSON fails the attempt, except where the endpoint answers otherwise', async (t) => {
  const html = Buffer.from('<html>internal admin</html>')
  t.same(unexpectedAnswer('chat', 'text/html', html), { action: 'retry', message: `non-JSON answer (text/html, ${html.length} bytes)`, code: 'non_json_answer' })
  t.same(unexpectedAnswer('messages', '', Buffer.from('secret text')), { action: 'retry', message: 'non-JSON answer (no content type, 11 bytes)', code: 'non_json_answer' })
  t.equal(unexpectedAnswer('chat', 'application/json', Buffer.from(' \n{"id":"x"}')), undefined, 'JSON is left to the adaptor')
  t.equal(unexpectedAnswer('embeddings', 'text/plain', Buffer.from('[1]')), undefined, 'whatever its content type says')
  t.equal(unexpectedAnswer('responses', 'text/event-stream', Buffer.from('event: response.created\n')), undefined, 'an event stream is assembled by its adaptor')
  t.equal(unexpectedAnswer('chat', '', Buffer.from('data: {"x":1}\n\n')), undefined, 'events without a content type too')
  t.equal(unexpectedAnswer('audio_speech', 'audio/mpeg', Buffer.from([0x49, 0x44, 0x33])), undefined, 'speech is audio')
  t.equal(unexpectedAnswer('audio_transcriptions', 'text/plain', Buffer.from('hello')), undefined, 'a transcript may be text')
  t.equal(unexpectedAnswer('chat', 'application/json', Buffer.alloc(0)), undefined, 'an empty answer is left to the adaptor')
  t.ok(looksLikeJson('  [1]') && looksLikeJson(Buffer.from('\r\n{}')) && !looksLikeJson('<x>') && !looksLikeJson(Buffer.from('  x{')))
})
