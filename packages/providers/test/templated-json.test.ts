// The parser of converted streams' events: whatever a stream holds, it gives what JSON.parse
// gives, and a stream whose events differ only in their text is read from a template, not parsed.
import t, { type Test } from 'tap'
import { CHUNK_TEXT } from '../src/openai-compatible/chat-chunks.js'
import { templatedJson, type TemplateSpec } from '../src/core/templated-json.js'
import { TEXT_DELTA } from '../src/claude/stream.js'

const chunkParser = () => templatedJson(CHUNK_TEXT)

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', ...extra, choices: [{ index: 0, delta, finish_reason: finish }] })

/** Every payload through one parser, each compared with JSON.parse. */
function same (t: Test, payloads: string[], message: string, spec: TemplateSpec = CHUNK_TEXT) {
  const parser = templatedJson(spec)
  payloads.forEach((payload, i) => { t.same(parser.parse(payload), parsed(payload), `${message}: payload ${i}: ${payload.slice(0, 120)}`) })
  return parser.stats()
}

t.test('a stream of chunks differing in their content is read from a template after its first chunks', async (t) => {
  const payloads = [chunk({ role: 'assistant', content: '' })]
  for (let i = 0; i < 18; i++) payloads.push(chunk({ content: `Hello ${i}! ` }))
  payloads.push(chunk({}, 'stop'), JSON.stringify({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 3, completion_tokens: 19 } }))
  const stats = same(t, payloads, 'plain stream')
  t.equal(stats.reused, 17, 'every content chunk after the first two comes from the template')
  t.equal(stats.learned, 1, 'one template: none from the first chunk (its role) or the last (its finish reason)')
})

t.test('content with escapes, quotes, unicode and nothing at all', async (t) => {
  const texts = ['line\nnext', 'tab\there', 'quote " inside', 'back\\slash', 'é and 中文 and 😀', '\u2028\u2029', '', ' ', '\\"', '"', '}]}', '","role":"x']
  const payloads = [chunk({ content: 'first' }), chunk({ content: 'second' })]
  for (const text of texts) payloads.push(chunk({ content: text }))
  // Written with escapes an encoder may choose: \u escapes, an escaped solidus, a surrogate pair.
  payloads.push(chunk({ content: 'X' }).replace('"X"', '"\\u0041\\/\\ud83d\\ude00"'))
  const stats = same(t, payloads, 'escapes')
  t.ok(stats.reused >= texts.length, `the template served them (${stats.reused} reused)`)
})

t.test('text put in the content place that changes the chunk is parsed, not templated', async (t) => {
  const base = chunk({ content: 'first' })
  const [before, after] = base.split('first') as [string, string]
  const hostile = [
    'a","role":"system',          // closes the string and adds a key
    'a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}', // closes the chunk early: not JSON
    'a\\',                          // a dangling escape
    'a\u0001b',                     // a raw control character: not JSON
    'a\\u00',                       // a cut \u escape
    'a\\"},"x":{"y":"'              // escaped quote then a real one
  ]
  const payloads = [chunk({ content: 'zero' }), base, chunk({ content: 'second' })]
  for (const h of hostile) payloads.push(before + h + after, chunk({ content: 'after' }))
  const stats = same(t, payloads, 'hostile')
  t.ok(stats.reused >= hostile.length, 'the template is still used between them')
})

t.test('a content key that is not the first choice\'s delta content never becomes the template', async (t) => {
  const streams: Record<string, string[]> = {
    'content in tool arguments': [0, 1, 2, 3].map((i) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: 'x', tool_calls: [{ index: 0, function: { arguments: `{"content":"${i}"}` } }] } }] })),
    'a key made of a quote and content': [0, 1, 2].map((i) => `{"id":"c","\\"content":"k${i}","choices":[{"index":0,"delta":{"content":"v${i}"}}]}`),
    'duplicate content keys (the last wins)': [0, 1, 2].map((i) => `{"id":"c","choices":[{"index":0,"delta":{"content":"a${i}","content":"b${i}"}}]}`),
    'logprobs content after the delta': [0, 1, 2].map((i) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: `t${i}` }, logprobs: { content: [{ token: `t${i}`, logprob: -0.1 }] } }] })),
    'a top-level content string after the choices': [0, 1, 2].map((i) => `{"choices":[{"index":0,"delta":{"content":"a${i}"}}],"content":"b${i}"}`),
    'a top-level content string that changes while the delta content stays': [0, 1, 2, 3].map((i) => `{"choices":[{"index":0,"delta":{"content":"same"}}],"content":"b${i}"}`),
    'a quoted content key that changes while the delta content stays': [0, 1, 2, 3].map((i) => `{"choices":[{"index":0,"delta":{"content":"same"}}],"\\"content":"k${i}"}`),
    'two choices': [0, 1, 2].map((i) => JSON.stringify({ choices: [{ index: 0, delta: { content: `a${i}` } }, { index: 1, delta: { content: `b${i}` } }] })),
    'choice index 1 only': [0, 1, 2].map((i) => JSON.stringify({ choices: [{ index: 1, delta: { content: `a${i}` } }] })),
    'spaces as a pretty printer writes them': [0, 1, 2, 3].map((i) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: `p${i}` } }] }, null, 1)),
    'content null then strings': [chunk({ content: null }), chunk({ content: 'a' }), chunk({ content: 'b' }), chunk({ content: 'c' })]
  }
  for (const [name, payloads] of Object.entries(streams)) same(t, payloads, name)
})

t.test('chunks that change besides their content (an upstream adding a random field to each) are parsed in full, with a bounded number of templates', async (t) => {
  const payloads: string[] = []
  for (let i = 0; i < 40; i++) payloads.push(chunk({ content: `w${i}` }, null, { obfuscation: `r${i}` }))
  const stats = same(t, payloads, 'changing field')
  t.equal(stats.reused, 0)
  t.equal(stats.learned, 3, 'three tries, then no more templates (each costs a parse)')
})

t.test('random chunks and random damage: always what JSON.parse gives', async (t) => {
  let seed = 7
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  const atoms = ['a', ' ', '"', '\\', '\n', '\u0000', 'é', '😀', '}', ']', ',', ':', '{', '[', 'content', '\\u', '\\"']
  const text = () => Array.from({ length: Math.floor(random() * 6) }, () => pick(atoms)).join('')
  let checked = 0
  for (let stream = 0; stream < 200; stream++) {
    const parser = chunkParser()
    const id = pick(['same', `s${stream}`])
    for (let i = 0; i < 12; i++) {
      let payload = chunk({ content: text() }, pick([null, null, null, 'stop']), id === 'same' ? {} : { n: i })
      if (random() < 0.3) {
        // Damage: a random atom spliced in anywhere, raw.
        const at = Math.floor(random() * payload.length)
        payload = payload.slice(0, at) + pick(atoms) + payload.slice(at)
      }
      const expected = parsed(payload)
      const got = parser.parse(payload)
      if (JSON.stringify(got) !== JSON.stringify(expected)) t.same(got, expected, `stream ${stream} chunk ${i}: ${payload}`)
      checked++
    }
  }
  t.pass(`${checked} payloads matched JSON.parse`)
})

t.test('Anthropic text deltas: templated after the first; thinking, tool input and other events parsed', async (t) => {
  const delta = (index: number, d: Record<string, unknown>) => JSON.stringify({ type: 'content_block_delta', index, delta: d })
  const payloads = [
    JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 3, output_tokens: 1 } } }),
    JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
    delta(0, { type: 'thinking_delta', thinking: 'hmm' }),
    delta(0, { type: 'thinking_delta', thinking: 'more' }),
    JSON.stringify({ type: 'content_block_stop', index: 0 }),
    JSON.stringify({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } })
  ]
  for (let i = 0; i < 10; i++) payloads.push(delta(1, { type: 'text_delta', text: i % 3 === 0 ? `line ${i}\n"quoted"` : `word ${i} ` }))
  payloads.push(
    delta(2, { type: 'text_delta', text: 'another block' }),
    delta(2, { type: 'text_delta', text: 'its second' }),
    delta(3, { type: 'input_json_delta', partial_json: '{"text":"x"' }),
    delta(3, { type: 'input_json_delta', partial_json: ',"y":1}' }),
    JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }),
    JSON.stringify({ type: 'message_stop' })
  )
  const stats = same(t, payloads, 'anthropic', TEXT_DELTA)
  t.equal(stats.reused, 10, 'the text deltas after the first of each block')
  t.equal(stats.learned, 2, 'one template per block')
})
