// OpenAI Responses clients served by channels without the Responses API: the request converted
// to chat completions, the answer and its stream converted back, checked by hand and by the
// official openai SDK reading what the converters produce over real HTTP.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import OpenAI from 'openai'
import t, { type Test } from 'tap'
import {
  chatReasoningEffort,
  chatStreamToResponses,
  chatToResponsesResponse,
  CUT_STREAM_MESSAGE,
  responsesToChatRequest,
  responsesUsage,
  type StreamConverter
} from '../src/index.js'

type Json = Record<string, unknown>

// ---------------------------------------------------------------- request

t.test('instructions, input items and content parts become chat messages; unknown fields are dropped', async (t) => {
  const body = {
    model: 'claude-sonnet-4',
    instructions: 'You are terse.',
    input: [
      { role: 'developer', content: 'Answer in English.' },
      { role: 'user', content: 'Hello' },
      { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Hi there.', annotations: [] }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in these?' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' },
          { type: 'input_image', file_id: 'file-abc' },
          { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          { type: 'input_file', file_url: 'https://example.test/b.pdf' }
        ]
      },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
      { type: 'item_reference', id: 'msg_0' }
    ],
    max_output_tokens: 1024,
    temperature: 0.2,
    top_p: 0.9,
    user: 'u-1',
    store: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'k',
    metadata: { a: '1' },
    truncation: 'auto',
    reasoning: { effort: 'high', summary: 'auto' },
    text: { format: { type: 'json_schema', name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } } } }, verbosity: 'low' }
  }
  const frozen = JSON.stringify(body)
  t.same(responsesToChatRequest(body), {
    model: 'claude-sonnet-4',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'system', content: 'Answer in English.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi there.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'text', text: 'File: https://example.test/b.pdf' }
        ]
      }
    ],
    max_tokens: 1024,
    temperature: 0.2,
    top_p: 0.9,
    user: 'u-1',
    reasoning_effort: 'high',
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true } }
  })
  t.equal(JSON.stringify(body), frozen, 'the input is not modified')
  t.same(responsesToChatRequest({ model: 'm', input: 'Just a string', stream: true, text: { format: { type: 'json_object' } } }), {
    model: 'm',
    messages: [{ role: 'user', content: 'Just a string' }],
    stream: true,
    stream_options: { include_usage: true },
    response_format: { type: 'json_object' }
  })
  t.same([undefined, 'none', 'minimal', 'low', 'medium', 'high', 'xhigh'].map(chatReasoningEffort), [undefined, undefined, 'low', 'low', 'medium', 'high', 'high'])
})

t.test('function calls and their outputs become tool_calls and tool messages; tools and tool_choice map', async (t) => {
  const body = {
    model: 'm',
    input: [
      { role: 'user', content: 'Weather and time in Paris?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Rain, 12°C' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '14:00' }, { type: 'input_image', image_url: 'https://example.test/clock.png' }] },
      { type: 'function_call', call_id: 'call_3', name: 'apply_patch', arguments: '{}' },
      { type: 'custom_tool_call', call_id: 'call_4', name: 'patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'call_4', output: 'Done' },
      { role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] }
    ],
    tools: [
      { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
      { type: 'function', name: 'get_time', parameters: null, strict: false },
      { type: 'custom', name: 'patch', description: 'Apply a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
      { type: 'web_search' }
    ],
    tool_choice: { type: 'function', name: 'get_weather' },
    parallel_tool_calls: false
  }
  const chat = responsesToChatRequest(body)
  t.same(chat.messages, [
    { role: 'user', content: 'Weather and time in Paris?' },
    {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } }
      ]
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'Rain, 12°C' },
    { role: 'tool', tool_call_id: 'call_2', content: '14:00' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.test/clock.png' } }] },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_3', type: 'function', function: { name: 'apply_patch', arguments: '{}' } },
        { id: 'call_4', type: 'function', function: { name: 'patch', arguments: '{"input":"*** Begin Patch"}' } }
      ]
    },
    { role: 'tool', tool_call_id: 'call_4', content: 'Done' },
    { role: 'user', content: 'Thanks' }
  ])
  t.same(chat.tools, [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true, description: 'Weather' } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} }, strict: false } },
    {
      type: 'function',
      function: {
        name: 'patch',
        parameters: { type: 'object', properties: { input: { type: 'string', description: 'The tool\'s free-form input (lark: start: "x")' } }, required: ['input'] },
        description: 'Apply a patch'
      }
    }
  ], 'function tools in chat\'s nested shape, custom tools as one-string functions, hosted tools dropped')
  t.same(chat.tool_choice, { type: 'function', function: { name: 'get_weather' } })
  t.equal(chat.parallel_tool_calls, false)
  const choice = (tool_choice: unknown): unknown => responsesToChatRequest({ ...body, tool_choice }).tool_choice
  t.same(['auto', 'none', 'required', { type: 'allowed_tools', mode: 'required', tools: [] }, { type: 'allowed_tools', mode: 'auto', tools: [] }, { type: 'custom', name: 'patch' }, { type: 'web_search_preview' }].map(choice),
    ['auto', 'none', 'required', 'required', 'auto', { type: 'function', function: { name: 'patch' } }, undefined])
  const noTools = responsesToChatRequest({ model: 'm', input: 'hi', tools: [{ type: 'file_search' }], tool_choice: 'required', parallel_tool_calls: true })
  t.notOk('tools' in noTools || 'tool_choice' in noTools || 'parallel_tool_calls' in noTools, 'no tool settings without function tools')
})

// ---------------------------------------------------------------- response

const USAGE = { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 20 }, completion_tokens_details: { reasoning_tokens: 5 } }
const WIRE_USAGE = { input_tokens: 120, input_tokens_details: { cached_tokens: 20 }, output_tokens: 45, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 165 }

const COMPLETION = {
  id: 'chatcmpl-xyz',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-x',
  choices: [{
    index: 0,
    message: {
      role: 'assistant',
      content: 'Checking the weather.',
      reasoning_content: 'The user wants the weather.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]
    },
    finish_reason: 'tool_calls'
  }],
  usage: USAGE
}

t.test('a chat completion becomes a Responses response object', async (t) => {
  const request = { model: 'claude-x', instructions: 'Use tools.', tools: [{ type: 'function', name: 'get_weather', parameters: {} }], tool_choice: 'auto', max_output_tokens: 512, metadata: { k: 'v' } }
  const response = chatToResponsesResponse(COMPLETION, 'claude-x', request)
  t.same(response, {
    id: 'resp_xyz',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: 'Use tools.',
    max_output_tokens: 512,
    model: 'claude-x',
    output: [
      { id: 'rs_xyz_0', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'The user wants the weather.' }] },
      { id: 'msg_xyz_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Checking the weather.' }] },
      { id: 'fc_xyz_2', type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'call_1', name: 'get_weather' }
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: request.tools,
    top_p: null,
    truncation: 'disabled',
    usage: WIRE_USAGE,
    metadata: { k: 'v' }
  })

  const cut = chatToResponsesResponse({ choices: [{ index: 0, message: { role: 'assistant', content: 'Half an ans' }, finish_reason: 'length' }] }, 'm')
  t.match(cut, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: null, output: [{ type: 'message', status: 'incomplete', content: [{ text: 'Half an ans' }] }] })
  t.match(cut.id, /^resp_[0-9a-f]{24}$/, 'a random id when the upstream gave none')
  t.match(chatToResponsesResponse({ choices: [{ message: { content: null }, finish_reason: 'content_filter' }] }, 'm'), {
    status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [{ type: 'message', content: [{ type: 'output_text', text: '' }] }]
  }, 'an empty answer still has its message')

  const custom = chatToResponsesResponse({
    id: 'c2',
    choices: [{ message: { content: null, tool_calls: [{ id: 'call_9', function: { name: 'patch', arguments: '{"input":"*** Begin Patch"}' } }], function_call: { name: 'legacy', arguments: { a: 1 } } }, finish_reason: 'tool_calls' }]
  }, 'm', { tools: [{ type: 'custom', name: 'patch' }] })
  t.same(custom.output, [
    { id: 'ctc_c2_0', type: 'custom_tool_call', status: 'completed', call_id: 'call_9', name: 'patch', input: '*** Begin Patch' },
    { id: 'fc_c2_1', type: 'function_call', status: 'completed', arguments: '{"a":1}', call_id: 'call_c2_1', name: 'legacy' }
  ], 'a custom tool answers as custom_tool_call with its input; a legacy function_call gets a call id')

  t.same(responsesUsage({ prompt_tokens: 7, completion_tokens: 2 }), { input_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 9 })
  t.equal(responsesUsage(null), undefined)
})

// ---------------------------------------------------------------- stream

const chunk = (choices: unknown[], usage: unknown = null): Json => ({ id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1_700_000_001, model: 'gpt-x', choices, usage })
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
  chunk([], USAGE)
])

const TEXT = 'Checking the weather — é 你好 🌧 "q"\n'

/** The events of a Responses stream: each an `event:` line naming the `type` of its data. */
function events (t: Test, text: string): Json[] {
  t.ok(text === '' || text.endsWith('\n\n'), 'ends at an event boundary')
  return text.split('\n\n').slice(0, -1).map((block) => {
    const match = /^event: ([^\n]+)\ndata: (.*)$/s.exec(block)
    if (match === null) {
      t.fail(`not a named SSE event: ${JSON.stringify(block)}`)
      return {}
    }
    const data = JSON.parse(match[2]!) as Json
    if (data.type !== match[1]) t.fail(`event ${match[1]!} carries type ${String(data.type)}`)
    return data
  })
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

t.test('a full chat stream becomes the Responses event sequence', async (t) => {
  const converter = chatStreamToResponses('claude-x', { model: 'claude-x', instructions: 'Use tools.', tools: [{ type: 'function', name: 'get_weather' }] })
  const all = events(t, feed(converter, Buffer.from(FULL_STREAM), () => FULL_STREAM.length))
  t.same(all.map((e) => e.type), [
    'response.created', 'response.in_progress',
    'response.output_item.added', 'response.content_part.added', 'response.reasoning_text.delta', 'response.reasoning_text.delta',
    'response.reasoning_text.done', 'response.content_part.done', 'response.output_item.done',
    'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
    'response.function_call_arguments.done', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
    'response.function_call_arguments.done', 'response.output_item.done',
    'response.completed'
  ])
  t.same(all.map((e) => e.sequence_number), all.map((_, i) => i), 'sequence numbers count from 0')
  t.match(all[0], { response: { id: 'resp_abc', object: 'response', created_at: 1_700_000_001, status: 'in_progress', model: 'claude-x', output: [], usage: null, instructions: 'Use tools.' } })
  const message = 'msg_abc_1'
  t.same(all[9], { type: 'response.output_item.added', sequence_number: 9, output_index: 1, item: { id: message, type: 'message', status: 'in_progress', role: 'assistant', content: [] } })
  t.same(all[10], { type: 'response.content_part.added', sequence_number: 10, item_id: message, output_index: 1, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } })
  t.same(all[11], { type: 'response.output_text.delta', sequence_number: 11, item_id: message, output_index: 1, content_index: 0, delta: 'Checking the weather — ', logprobs: [] })
  t.same(all[13], { type: 'response.output_text.done', sequence_number: 13, item_id: message, output_index: 1, content_index: 0, text: TEXT, logprobs: [] })
  t.same(all[16], { type: 'response.output_item.added', sequence_number: 16, output_index: 2, item: { id: 'fc_abc_2', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_1', name: 'get_weather' } })
  t.same(all[17], { type: 'response.function_call_arguments.delta', sequence_number: 17, item_id: 'fc_abc_2', output_index: 2, delta: '{"city":' })
  t.same(all[19], { type: 'response.function_call_arguments.done', sequence_number: 19, item_id: 'fc_abc_2', output_index: 2, name: 'get_weather', arguments: '{"city":"Paris"}' })
  const output = [
    { id: 'rs_abc_0', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'The user wants two tools.' }] },
    { id: message, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: TEXT }] },
    { id: 'fc_abc_2', type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'call_1', name: 'get_weather' },
    { id: 'fc_abc_3', type: 'function_call', status: 'completed', arguments: '{"tz":"Europe/Paris"}', call_id: 'call_2', name: 'get_time' }
  ]
  t.same(all.filter((e) => e.type === 'response.output_item.done').map((e) => e.item), output, 'each item whole when it is done')
  t.match(all.at(-1), { response: { id: 'resp_abc', status: 'completed', incomplete_details: null, output, usage: WIRE_USAGE } })
  t.ok(converter.finished())
  t.same(converter.usage(), { promptTokens: 120, completionTokens: 45, cachedTokens: 20 })
  t.equal(converter.takeText(), `The user wants two tools.${TEXT}{"city":"Paris"}{"tz":"Europe/Paris"}`)
  t.equal(converter.untakenBytes(), 0)
})

t.test('the output is the same however the upstream bytes are cut, multi-byte characters included', async (t) => {
  const bytes = Buffer.from(FULL_STREAM)
  const reference = feed(chatStreamToResponses('m'), bytes, () => bytes.length)
  t.equal(feed(chatStreamToResponses('m'), bytes, () => 1), reference, 'one byte at a time')
  let mismatches = 0
  for (let cut = 1; cut < bytes.length; cut++) {
    if (feed(chatStreamToResponses('m'), bytes, (at) => at === 0 ? cut : bytes.length) !== reference) mismatches++
  }
  t.equal(mismatches, 0, `cut in two at each of the ${bytes.length - 1} byte boundaries`)
  let seed = 7
  const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  for (let round = 0; round < 200; round++) {
    if (feed(chatStreamToResponses('m'), bytes, () => 1 + rand(rand(3) === 0 ? 5 : 120)) !== reference) mismatches++
  }
  t.equal(mismatches, 0, '200 random slicings')
  const crlf = Buffer.from(FULL_STREAM.replaceAll('\n\n', '\r\n\r\n'))
  t.equal(feed(chatStreamToResponses('m'), crlf, () => 1), reference, 'CRLF line endings, one byte at a time')
  // Every multi-byte character of the text split between two pushes.
  const splits = [...bytes.entries()].filter(([, byte]) => byte >= 0x80 && byte < 0xc0).map(([at]) => at)
  t.equal(splits.length, 10, 'the continuation bytes of —, é, 你, 好 and 🌧')
  for (const at of splits) if (feed(chatStreamToResponses('m'), bytes, (from) => from === 0 ? at : 3) !== reference) mismatches++
  t.equal(mismatches, 0, 'cut inside each multi-byte character')
})

t.test('a stream cut anywhere ends with response.completed or response.failed, never with broken events', async (t) => {
  const bytes = Buffer.from(FULL_STREAM)
  const finishEnd = bytes.indexOf('\n', bytes.indexOf('"finish_reason":"tool_calls"'))
  const wrong: number[] = []
  for (let cut = 0; cut <= bytes.length; cut++) {
    const converter = chatStreamToResponses('m')
    const all = events(t, feed(converter, bytes.subarray(0, cut), () => 64))
    const types = all.map((e) => e.type)
    if (types[0] !== 'response.created') wrong.push(cut)
    else if (cut >= finishEnd) {
      if (types.at(-1) !== 'response.completed' || !converter.finished()) wrong.push(cut)
    } else if (types.at(-1) !== 'response.failed' || types.at(-2) !== 'error' || converter.finished()) wrong.push(cut)
  }
  t.same(wrong, [], `every one of ${bytes.length + 1} cuts`)
})

t.test('a died stream, upstream errors, length, usage with the finish and a custom tool', async (t) => {
  const converter = chatStreamToResponses('m')
  const out = converter.push(Buffer.from(wire([delta({ content: 'Hel' }), delta({ content: 'lo' })], false) + 'data: {"choices":[{"delta":{"cont'))
  const died = events(t, out.toString() + converter.end().toString())
  t.same(died.slice(-2).map((e) => e.type), ['error', 'response.failed'])
  t.match(died.at(-2), { code: 'server_error', message: CUT_STREAM_MESSAGE, param: null })
  t.match(died.at(-1), { response: { status: 'failed', error: { code: 'server_error', message: CUT_STREAM_MESSAGE }, output: [] } })
  t.notOk(converter.finished())
  t.equal(converter.push(Buffer.from(wire([delta({ content: 'late' })]))).length, 0, 'nothing after the failure')

  const named = events(t, feed(chatStreamToResponses('m'), Buffer.from('event: error\ndata: {"error":{"message":"busy","type":"server_error"}}\n\n'), () => 3))
  t.same(named.map((e) => e.type), ['response.created', 'response.in_progress', 'error', 'response.failed'], 'an error before anything: created first, as clients need a response to fail')
  const limited = events(t, feed(chatStreamToResponses('m'), Buffer.from('data: {"error":{"message":"Slow down","code":"rate_limit_exceeded"}}\n\n'), () => 100))
  t.match(limited.at(-1), { response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down' } } })

  // DeepSeek-style: usage rides on the finish chunk; a length finish makes the response incomplete.
  const withFinish = chatStreamToResponses('m')
  const cut = events(t, withFinish.push(Buffer.from(wire([
    chunk([{ index: 0, delta: { content: 'Hi' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: '!' }, finish_reason: 'length' }], { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 })
  ], false))).toString())
  t.match(cut.at(-1), {
    type: 'response.incomplete',
    response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ type: 'message', status: 'incomplete', content: [{ text: 'Hi!' }] }], usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 } }
  })
  t.ok(withFinish.finished())
  t.equal(withFinish.end().length, 0)

  // A custom tool's input goes whole when its call ends; a finish without usage or [DONE] completes at end().
  const custom = chatStreamToResponses('m', { tools: [{ type: 'custom', name: 'patch' }] })
  const tool = events(t, feed(custom, Buffer.from(': keep-alive\n\n' + wire([
    delta({ tool_calls: [{ index: 0, id: 'call_p', function: { name: 'patch', arguments: '{"input":"*** Be' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: 'gin Patch"}' } }] }),
    delta({}, 'tool_calls')
  ], false)), () => 5))
  t.same(tool.slice(2).map((e) => e.type), [
    'response.output_item.added', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done', 'response.completed'
  ])
  t.match(tool[2], { item: { id: 'ctc_abc_0', type: 'custom_tool_call', call_id: 'call_p', name: 'patch', input: '' } })
  t.match(tool[4], { input: '*** Begin Patch' })
  t.match(tool.at(-1), { response: { output: [{ type: 'custom_tool_call', input: '*** Begin Patch', status: 'completed' }], usage: null } })
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

t.test('the official openai SDK reads the converted answers, streamed and not', async (t) => {
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
        res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy())
        return
      }
      for (let at = 0; at < bytes.length; at += 37) res.write(bytes.subarray(at, at + 37))
      res.end()
    })
  })
  const upstreamUrl = await listen(upstream)
  t.teardown(() => upstream.close())

  // A minimal gateway: Responses in, chat completions out, converted back.
  const gateway = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses' || req.headers.authorization !== 'Bearer sk-test') {
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: 'bad key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }))
        return
      }
      const body = JSON.parse(await readBody(req)) as Json
      const model = body.model as string
      const answer = await fetch(`${upstreamUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(responsesToChatRequest(body))
      })
      if (!answer.ok) {
        res.writeHead(answer.status, { 'content-type': 'application/json' })
        res.end(await answer.text())
        return
      }
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(chatToResponsesResponse(await answer.json() as Json, model, body)))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const converter = chatStreamToResponses(model, body)
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

  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test', maxRetries: 0 })
  const params = {
    model: 'claude-x',
    instructions: 'Use tools.',
    input: 'Weather in Paris?',
    max_output_tokens: 512,
    reasoning: { effort: 'medium' as const },
    tools: [{ type: 'function' as const, name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }]
  }

  const response = await client.responses.create(params)
  t.equal(response.output_text, 'Checking the weather.')
  t.match(response.output, [{ type: 'reasoning' }, { type: 'message' }, { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }])
  t.same(response.usage, WIRE_USAGE)
  t.match(received.at(-1), {
    model: 'claude-x',
    max_tokens: 512,
    reasoning_effort: 'medium',
    messages: [{ role: 'system', content: 'Use tools.' }, { role: 'user', content: 'Weather in Paris?' }],
    tools: [{ type: 'function', function: { name: 'get_weather' } }]
  }, 'the upstream got a chat completions request')

  const stream = client.responses.stream(params)
  let streamed = ''
  stream.on('response.output_text.delta', (event) => { streamed += event.delta })
  const argsSnapshots: string[] = []
  stream.on('response.function_call_arguments.delta', (event) => { argsSnapshots.push(event.snapshot) })
  const final = await stream.finalResponse()
  t.equal(streamed, TEXT)
  t.same(argsSnapshots, ['{"city":', '{"city":"Paris"}', '{"tz":"Eur', '{"tz":"Europe/Paris"}'], 'the helper accumulates the arguments')
  t.equal(final.status, 'completed')
  t.equal(final.output_text, TEXT)
  t.match(final.output, [
    { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'The user wants two tools.' }] },
    { type: 'message', content: [{ type: 'output_text', text: TEXT }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' }
  ])
  t.same(final.usage, WIRE_USAGE)
  t.match(received.at(-1), { stream: true, stream_options: { include_usage: true } })

  const raw = await client.responses.create({ ...params, stream: true })
  const types: string[] = []
  for await (const event of raw) types.push(event.type)
  t.same(types.slice(0, 2), ['response.created', 'response.in_progress'])
  t.equal(types.at(-1), 'response.completed')

  const died = await client.responses.stream({ ...params, model: 'dies' }).finalResponse().then(() => undefined, (error: unknown) => error)
  t.match(died, { type: 'error', code: 'server_error', message: CUT_STREAM_MESSAGE }, 'a died upstream: the helper raises the error event')
  const dying: Array<{ type: string }> = []
  for await (const event of await client.responses.create({ ...params, model: 'dies', stream: true })) dying.push(event)
  t.match(dying.slice(-2), [{ type: 'error', message: CUT_STREAM_MESSAGE }, { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error' } } }])
  const limited = await client.responses.create({ ...params, model: 'rate-limited' }).then(() => undefined, (error: unknown) => error)
  t.type(limited, OpenAI.APIError)
  t.match(limited, { status: 429, error: { message: 'Too many requests' } }, 'an error status in OpenAI\'s shape')
})
