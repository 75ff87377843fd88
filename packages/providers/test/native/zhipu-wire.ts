// Zhipu's (BigModel's) v4 API on the wire, for the ChatGLM and GLM-4V fixtures: OpenAI-shaped
// answers and streams, and a Bearer JWT checked as Zhipu checks it.
import { decodeProtectedHeader, jwtVerify } from 'jose'
import type { ChannelConfig } from '../../src/index.js'
import type { NativeChat, NativeProtocol, Seen } from '../kit.js'

export const ZHIPU_USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } }

/** What the last verified token carried (the fixtures' own tests look at it). */
export const lastToken: { header?: Record<string, unknown>, payload?: Record<string, unknown>, token?: string } = {}

/**
 * Whether the request's `Authorization: Bearer` is a JWT signed (HS256) with the secret of the
 * channel's `id.secret` key, its header `{alg: 'HS256', sign_type: 'SIGN'}`, its payload's api_key
 * the id, and `exp` and `timestamp` in milliseconds (now, and not past).
 */
export async function zhipuAuthorized (seen: Seen, channel: ChannelConfig): Promise<boolean> {
  const auth = seen.headers.authorization
  if (typeof auth !== 'string' || !auth.startsWith('Bearer ')) return false
  const token = auth.slice('Bearer '.length)
  const [id, secret] = channel.key.split('.')
  try {
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'] })
    const now = Date.now()
    const exp = Number(payload.exp)
    const timestamp = Number(payload.timestamp)
    const ok = protectedHeader.sign_type === 'SIGN' && payload.api_key === id &&
      timestamp > now - 60 * 60_000 && timestamp <= now + 1000 && exp > now && exp < now + 24 * 60 * 60_000
    if (ok) Object.assign(lastToken, { header: decodeProtectedHeader(token), payload, token })
    return ok
  } catch {
    return false
  }
}

export const zhipuError = (code: string, message: string) => JSON.stringify({ error: { code, message } })

const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'zp-1', object: 'chat.completion.chunk', created: 1700000000, model: 'glm-4-plus', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`

export const zhipuAnswer = (message: Record<string, unknown>, finish: string) => ({
  id: 'zp-1', request_id: 'r-1', created: 1700000000, model: 'glm-4-plus', object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: ZHIPU_USAGE
})

/** The chat side of Zhipu's protocol (OpenAI's, usage in the last chunk). */
export const zhipuChat = (checkBody: NativeChat['checkBody']): NativeChat => ({
  path: () => '/api/paas/v4/chat/completions',
  answer: zhipuAnswer({ content: 'Hello there' }, 'stop'),
  stream: () => chunk({ role: 'assistant', content: '' }, null) + chunk({ content: 'Héllo, ' }, null) + chunk({ content: 'wörld 你好 🎉' }, null) +
    chunk({}, 'stop', { usage: ZHIPU_USAGE }) + 'data: [DONE]\n\n',
  tools: {
    answer: zhipuAnswer({ content: null, tool_calls: [{ id: 'call_1', type: 'function', index: 0, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, 'tool_calls'),
    stream: () => chunk({ role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', index: 0, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, null) +
      chunk({}, 'tool_calls', { usage: ZHIPU_USAGE }) + 'data: [DONE]\n\n'
  },
  checkBody
})

/** Zhipu's error answers: the business code decides (an account in arrears is refused with 429). */
export const ZHIPU_ERRORS: NativeProtocol['errors'] = [
  { what: '401 token invalid', status: 401, body: zhipuError('1002', 'Authorization Token非法，请确认Authorization Token正确传递。'), action: 'disable', code: '1002' },
  { what: '401 token expired', status: 401, body: zhipuError('1003', 'Authorization Token已过期'), action: 'disable', code: '1003' },
  { what: '429 in arrears', status: 429, body: zhipuError('1113', '您的账户已欠费，请充值后重试。'), action: 'disable', code: '1113' },
  { what: '429 too many concurrent', status: 429, body: zhipuError('1302', '您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。'), action: 'retry', code: '1302' },
  { what: '429 rate limit', status: 429, body: zhipuError('1303', '您当前使用该API的频率过高，请降低频率，或联系客服增加限额。'), action: 'retry', code: '1303' },
  { what: '429 overloaded', status: 429, body: zhipuError('1305', '当前API请求过多，请稍后重试。'), action: 'retry', code: '1305' },
  { what: '400 unsafe content', status: 400, body: zhipuError('1301', '系统检测到输入或生成内容可能包含不安全或敏感内容'), action: 'client', code: '1301' },
  { what: '400 unknown model', status: 400, body: zhipuError('1211', '模型不存在，请检查模型代码。'), action: 'client', code: '1211' },
  { what: '400 bad parameter', status: 400, body: zhipuError('1214', 'messages 参数非法。'), action: 'client', code: '1214' },
  { what: '500 internal', status: 500, body: zhipuError('500', '内部错误'), action: 'retry', code: '500' }
]
