// Anthropic clients served by OpenAI-compatible channels: the request converted to chat
// completions, the answer and its stream converted back, checked by hand and by the official
// @anthropic-ai/sdk reading what the converters produce over real HTTP.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import t, { type Test } from 'tap'
import {
  anthropicError,
  anthropicToChatRequest,
  chatStreamToAnthropic,
  chatToAnthropicResponse,
  CUT_STREAM_MESSAGE,
  reasoningEffortForBudget,
  type StreamConverter
} from '../src/index.js'

type Json = Record<string, unknown>

// ---------------------------------------------------------------- request

t.test('system prompt, text and images become chat messages; unknown fields are dropped', async (t) => {
  const body = {
    model: 'gpt-4o',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Answer in English.' }],
    messages: [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these pictures?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.test/cat.jpg' } }
        ]
      },
      { role: 'user', content: [{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }] }
    ],
    temperature: 0.2,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ['END'],
    metadata: { user_id: 'user-42' },
    service_tier: 'auto',
    container: null,
    stream: true
  }
  const frozen = JSON.stringify(body)
  t.same(anthropicToChatRequest(body), {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'You are terse.\nAnswer in English.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these pictures?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.test/cat.jpg' } }
        ]
      },
      { role: 'user', content: 'first\nsecond' }
    ],
    max_tokens: 1024,
    stop: ['END'],
    temperature: 0.2,
    top_p: 0.9,
    user: 'user-42',
    stream: true,
    stream_options: { include_usage: true }
  })
  t.equal(JSON.stringify(body), frozen, 'the input is not modified')

  const plain = anthropicToChatRequest({ model: 'm', system: 'Be nice.', messages: [{ role: 'system', content: 'Extra rule.' }, { role: 'user', content: 'x' }], stream: false })
  t.same(plain, { model: 'm', messages: [{ role: 'system', content: 'Be nice.' }, { role: 'system', content: 'Extra rule.' }, { role: 'user', content: 'x' }] },
    'a string system prompt, a system-role message; no stream fields for a non-streamed request')
})

t.test('tool_use and tool_result history becomes tool_calls and tool messages, tool messages first', async (t) => {
  const chat = anthropicToChatRequest({
    model: 'm',
    messages: [
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Two tools needed.', signature: 'sig' },
          { type: 'redacted_thinking', data: 'xyz' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: { tz: 'Europe/Paris' } }
        ]
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here you go.' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Rain, 12°C' }, { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } }] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'clock unavailable', is_error: true }
        ]
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_3', name: 'get_time', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3', content: '10:00' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'only thoughts', signature: 's' }] }
    ]
  })
  t.same(chat.messages, [
    { role: 'user', content: 'Weather and time in Paris?' },
    {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } }
      ]
    },
    { role: 'tool', tool_call_id: 'toolu_1', content: 'Rain, 12°C' },
    { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: clock unavailable' },
    { role: 'user', content: [{ type: 'text', text: 'Here you go.' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_3', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'toolu_3', content: '10:00' }
  ], 'thinking dropped, a thinking-only turn dropped, the tool image moved to the user message')
})

t.test('tools and tool_choice map to function tools; server tools are dropped', async (t) => {
  const tools = [
    { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    { type: 'custom', name: 'noop', input_schema: { type: 'object' } },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }
  ]
  const base = { model: 'm', messages: [{ role: 'user', content: 'x' }], tools }
  const chat = anthropicToChatRequest(base)
  t.same(chat.tools, [
    { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    { type: 'function', function: { name: 'noop', parameters: { type: 'object' } } }
  ])
  t.notOk('tool_choice' in chat)
  const choices: Array<[unknown, unknown]> = [
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
    [{ type: 'tool', name: 'get_weather' }, { type: 'function', function: { name: 'get_weather' } }]
  ]
  for (const [choice, expected] of choices) t.same(anthropicToChatRequest({ ...base, tool_choice: choice }).tool_choice, expected, JSON.stringify(choice))
  const serial = anthropicToChatRequest({ ...base, tool_choice: { type: 'any', disable_parallel_tool_use: true } })
  t.equal(serial.parallel_tool_calls, false, 'disable_parallel_tool_use')
  const onlyServer = anthropicToChatRequest({ ...base, tools: [tools[2]], tool_choice: { type: 'auto' } })
  t.notOk('tools' in onlyServer || 'tool_choice' in onlyServer, 'no function tools: neither tools nor tool_choice')
})

t.test('thinking budgets and effort become reasoning_effort', async (t) => {
  const base = { model: 'm', messages: [{ role: 'user', content: 'x' }] }
  t.equal(reasoningEffortForBudget(1024), 'low')
  t.equal(reasoningEffortForBudget(4000), 'low', 'Claude Code "think"')
  t.equal(reasoningEffortForBudget(4096), 'medium')
  t.equal(reasoningEffortForBudget(10000), 'medium', 'Claude Code "think hard"')
  t.equal(reasoningEffortForBudget(16384), 'high')
  t.equal(reasoningEffortForBudget(31999), 'high', 'Claude Code "ultrathink"')
  t.equal(anthropicToChatRequest({ ...base, thinking: { type: 'enabled', budget_tokens: 10000 } }).reasoning_effort, 'medium')
  t.notOk('reasoning_effort' in anthropicToChatRequest({ ...base, thinking: { type: 'disabled' } }))
  t.notOk('reasoning_effort' in anthropicToChatRequest({ ...base, thinking: { type: 'adaptive' } }))
  t.equal(anthropicToChatRequest({ ...base, thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'high' } }).reasoning_effort, 'high', 'an explicit effort wins')
  t.equal(anthropicToChatRequest({ ...base, output_config: { effort: 'max' } }).reasoning_effort, 'high')
  const schema = { type: 'object', properties: { a: { type: 'string' } } }
  t.same(anthropicToChatRequest({ ...base, output_config: { format: { type: 'json_schema', schema } } }).response_format,
    { type: 'json_schema', json_schema: { name: 'response', schema } }, 'structured output')
})

// ---------------------------------------------------------------- response

t.test('a chat completion becomes an Anthropic message', async (t) => {
  const chat = {
    id: 'chatcmpl-123',
    object: 'chat.completion',
    model: 'gpt-x',
    choices: [{
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me look.',
        reasoning_content: 'User wants weather.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'broken', arguments: '{"city":' } }
        ]
      },
      finish_reason: 'tool_calls'
    }],
    usage: { prompt_tokens: 100, completion_tokens: 30, total_tokens: 130, prompt_tokens_details: { cached_tokens: 60 } }
  }
  t.same(chatToAnthropicResponse(chat, 'claude-sonnet-4-5'), {
    id: 'msg_123',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'User wants weather.', signature: '' },
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'broken', input: {} }
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 40, output_tokens: 30, cache_read_input_tokens: 60, cache_creation_input_tokens: 0 }
  })

  const reasons: Array<[unknown, string]> = [['stop', 'end_turn'], ['length', 'max_tokens'], ['tool_calls', 'tool_use'], ['function_call', 'tool_use'], ['content_filter', 'refusal'], [null, 'end_turn']]
  for (const [finish, stop] of reasons) {
    const message = chatToAnthropicResponse({ choices: [{ message: { content: 'x' }, finish_reason: finish }] }, 'm')
    t.equal(message.stop_reason, stop, `${String(finish)} → ${stop}`)
  }
  const stopWithTools = chatToAnthropicResponse({ choices: [{ message: { content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'stop' }] }, 'm')
  t.equal(stopWithTools.stop_reason, 'tool_use', 'an upstream that says stop after calling tools')
  const empty = chatToAnthropicResponse({ choices: [{ message: { content: '' }, finish_reason: 'stop' }] }, 'm')
  t.same(empty.content, [], 'no empty text block')
  t.same(empty.usage, { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }, 'no usage: zeros')
  t.match(empty.id, /^msg_[0-9a-f]{24}$/, 'no upstream id: a random one')
  const legacy = chatToAnthropicResponse({ choices: [{ message: { content: null, function_call: { name: 'f', arguments: '{"a":1}' } }, finish_reason: 'function_call' }] }, 'm')
  t.match(legacy.content, [{ type: 'tool_use', id: /^toolu_/, name: 'f', input: { a: 1 } }], 'legacy function_call')
})

t.test('HTTP statuses map to Anthropic error types', async (t) => {
  const table: Array<[number, string]> = [
    [400, 'invalid_request_error'], [401, 'authentication_error'], [402, 'billing_error'], [403, 'permission_error'],
    [404, 'not_found_error'], [409, 'invalid_request_error'], [413, 'request_too_large'], [429, 'rate_limit_error'],
    [500, 'api_error'], [502, 'api_error'], [503, 'overloaded_error'], [504, 'timeout_error'], [529, 'overloaded_error']
  ]
  for (const [status, type] of table) t.same(anthropicError(status, 'm'), { type: 'error', error: { type, message: 'm' } }, String(status))
})

// ---------------------------------------------------------------- stream

const chunk = (choices: unknown[], usage: unknown = null): Json => ({ id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices, usage })
const delta = (d: Json, finish: string | null = null): Json => chunk([{ index: 0, delta: d, finish_reason: finish }])
const wire = (events: Json[], done = true): string => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '')

/** An OpenAI stream with reasoning, text (multi-byte), two tool calls with cut arguments, then usage. */
const FULL_STREAM = wire([
  delta({ role: 'assistant', content: '' }),
  delta({ reasoning_content: 'The user wants' }),
  delta({ reasoning_content: ' two tools.' }),
  delta({ content: 'Checking the weather — ' }),
  delta({ content: 'é 你好 🌧 "q"\n' }),
  delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  delta({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Eur' } }] }),
  delta({ tool_calls: [{ index: 1, function: { arguments: 'ope/Paris"}' } }] }),
  delta({}, 'tool_calls'),
  chunk([], { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 20 } })
])

interface Event { event: string, data: Json }

/** Splits Anthropic SSE into events; fails the test unless each is `event:` + JSON `data:` of that type. */
function parseEvents (t: Test, text: string): Event[] {
  t.ok(text === '' || text.endsWith('\n\n'), 'ends at an event boundary')
  const events: Event[] = []
  for (const block of text.split('\n\n').slice(0, -1)) {
    const match = /^event: ([a-z_]+)\ndata: (.*)$/s.exec(block)
    if (match === null) {
      t.fail(`not an Anthropic event: ${JSON.stringify(block)}`)
      continue
    }
    const data = JSON.parse(match[2]!) as Json
    if (data.type !== match[1]) t.fail(`event ${match[1]} carries type ${String(data.type)}`)
    events.push({ event: match[1]!, data })
  }
  return events
}

/** The message a client builds from the events (as the SDK does), to compare meanings. */
function accumulate (events: Event[]): Json {
  let message: Json = {}
  const content: Json[] = []
  const json: string[] = []
  for (const { data } of events) {
    if (data.type === 'message_start') message = { ...(data.message as Json), content }
    if (data.type === 'content_block_start') content[data.index as number] = { ...(data.content_block as Json) }
    if (data.type === 'content_block_delta') {
      const block = content[data.index as number]!
      const d = data.delta as Json
      if (d.type === 'text_delta') block.text = (block.text as string) + (d.text as string)
      if (d.type === 'thinking_delta') block.thinking = (block.thinking as string) + (d.thinking as string)
      if (d.type === 'input_json_delta') json[data.index as number] = (json[data.index as number] ?? '') + (d.partial_json as string)
    }
    if (data.type === 'content_block_stop' && content[data.index as number]!.type === 'tool_use') {
      content[data.index as number]!.input = JSON.parse(json[data.index as number] ?? '{}')
    }
    if (data.type === 'message_delta') {
      message = { ...message, ...(data.delta as Json), usage: { ...(message.usage as Json), ...(data.usage as Json) } }
    }
  }
  return message
}

/** Feeds `bytes` in slices of the sizes given (repeating the last); returns all output. */
function feed (converter: StreamConverter, bytes: Buffer, sizes: (at: number) => number): string {
  const out: Buffer[] = []
  for (let at = 0; at < bytes.length;) {
    const size = Math.max(1, sizes(at))
    out.push(converter.push(bytes.subarray(at, at + size)))
    at += size
  }
  out.push(converter.end())
  return Buffer.concat(out).toString('utf8')
}

t.test('a full OpenAI stream becomes the Anthropic event sequence', async (t) => {
  const converter = chatStreamToAnthropic('claude-sonnet-4-5')
  const text = feed(converter, Buffer.from(FULL_STREAM), () => FULL_STREAM.length)
  const events = parseEvents(t, text)
  t.same(events.map((e) => e.event === 'content_block_delta' ? `delta:${(e.data.delta as Json).type as string}` : e.event), [
    'message_start',
    'content_block_start', 'delta:thinking_delta', 'delta:thinking_delta', 'content_block_stop',
    'content_block_start', 'delta:text_delta', 'delta:text_delta', 'content_block_stop',
    'content_block_start', 'delta:input_json_delta', 'delta:input_json_delta', 'content_block_stop',
    'content_block_start', 'delta:input_json_delta', 'delta:input_json_delta', 'content_block_stop',
    'message_delta',
    'message_stop'
  ])
  t.same(events[0]!.data, {
    type: 'message_start',
    message: {
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
    }
  })
  t.same(events[9]!.data, { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } })
  t.same(events[10]!.data, { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } })
  t.same(events.at(-2)!.data, {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { input_tokens: 100, output_tokens: 45, cache_read_input_tokens: 20, cache_creation_input_tokens: 0 }
  })
  t.same(accumulate(events).content, [
    { type: 'thinking', thinking: 'The user wants two tools.', signature: '' },
    { type: 'text', text: 'Checking the weather — é 你好 🌧 "q"\n' },
    { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'Europe/Paris' } }
  ])
  t.ok(converter.finished())
  t.same(converter.usage(), { promptTokens: 120, completionTokens: 45, cachedTokens: 20 })
  t.equal(converter.takeText(), 'The user wants two tools.Checking the weather — é 你好 🌧 "q"\n{"city":"Paris"}{"tz":"Europe/Paris"}')
  t.equal(converter.untakenBytes(), 0)
})

t.test('the output is the same however the upstream bytes are cut', async (t) => {
  const bytes = Buffer.from(FULL_STREAM)
  const reference = feed(chatStreamToAnthropic('m'), bytes, () => bytes.length)
  t.equal(feed(chatStreamToAnthropic('m'), bytes, () => 1), reference, 'one byte at a time')
  let mismatches = 0
  for (let cut = 1; cut < bytes.length; cut++) {
    if (feed(chatStreamToAnthropic('m'), bytes, (at) => at === 0 ? cut : bytes.length) !== reference) mismatches++
  }
  t.equal(mismatches, 0, `cut in two at each of the ${bytes.length - 1} byte boundaries`)
  let seed = 7
  const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  for (let round = 0; round < 200; round++) {
    if (feed(chatStreamToAnthropic('m'), bytes, () => 1 + rand(rand(3) === 0 ? 5 : 120)) !== reference) mismatches++
  }
  t.equal(mismatches, 0, '200 random slicings')
  const crlf = Buffer.from(FULL_STREAM.replaceAll('\n\n', '\r\n\r\n'))
  t.equal(feed(chatStreamToAnthropic('m'), crlf, () => 1), reference, 'CRLF line endings, one byte at a time')
})

t.test('a stream cut anywhere ends with message_stop or an error event, never with broken events', async (t) => {
  const bytes = Buffer.from(FULL_STREAM)
  const finishAt = bytes.indexOf('"finish_reason":"tool_calls"')
  // The cut that keeps the whole finish chunk (its line needs no newline at the very end).
  const finishEnd = bytes.indexOf('\n', finishAt)
  const wrong: number[] = []
  for (let cut = 0; cut <= bytes.length; cut++) {
    const converter = chatStreamToAnthropic('m')
    const text = feed(converter, bytes.subarray(0, cut), () => 64)
    const events = parseEvents(t, text)
    const last = events.at(-1)
    if (cut >= finishEnd) {
      // The finish reason arrived: a complete answer, with or without the usage and [DONE].
      if (last?.event !== 'message_stop' || !converter.finished()) wrong.push(cut)
    } else if (last?.event !== 'error' || (last.data.error as Json).type !== 'api_error' || (last.data.error as Json).message !== CUT_STREAM_MESSAGE || converter.finished()) {
      wrong.push(cut)
    }
  }
  t.same(wrong, [], `every one of ${bytes.length + 1} cuts`)
})

t.test('a died stream produces an Anthropic error event after what was received', async (t) => {
  const converter = chatStreamToAnthropic('m')
  const out = converter.push(Buffer.from(wire([delta({ content: 'Hel' }), delta({ content: 'lo' })], false) + 'data: {"choices":[{"delta":{"cont'))
  const endOut = converter.end()
  const events = parseEvents(t, out.toString() + endOut.toString())
  t.same(events.map((e) => e.event), ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'error'])
  t.same(events.at(-1)!.data, { type: 'error', error: { type: 'api_error', message: CUT_STREAM_MESSAGE } })
  t.notOk(converter.finished())
  t.equal(converter.push(Buffer.from(wire([delta({ content: 'late' })]))).length, 0, 'nothing after the error')

  const silent = chatStreamToAnthropic('m')
  t.same(parseEvents(t, silent.end().toString()).map((e) => e.event), ['error'], 'an empty upstream answer')
})

t.test('upstream errors inside the stream become Anthropic error events', async (t) => {
  const named = chatStreamToAnthropic('m')
  const out = feed(named, Buffer.from(wire([delta({ content: 'a' })], false) + 'event: error\ndata: {"error":{"message":"The server had an error","type":"server_error"}}\n\ndata: [DONE]\n\n'), () => 3)
  const events = parseEvents(t, out)
  t.same(events.at(-1)!.data, { type: 'error', error: { type: 'api_error', message: 'The server had an error' } })
  t.notOk(named.finished(), 'not a clean end')

  const inline = feed(chatStreamToAnthropic('m'), Buffer.from('data: {"error":{"message":"Slow down","code":"rate_limit_exceeded"}}\n\n'), () => 100)
  t.same(parseEvents(t, inline).map((e) => e.data), [{ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } }])

  const overloaded = feed(chatStreamToAnthropic('m'), Buffer.from('event: error\ndata: {"error":{"message":"busy","code":529}}\n\n'), () => 100)
  t.same(parseEvents(t, overloaded).map((e) => e.data), [{ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }])
})

t.test('usage with the finish reason, no [DONE], no blank lines, keep-alives and a text-only answer', async (t) => {
  // DeepSeek-style: the usage rides on the finish chunk; message_stop goes out at once.
  const withFinish = chatStreamToAnthropic('m')
  const first = withFinish.push(Buffer.from(wire([
    chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }], { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 }),
    chunk([{ index: 0, delta: { content: '!' }, finish_reason: 'stop' }], { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 })
  ], false)))
  const events = parseEvents(t, first.toString())
  t.same(events.map((e) => e.event), ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])
  t.same((events[0]!.data.message as Json).usage, { input_tokens: 7, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }, 'input tokens from the first chunk')
  t.same(events[5]!.data, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 7, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } })
  t.ok(withFinish.finished())
  t.equal(withFinish.end().length, 0, 'no [DONE] needed afterwards')

  // No usage at all, no [DONE]: the finish reason ends the message at end().
  const noUsage = chatStreamToAnthropic('m')
  const body = feed(noUsage, Buffer.from(': keep-alive\n\n' + wire([delta({ content: 'x' }), delta({}, 'length')], false)), () => 5)
  const tail = parseEvents(t, body).slice(-2).map((e) => e.data)
  t.same(tail, [{ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 0 } }, { type: 'message_stop' }])

  // Data lines without blank lines between them still stream, chunk by chunk.
  const dense = chatStreamToAnthropic('m')
  const out = dense.push(Buffer.from(`data: ${JSON.stringify(delta({ content: 'a' }))}\ndata: ${JSON.stringify(delta({ content: 'b' }))}\n`))
  t.same(parseEvents(t, out.toString()).filter((e) => e.event === 'content_block_delta').map((e) => (e.data.delta as Json).text), ['a', 'b'])

  // A last [DONE] without its newline still ends the stream cleanly.
  const unterminated = chatStreamToAnthropic('m')
  const done = feed(unterminated, Buffer.from(wire([delta({ content: 'z' })], false) + 'data: [DONE]'), () => 1000)
  t.equal(parseEvents(t, done).at(-1)!.event, 'message_stop')
  t.ok(unterminated.finished())
})

// ---------------------------------------------------------------- official SDK over HTTP

async function listen (server: Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function readBody (req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = []
  for await (const part of req) parts.push(part as Buffer)
  return Buffer.concat(parts).toString('utf8')
}

const COMPLETION = {
  id: 'chatcmpl-xyz',
  object: 'chat.completion',
  model: 'gpt-x',
  choices: [{
    index: 0,
    message: { role: 'assistant', content: 'Checking the weather.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    finish_reason: 'tool_calls'
  }],
  usage: { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 20 } }
}

t.test('the official Anthropic SDK reads the converted answers, streamed and not', async (t) => {
  // The OpenAI-compatible upstream: checks what it is sent and answers in OpenAI's protocol.
  const received: Json[] = []
  const upstream = createServer((req, res) => {
    void readBody(req).then((text) => {
      const body = JSON.parse(text) as Json
      received.push(body)
      if (body.model === 'rate-limited') {
        res.writeHead(429, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: 'Too many requests', type: 'rate_limit_error' } }))
        return
      }
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(COMPLETION))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const bytes = Buffer.from(FULL_STREAM)
      if (body.model === 'dies') {
        // Half the stream, then the connection drops.
        res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy())
        return
      }
      for (let at = 0; at < bytes.length; at += 37) res.write(bytes.subarray(at, at + 37))
      res.end()
    })
  })
  const upstreamUrl = await listen(upstream)
  t.teardown(() => upstream.close())

  // A minimal gateway: Anthropic in, chat completions out, converted back.
  const gateway = createServer((req, res) => {
    void (async () => {
      // The SDK sends its key as a Bearer token (x-api-key from other clients).
      const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '')
      if (req.method !== 'POST' || req.url !== '/v1/messages' || key !== 'sk-test') {
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end(JSON.stringify(anthropicError(401, 'bad key')))
        return
      }
      const body = JSON.parse(await readBody(req)) as Json
      const model = body.model as string
      const answer = await fetch(`${upstreamUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(anthropicToChatRequest(body))
      })
      if (!answer.ok) {
        const text = await answer.text()
        res.writeHead(answer.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(anthropicError(answer.status, ((JSON.parse(text) as { error: { message: string } }).error.message))))
        return
      }
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(chatToAnthropicResponse(await answer.json() as Json, model)))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const converter = chatStreamToAnthropic(model)
      try {
        for await (const piece of answer.body!) {
          const out = converter.push(Buffer.from(piece))
          if (out.length > 0) res.write(out)
        }
      } catch {
        // The upstream connection dropped: end() tells the client.
      }
      res.end(converter.end())
    })()
  })
  const baseURL = await listen(gateway)
  t.teardown(() => gateway.close())

  const client = new Anthropic({ baseURL, apiKey: 'sk-test', maxRetries: 0 })
  const params = {
    model: 'claude-sonnet-5-5',
    max_tokens: 512,
    system: 'Use tools.',
    messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
    tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]
  }
  const expectedUsage = { input_tokens: 100, output_tokens: 45, cache_read_input_tokens: 20, cache_creation_input_tokens: 0 }

  const message = await client.messages.create(params)
  t.equal(message.stop_reason, 'tool_use')
  t.match(message.content, [{ type: 'text', text: 'Checking the weather.' }, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }])
  t.match(message.usage, expectedUsage)
  t.match(received.at(-1), {
    model: 'claude-sonnet-5-5',
    max_tokens: 512,
    messages: [{ role: 'system', content: 'Use tools.' }, { role: 'user', content: 'Weather in Paris?' }],
    tools: [{ type: 'function', function: { name: 'get_weather' } }]
  }, 'the upstream got a chat completions request')

  const stream = client.messages.stream(params)
  let streamedText = ''
  stream.on('text', (delta) => { streamedText += delta })
  const final = await stream.finalMessage()
  t.equal(streamedText, 'Checking the weather — é 你好 🌧 "q"\n')
  t.equal(final.stop_reason, 'tool_use')
  t.match(final.content, [
    { type: 'thinking', thinking: 'The user wants two tools.' },
    { type: 'text', text: 'Checking the weather — é 你好 🌧 "q"\n' },
    { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'Europe/Paris' } }
  ])
  t.match(final.usage, expectedUsage, 'usage from message_delta')
  t.match(received.at(-1), { stream: true, stream_options: { include_usage: true } })

  const raw = await client.messages.create({ ...params, stream: true })
  const types: string[] = []
  for await (const event of raw) types.push(event.type)
  t.equal(types[0], 'message_start')
  t.same(types.slice(-2), ['message_delta', 'message_stop'])

  const died = await client.messages.stream({ ...params, model: 'dies' }).finalMessage().then(() => undefined, (error: unknown) => error)
  t.type(died, Anthropic.APIError, 'a died upstream: the SDK raises the error event')
  t.match(died, { error: { type: 'error', error: { type: 'api_error', message: CUT_STREAM_MESSAGE } } })
  await t.rejects(client.messages.create({ ...params, model: 'rate-limited' }), Anthropic.RateLimitError, 'an error status in Anthropic\'s shape')
})
