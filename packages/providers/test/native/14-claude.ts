// Type 14: Anthropic's Messages API at api.anthropic.com, key in x-api-key.
import type { NativeProtocol } from '../kit.js'
import { anthropicError, anthropicMessage, anthropicStream } from './anthropic-wire.js'

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 14, type: 14, key: 'sk-ant-test-14', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'sk-ant-wrong',
  authorized: (seen, channel) => seen.headers['x-api-key'] === channel.key && seen.headers['anthropic-version'] === '2023-06-01' && seen.headers.authorization === undefined,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(anthropicError('authentication_error', 'invalid x-api-key'))
  },
  chat: {
    path: () => '/v1/messages',
    answer: anthropicMessage([{ type: 'text', text: 'Hello there' }], 'end_turn'),
    stream: () => anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Héllo, ' }, { type: 'text_delta', text: 'wörld 你好 🎉' }] }], 'end_turn'),
    tools: {
      answer: anthropicMessage([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'),
      stream: () => anthropicStream([{
        start: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
        deltas: [{ type: 'input_json_delta', partial_json: '' }, { type: 'input_json_delta', partial_json: '{"city": ' }, { type: 'input_json_delta', partial_json: '"Paris"}' }]
      }], 'tool_use')
    },
    checkBody: (t, body) => {
      t.same(body.system, [{ type: 'text', text: 'Be brief.' }], 'system prompt')
      t.same(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }], 'messages')
      t.same(body.tools, [{ name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], 'tools')
      t.equal(body.max_tokens, 4096, 'the default max_tokens Anthropic requires')
    }
  },
  models: {
    path: '/v1/models?limit=1000',
    answer: { data: [{ type: 'model', id: 'model-a', display_name: 'Model A', created_at: '2025-05-14T00:00:00Z' }, { type: 'model', id: 'model-b', display_name: 'Model B', created_at: '2025-05-14T00:00:00Z' }], has_more: false, first_id: 'model-a', last_id: 'model-b' }
  },
  errors: [
    { what: '401 invalid key', status: 401, body: anthropicError('authentication_error', 'invalid x-api-key'), action: 'disable', code: 'authentication_error' },
    { what: '403 permission', status: 403, body: anthropicError('permission_error', 'Your API key does not have permission to use the specified resource.'), action: 'disable', code: 'permission_error' },
    { what: '402 billing', status: 402, body: anthropicError('billing_error', 'Your account has a billing issue.'), action: 'disable', code: 'billing_error' },
    { what: '400 credit balance too low', status: 400, body: anthropicError('invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'), action: 'disable', code: 'invalid_request_error' },
    { what: '429 rate limit', status: 429, body: anthropicError('rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.'), action: 'retry', code: 'rate_limit_error' },
    { what: '429 monthly spend limit', status: 429, body: anthropicError('rate_limit_error', 'You have reached your monthly spend limit.', { error_code: 'enforced_spend_limit_reached' }), action: 'disable', code: 'enforced_spend_limit_reached' },
    { what: '500 api error', status: 500, body: anthropicError('api_error', 'Internal server error'), action: 'retry', code: 'api_error' },
    { what: '529 overloaded', status: 529, body: anthropicError('overloaded_error', 'Overloaded'), action: 'retry', code: 'overloaded_error' },
    { what: '400 bad request', status: 400, body: anthropicError('invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'), action: 'client', code: 'invalid_request_error' },
    { what: '404 unknown model', status: 404, body: anthropicError('not_found_error', 'model: claude-9'), action: 'client', code: 'not_found_error' },
    { what: '413 too large', status: 413, body: anthropicError('request_too_large', 'Request exceeds the maximum allowed number of bytes.'), action: 'client', code: 'request_too_large' }
  ]
}
