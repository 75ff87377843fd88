// Gemini clients served by OpenAI-compatible channels: the request converted to chat
// completions, the answer and its stream converted back, checked by hand and by the official
// @google/genai SDK reading what the converters produce over real HTTP.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ApiError, GoogleGenAI } from '@google/genai'
import t, { type Test } from 'tap'
import {
  chatStreamToGemini,
  chatToGeminiResponse,
  CUT_STREAM_MESSAGE,
  geminiEmbedToOpenAIRequest,
  geminiError,
  geminiToChatRequest,
  openAIEmbeddingsToGemini,
  reasoningEffortForThinking,
  type StreamConverter
} from '../src/index.js'

type Json = Record<string, unknown>

// ---------------------------------------------------------------- request

t.test('system instruction, roles, text and media become chat messages; unknown fields are dropped', async (t) => {
  const body = {
    systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in English.' }] },
    contents: [
      { role: 'user', parts: [{ text: 'Hello' }] },
      { role: 'model', parts: [{ text: 'thinking...', thought: true, thoughtSignature: 'c2ln' }, { text: 'Hi' }, { text: ' there.' }] },
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.test/cat.jpg' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } }
        ]
      },
      { parts: [{ text: 'first' }, { text: 'second' }] }
    ],
    safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    cachedContent: 'cachedContents/abc',
    generationConfig: {
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 1024,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7
    }
  }
  const frozen = JSON.stringify(body)
  t.same(geminiToChatRequest(body, 'gpt-4o', true), {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'You are terse.\nAnswer in English.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi there.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'image_url', image_url: { url: 'https://example.test/cat.jpg' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }
        ]
      },
      { role: 'user', content: 'first\nsecond' }
    ],
    temperature: 0.2,
    top_p: 0.9,
    max_tokens: 1024,
    n: 2,
    seed: 7,
    stop: ['END'],
    stream: true,
    stream_options: { include_usage: true }
  })
  t.equal(JSON.stringify(body), frozen, 'the input is not modified')
  t.same(geminiToChatRequest({ systemInstruction: 'Be nice.', contents: [{ role: 'user', parts: [{ text: 'x' }] }] }, 'm', false),
    { model: 'm', messages: [{ role: 'system', content: 'Be nice.' }, { role: 'user', content: 'x' }] }, 'a string system instruction; no stream fields')
})

t.test('function calls and responses become tool_calls and tool messages with matching ids', async (t) => {
  const chat = geminiToChatRequest({
    contents: [
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris', days: [1, 2] } } },
          { functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' } } },
          { functionCall: { name: 'get_weather', args: { city: 'Lyon' } } }
        ]
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { output: '10:00' } } },
          { functionResponse: { name: 'get_weather', response: { output: 'Rain' } } },
          { functionResponse: { name: 'get_weather', response: { output: 'Sun' } } },
          { text: 'Thanks.' }
        ]
      },
      { role: 'model', parts: [{ functionCall: { id: 'fc-9', name: 'get_time', args: {} } }] },
      { role: 'function', parts: [{ functionResponse: { id: 'fc-9', name: 'get_time', response: { error: 'down' } } }] },
      { role: 'model', parts: [{ text: 'only thoughts', thought: true }] }
    ]
  }, 'm', false)
  t.same(chat.messages, [
    { role: 'user', content: 'Weather and time in Paris?' },
    {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } },
        { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } }
      ]
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"output":"10:00"}' },
    { role: 'tool', tool_call_id: 'call_0', content: '{"output":"Rain"}' },
    { role: 'tool', tool_call_id: 'call_2', content: '{"output":"Sun"}' },
    { role: 'user', content: 'Thanks.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'fc-9', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'fc-9', content: '{"error":"down"}' }
  ], 'responses matched by name in call order, or by id; a thought-only turn dropped')
})

t.test('function declarations and tool config map to function tools and tool_choice', async (t) => {
  const tools = [{
    functionDeclarations: [
      {
        name: 'get_weather',
        description: 'Weather by city',
        parameters: { type: 'OBJECT', properties: { city: { type: 'STRING', nullable: true }, days: { type: 'ARRAY', items: { type: 'INTEGER' } } }, required: ['city'], propertyOrdering: ['city', 'days'] }
      },
      { name: 'get_time', parametersJsonSchema: { type: 'object', properties: { tz: { type: 'string' } } } },
      { name: 'noop' }
    ]
  }, { googleSearch: {} }]
  const base = { contents: [{ role: 'user', parts: [{ text: 'x' }] }], tools }
  const chat = geminiToChatRequest(base, 'm', false)
  t.same(chat.tools, [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: ['string', 'null'] }, days: { type: 'array', items: { type: 'integer' } } }, required: ['city'] },
        description: 'Weather by city'
      }
    },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } },
    { type: 'function', function: { name: 'noop', parameters: { type: 'object', properties: {} } } }
  ], 'Gemini schemas as JSON Schema, parametersJsonSchema as is, googleSearch dropped')
  t.notOk('tool_choice' in chat)
  const modes: Array<[Json, unknown]> = [
    [{ mode: 'AUTO' }, 'auto'],
    [{ mode: 'ANY' }, 'required'],
    [{ mode: 'NONE' }, 'none'],
    [{ mode: 'ANY', allowedFunctionNames: ['get_time'] }, { type: 'function', function: { name: 'get_time' } }]
  ]
  for (const [config, expected] of modes) {
    t.same(geminiToChatRequest({ ...base, toolConfig: { functionCallingConfig: config } }, 'm', false).tool_choice, expected, JSON.stringify(config))
  }
  const narrowed = geminiToChatRequest({ ...base, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time', 'noop'] } } }, 'm', false)
  t.same((narrowed.tools as Json[]).map((tool) => (tool.function as Json).name), ['get_time', 'noop'], 'several allowed names narrow the tools')
  t.equal(narrowed.tool_choice, 'required')
  t.notOk('tools' in geminiToChatRequest({ ...base, tools: [{ codeExecution: {} }] }, 'm', false), 'no declarations: no tools')
})

t.test('thinking config, JSON output and penalties', async (t) => {
  const base = { contents: [{ role: 'user', parts: [{ text: 'x' }] }] }
  const effort = (thinkingConfig: Json): unknown => geminiToChatRequest({ ...base, generationConfig: { thinkingConfig } }, 'm', false).reasoning_effort
  t.equal(effort({ thinkingBudget: 1024 }), 'low')
  t.equal(effort({ thinkingBudget: 8192 }), 'medium')
  t.equal(effort({ thinkingBudget: 24576 }), 'high')
  t.equal(effort({ thinkingBudget: 0 }), undefined, '0: thinking off, omitted')
  t.equal(effort({ thinkingBudget: -1 }), undefined, '-1: dynamic, omitted')
  t.equal(effort({ thinkingLevel: 'HIGH' }), 'high')
  t.equal(effort({ thinkingLevel: 'low', includeThoughts: true }), 'low')
  t.equal(reasoningEffortForThinking(undefined), undefined)
  t.same(geminiToChatRequest({ ...base, generationConfig: { responseMimeType: 'application/json' } }, 'm', false).response_format, { type: 'json_object' })
  t.same(geminiToChatRequest({ ...base, generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { a: { type: 'STRING' } } } } }, 'm', false).response_format,
    { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object', properties: { a: { type: 'string' } } } } })
  const jsonSchema = { type: 'object', properties: { b: { type: 'number' } } }
  t.same(geminiToChatRequest({ ...base, generationConfig: { responseMimeType: 'application/json', responseJsonSchema: jsonSchema } }, 'm', false).response_format,
    { type: 'json_schema', json_schema: { name: 'response', schema: jsonSchema } })
  t.notOk('response_format' in geminiToChatRequest({ ...base, generationConfig: { responseMimeType: 'text/plain' } }, 'm', false))
  t.match(geminiToChatRequest({ ...base, generationConfig: { presencePenalty: 0.5, frequencyPenalty: 0.25 } }, 'm', false), { presence_penalty: 0.5, frequency_penalty: 0.25 })
})

// ---------------------------------------------------------------- response

t.test('a chat completion becomes a GenerateContentResponse', async (t) => {
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
    usage: { prompt_tokens: 100, completion_tokens: 30, total_tokens: 130, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 12 } }
  }
  t.same(chatToGeminiResponse(chat, 'gemini-2.5-pro'), {
    candidates: [{
      content: {
        role: 'model',
        parts: [
          { text: 'User wants weather.', thought: true },
          { text: 'Let me look.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' }, id: 'call_a' } },
          { functionCall: { name: 'broken', args: {}, id: 'call_b' } }
        ]
      },
      finishReason: 'STOP',
      index: 0
    }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 18, totalTokenCount: 130, thoughtsTokenCount: 12, cachedContentTokenCount: 60 },
    modelVersion: 'gemini-2.5-pro',
    responseId: 'chatcmpl-123'
  })
  const reasons: Array<[unknown, string]> = [['stop', 'STOP'], ['length', 'MAX_TOKENS'], ['content_filter', 'SAFETY'], ['tool_calls', 'STOP'], [null, 'STOP']]
  for (const [finish, reason] of reasons) {
    const response = chatToGeminiResponse({ choices: [{ message: { content: 'x' }, finish_reason: finish }] }, 'm')
    t.equal((response.candidates as Json[])[0]!.finishReason, reason, `${String(finish)} → ${reason}`)
  }
  const empty = chatToGeminiResponse({ choices: [{ message: { content: '' }, finish_reason: 'stop' }] }, 'm')
  t.same((empty.candidates as Json[])[0]!.content, { role: 'model', parts: [] }, 'no empty text part')
  t.same(empty.usageMetadata, { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 }, 'no usage: zeros')
  t.match(empty.responseId, /^[\w-]{16}$/, 'no upstream id: a random one')
  const plain = chatToGeminiResponse({ choices: [{ message: { content: 'a' } }, { index: 1, message: { content: 'b' }, finish_reason: 'length' }], usage: { prompt_tokens: 3, completion_tokens: 4 } }, 'm')
  t.same((plain.candidates as Json[]).map((c) => [c.index, c.finishReason]), [[0, 'STOP'], [1, 'MAX_TOKENS']], 'one candidate per choice')
  t.same(plain.usageMetadata, { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 }, 'no total, reasoning or cache: summed, fields omitted')
  const legacy = chatToGeminiResponse({ choices: [{ message: { content: null, function_call: { name: 'f', arguments: '{"a":1}' } }, finish_reason: 'function_call' }] }, 'm')
  t.same((legacy.candidates as Json[])[0]!.content, { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] }, 'legacy function_call')
})

t.test('HTTP statuses map to Google error statuses', async (t) => {
  const table: Array<[number, string]> = [
    [400, 'INVALID_ARGUMENT'], [401, 'UNAUTHENTICATED'], [402, 'RESOURCE_EXHAUSTED'], [403, 'PERMISSION_DENIED'], [404, 'NOT_FOUND'],
    [409, 'ABORTED'], [413, 'INVALID_ARGUMENT'], [429, 'RESOURCE_EXHAUSTED'], [499, 'CANCELLED'], [500, 'INTERNAL'], [501, 'UNIMPLEMENTED'],
    [502, 'INTERNAL'], [503, 'UNAVAILABLE'], [504, 'DEADLINE_EXCEEDED']
  ]
  for (const [status, name] of table) t.same(geminiError(status, 'm'), { error: { code: status, message: 'm', status: name } }, String(status))
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
  chunk([], { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 20 }, completion_tokens_details: { reasoning_tokens: 5 } })
])

const FULL_USAGE = { promptTokenCount: 120, candidatesTokenCount: 40, totalTokenCount: 165, thoughtsTokenCount: 5, cachedContentTokenCount: 20 }

/** The parts of each value of a Gemini stream, in order, and the values themselves. */
function sseValues (t: Test, text: string): Json[] {
  t.ok(text === '' || text.endsWith('\r\n\r\n'), 'ends at an event boundary')
  return text.split('\r\n\r\n').slice(0, -1).map((block) => {
    if (!block.startsWith('data: ')) t.fail(`not an SSE data event: ${JSON.stringify(block)}`)
    return JSON.parse(block.slice('data: '.length)) as Json
  })
}

const partsOf = (value: Json): unknown => ((value.candidates as Json[])[0]!.content as Json).parts

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

t.test('a full OpenAI stream becomes Gemini SSE values', async (t) => {
  const converter = chatStreamToGemini('gemini-2.5-flash', 'sse')
  const values = sseValues(t, feed(converter, Buffer.from(FULL_STREAM), () => FULL_STREAM.length))
  t.same(values.map(partsOf), [
    [{ text: 'The user wants', thought: true }],
    [{ text: ' two tools.', thought: true }],
    [{ text: 'Checking the weather — ' }],
    [{ text: 'é 你好 🌧 "q"\n' }],
    [{ functionCall: { name: 'get_weather', args: { city: 'Paris' }, id: 'call_1' } }],
    [{ functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' }, id: 'call_2' } }],
    [{ text: '' }]
  ])
  t.same(values[0], { candidates: [{ content: { role: 'model', parts: [{ text: 'The user wants', thought: true }] }, index: 0 }], modelVersion: 'gemini-2.5-flash', responseId: 'chatcmpl-abc' })
  t.same(values.at(-1), {
    candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: FULL_USAGE,
    modelVersion: 'gemini-2.5-flash',
    responseId: 'chatcmpl-abc'
  })
  t.ok(converter.finished())
  t.same(converter.usage(), { promptTokens: 120, completionTokens: 45, cachedTokens: 20 })
  t.equal(converter.takeText(), 'The user wants two tools.Checking the weather — é 你好 🌧 "q"\n{"city":"Paris"}{"tz":"Europe/Paris"}')
  t.equal(converter.untakenBytes(), 0)
})

t.test('json mode streams one JSON array with the same values', async (t) => {
  const sse = feed(chatStreamToGemini('m', 'sse'), Buffer.from(FULL_STREAM), () => 1000)
  const converter = chatStreamToGemini('m', 'json')
  const text = feed(converter, Buffer.from(FULL_STREAM), () => 1000)
  t.ok(text.startsWith('[{"candidates"'), 'opens the array')
  t.ok(text.endsWith('}]'), 'closes the array')
  t.equal(text.split('},\r\n{').length, 7, 'values separated by ,\\r\\n')
  t.same(JSON.parse(text), sseValues(t, sse))
  t.ok(converter.finished())
  const cut = chatStreamToGemini('m', 'json')
  const died = JSON.parse(feed(cut, Buffer.from(wire([delta({ content: 'Hel' })], false)), () => 7)) as Json[]
  t.same(died.at(-1), { error: { code: 500, message: CUT_STREAM_MESSAGE, status: 'INTERNAL' } }, 'a died stream: an error value, array closed')
  t.same(JSON.parse(chatStreamToGemini('m', 'json').end().toString()), [{ error: { code: 500, message: CUT_STREAM_MESSAGE, status: 'INTERNAL' } }], 'an empty upstream answer')
})

t.test('the output is the same however the upstream bytes are cut', async (t) => {
  const bytes = Buffer.from(FULL_STREAM)
  // Response ids are the upstream's, so outputs compare byte for byte.
  for (const mode of ['sse', 'json'] as const) {
    const reference = feed(chatStreamToGemini('m', mode), bytes, () => bytes.length)
    t.equal(feed(chatStreamToGemini('m', mode), bytes, () => 1), reference, `${mode}: one byte at a time`)
    let mismatches = 0
    for (let cut = 1; cut < bytes.length; cut++) {
      if (feed(chatStreamToGemini('m', mode), bytes, (at) => at === 0 ? cut : bytes.length) !== reference) mismatches++
    }
    t.equal(mismatches, 0, `${mode}: cut in two at each of the ${bytes.length - 1} byte boundaries`)
    let seed = 11
    const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
    for (let round = 0; round < 200; round++) {
      if (feed(chatStreamToGemini('m', mode), bytes, () => 1 + rand(rand(3) === 0 ? 5 : 120)) !== reference) mismatches++
    }
    t.equal(mismatches, 0, `${mode}: 200 random slicings`)
    const crlf = Buffer.from(FULL_STREAM.replaceAll('\n\n', '\r\n\r\n'))
    t.equal(feed(chatStreamToGemini('m', mode), crlf, () => 1), reference, `${mode}: CRLF line endings, one byte at a time`)
  }
})

t.test('a stream cut anywhere ends with the final value or an error, never with broken output', async (t) => {
  const bytes = Buffer.from(FULL_STREAM)
  const finishEnd = bytes.indexOf('\n', bytes.indexOf('"finish_reason":"tool_calls"'))
  const wrong: number[] = []
  for (let cut = 0; cut <= bytes.length; cut++) {
    const converter = chatStreamToGemini('m', 'sse')
    const values = sseValues(t, feed(converter, bytes.subarray(0, cut), () => 64))
    const last = values.at(-1)
    if (cut >= finishEnd) {
      if ((last?.candidates as Json[] | undefined)?.[0]?.finishReason !== 'STOP' || !converter.finished()) wrong.push(cut)
    } else if (JSON.stringify(last) !== JSON.stringify(geminiError(500, CUT_STREAM_MESSAGE)) || converter.finished()) {
      wrong.push(cut)
    }
  }
  t.same(wrong, [], `every one of ${bytes.length + 1} cuts`)
})

t.test('a died stream, upstream errors, usage with the finish and tool calls interleaved', async (t) => {
  const converter = chatStreamToGemini('m', 'sse')
  const out = converter.push(Buffer.from(wire([delta({ content: 'Hel' }), delta({ content: 'lo' })], false) + 'data: {"choices":[{"delta":{"cont'))
  const values = sseValues(t, out.toString() + converter.end().toString())
  t.same(values.map((v) => 'error' in v ? 'error' : partsOf(v)), [[{ text: 'Hel' }], [{ text: 'lo' }], 'error'])
  t.same(values.at(-1), { error: { code: 500, message: CUT_STREAM_MESSAGE, status: 'INTERNAL' } })
  t.notOk(converter.finished())
  t.equal(converter.push(Buffer.from(wire([delta({ content: 'late' })]))).length, 0, 'nothing after the error')

  const named = sseValues(t, feed(chatStreamToGemini('m', 'sse'), Buffer.from('event: error\ndata: {"error":{"message":"busy","type":"server_error"}}\n\n'), () => 3))
  t.same(named, [{ error: { code: 500, message: 'busy', status: 'INTERNAL' } }])
  const limited = sseValues(t, feed(chatStreamToGemini('m', 'sse'), Buffer.from('data: {"error":{"message":"Slow down","code":"rate_limit_exceeded"}}\n\n'), () => 100))
  t.same(limited, [{ error: { code: 429, message: 'Slow down', status: 'RESOURCE_EXHAUSTED' } }])

  // DeepSeek-style: usage rides on the finish chunk; the final value goes out at once.
  const withFinish = chatStreamToGemini('m', 'sse')
  const first = sseValues(t, withFinish.push(Buffer.from(wire([
    chunk([{ index: 0, delta: { content: 'Hi' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: '!' }, finish_reason: 'length' }], { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 })
  ], false))).toString())
  t.same(first.at(-1)!.usageMetadata, { promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 })
  t.equal((first.at(-1)!.candidates as Json[])[0]!.finishReason, 'MAX_TOKENS')
  t.ok(withFinish.finished())
  t.equal(withFinish.end().length, 0)

  // A finish without usage or [DONE]: zeros at end(); text after a call completes the call first.
  const mixed = sseValues(t, feed(chatStreamToGemini('m', 'sse'), Buffer.from(': keep-alive\n\n' + wire([
    delta({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":1}' } }] }),
    delta({ content: 'then text' }),
    delta({ function_call: { name: 'legacy', arguments: '{}' } }),
    delta({}, 'stop')
  ], false)), () => 5))
  t.same(mixed.map(partsOf), [
    [{ functionCall: { name: 'f', args: { x: 1 }, id: 'a' } }],
    [{ text: 'then text' }],
    [{ functionCall: { name: 'legacy', args: {} } }],
    [{ text: '' }]
  ])
  t.same(mixed.at(-1)!.usageMetadata, { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 })
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
  usage: { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 20 }, completion_tokens_details: { reasoning_tokens: 5 } }
}

t.test('the official @google/genai SDK reads the converted answers, streamed and not', async (t) => {
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

  // What the SDK sends, recorded for the gateway's routing.
  const seen: Array<{ method: string, path: string, query: Record<string, string>, headers: IncomingMessage['headers'] }> = []
  const gateway = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://gateway')
      seen.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers })
      const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key')
      const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname)
      if (key !== 'gm-test' || req.method !== 'POST' || match === null) {
        res.writeHead(key === 'gm-test' ? 404 : 401, { 'content-type': 'application/json' })
        res.end(JSON.stringify(geminiError(key === 'gm-test' ? 404 : 401, 'no')))
        return
      }
      const model = match[1]!
      const stream = match[2] === 'streamGenerateContent'
      const body = JSON.parse(await readBody(req)) as Json
      const answer = await fetch(`${upstreamUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(geminiToChatRequest(body, model, stream))
      })
      if (!answer.ok) {
        const text = await answer.text()
        res.writeHead(answer.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(geminiError(answer.status, (JSON.parse(text) as { error: { message: string } }).error.message)))
        return
      }
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(chatToGeminiResponse(await answer.json() as Json, model)))
        return
      }
      const mode = url.searchParams.get('alt') === 'sse' ? 'sse' : 'json'
      res.writeHead(200, { 'content-type': mode === 'sse' ? 'text/event-stream' : 'application/json' })
      const converter = chatStreamToGemini(model, mode)
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
  const baseUrl = await listen(gateway)
  t.teardown(() => gateway.close())

  const ai = new GoogleGenAI({ apiKey: 'gm-test', httpOptions: { baseUrl } })
  const params = {
    model: 'gemini-2.5-flash',
    contents: 'Weather in Paris?',
    config: {
      systemInstruction: 'Use tools.',
      maxOutputTokens: 512,
      thinkingConfig: { thinkingBudget: 8192 },
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }]
    }
  }

  const response = await ai.models.generateContent(params)
  t.equal(response.text, 'Checking the weather.')
  t.same(response.functionCalls, [{ id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }])
  t.match(response.usageMetadata, { promptTokenCount: 120, candidatesTokenCount: 40, thoughtsTokenCount: 5, cachedContentTokenCount: 20, totalTokenCount: 165 })
  t.equal(response.candidates?.[0]?.finishReason, 'STOP')
  t.equal(response.modelVersion, 'gemini-2.5-flash')
  t.match(received.at(-1), {
    model: 'gemini-2.5-flash',
    max_tokens: 512,
    reasoning_effort: 'medium',
    messages: [{ role: 'system', content: 'Use tools.' }, { role: 'user', content: 'Weather in Paris?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]
  }, 'the upstream got a chat completions request')
  const plain = seen.at(-1)!
  t.equal(plain.path, '/v1beta/models/gemini-2.5-flash:generateContent')
  t.same(plain.query, {}, 'no query string: the key goes in a header')
  t.equal(plain.headers['x-goog-api-key'], 'gm-test')
  t.comment(`generateContent: ${plain.method} ${plain.path} query=${JSON.stringify(plain.query)} headers=${JSON.stringify(plain.headers)}`)

  let text = ''
  let thoughts = ''
  const calls: unknown[] = []
  let last: Json | undefined
  for await (const piece of await ai.models.generateContentStream(params)) {
    for (const part of piece.candidates?.[0]?.content?.parts ?? []) {
      if (part.thought === true) thoughts += part.text ?? ''
      else if (part.text !== undefined) text += part.text
    }
    calls.push(...(piece.functionCalls ?? []))
    last = piece as unknown as Json
  }
  t.equal(text, 'Checking the weather — é 你好 🌧 "q"\n')
  t.equal(thoughts, 'The user wants two tools.')
  t.same(calls, [{ id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }, { id: 'call_2', name: 'get_time', args: { tz: 'Europe/Paris' } }])
  t.match(last?.usageMetadata, FULL_USAGE)
  t.equal((last?.candidates as Json[])[0]!.finishReason, 'STOP')
  t.match(received.at(-1), { stream: true, stream_options: { include_usage: true } })
  const streamed = seen.at(-1)!
  t.equal(streamed.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent')
  t.same(streamed.query, { alt: 'sse' })
  t.equal(streamed.headers['x-goog-api-key'], 'gm-test')
  t.comment(`streamGenerateContent: ${streamed.method} ${streamed.path} query=${JSON.stringify(streamed.query)} headers=${JSON.stringify(streamed.headers)}`)

  // The REST framing without alt=sse: one JSON array, read by a plain fetch.
  const raw = await fetch(`${baseUrl}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=gm-test`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
  })
  const array = JSON.parse(await raw.text()) as Json[]
  t.equal(array.length, 7)
  t.match(array.at(-1), { usageMetadata: FULL_USAGE })

  const died = await (async () => {
    for await (const piece of await ai.models.generateContentStream({ ...params, model: 'dies' })) void piece
  })().then(() => undefined, (error: unknown) => error)
  t.type(died, ApiError, 'a died upstream: the SDK raises the error value')
  t.match(died, { status: 500, message: new RegExp(CUT_STREAM_MESSAGE) })
  const limited = await ai.models.generateContent({ ...params, model: 'rate-limited' }).then(() => undefined, (error: unknown) => error)
  t.type(limited, ApiError)
  t.match(limited, { status: 429, message: /RESOURCE_EXHAUSTED|Too many requests/ })
})

t.test('embedContent and batchEmbedContents become OpenAI embeddings requests and back', async (t) => {
  t.same(geminiEmbedToOpenAIRequest({ content: { parts: [{ text: 'first' }, { inlineData: { mimeType: 'image/png', data: 'x' } }, { text: 'second' }] }, taskType: 'SEMANTIC_SIMILARITY', outputDimensionality: 256 }, 'text-embedding-3-small', false),
    { model: 'text-embedding-3-small', input: ['first\nsecond'], dimensions: 256 })
  t.same(geminiEmbedToOpenAIRequest({ requests: [{ model: 'models/x', content: { parts: [{ text: 'a' }] }, outputDimensionality: 8 }, { model: 'models/x', content: { parts: [{ text: 'b' }] } }] }, 'm', true),
    { model: 'm', input: ['a', 'b'], dimensions: 8 })
  t.same(geminiEmbedToOpenAIRequest({ requests: [] }, 'm', true), { model: 'm', input: [] })
  const answer = { object: 'list', data: [{ object: 'embedding', index: 1, embedding: [3, 4] }, { object: 'embedding', index: 0, embedding: [1, 2] }], usage: { prompt_tokens: 2, total_tokens: 2 } }
  t.same(openAIEmbeddingsToGemini(answer, true), { embeddings: [{ values: [1, 2] }, { values: [3, 4] }] }, 'in the order of the inputs')
  t.same(openAIEmbeddingsToGemini(answer, false), { embedding: { values: [1, 2] } })
  t.same(openAIEmbeddingsToGemini({ data: [{ index: 0, embedding: 'AAAA' }] }, false), { embedding: { values: [] } }, 'base64 embeddings are not numbers')
})
