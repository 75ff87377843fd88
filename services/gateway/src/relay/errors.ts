import type { FastifyReply, FastifyRequest } from 'fastify'

/** Relay messages in both languages; API clients get English unless they prefer Chinese. */
export const RM = {
  noKey: { en: 'No API key provided. Send it as "Authorization: Bearer sk-...".', zh: '未提供令牌，请在 Authorization 头中以 Bearer sk-... 的形式提供' },
  invalidKey: { en: 'Invalid API key', zh: '无效的令牌' },
  tokenDisabled: { en: 'This API key has been disabled', zh: '该令牌已被禁用' },
  tokenExpired: { en: 'This API key has expired', zh: '该令牌已过期' },
  tokenExhausted: { en: 'This API key has used up its quota', zh: '该令牌额度已用尽' },
  ipNotAllowed: { en: 'Requests from your IP address are not allowed for this API key', zh: '您的 IP 不在该令牌的允许列表中' },
  modelNotAllowed: { en: 'This API key may not use the model {model}', zh: '该令牌无权使用模型 {model}' },
  userBanned: { en: 'The user of this API key has been banned', zh: '用户已被封禁' },
  userDeleted: { en: 'The user of this API key no longer exists', zh: '用户不存在' },
  groupNotAllowed: { en: 'The group {group} is not available to this user', zh: '用户无权使用分组 {group}' },
  pinNotAllowed: { en: 'Only administrators may choose a channel', zh: '普通用户不支持指定渠道' },
  invalidChannelId: { en: 'Invalid channel ID', zh: '无效的渠道 ID' },
  channelDisabled: { en: 'The chosen channel is disabled', zh: '该渠道已被禁用' },
  modelRequired: { en: 'The model field is required', zh: '缺少 model 字段' },
  invalidJson: { en: 'The request body is not valid JSON: {detail}', zh: '请求体不是合法的 JSON：{detail}' },
  bodyNotObject: { en: 'The request body must be a JSON object', zh: '请求体必须是 JSON 对象' },
  noChannel: { en: 'No available channel for model {model} under group {group}', zh: '当前分组 {group} 下对于模型 {model} 无可用渠道' },
  modelNotFound: { en: 'The model {model} does not exist or is not available in group {group}', zh: '分组 {group} 下不存在模型 {model}' },
  notPriced: { en: 'Model {model} has no price set; ask the administrator to set its ratio or price', zh: '模型 {model} 未设置倍率或价格，请联系管理员设置' },
  userQuota: { en: 'Insufficient user quota', zh: '用户额度不足' },
  tokenQuota: { en: 'Insufficient API key quota', zh: '令牌额度不足' },
  noEntitlement: { en: 'No active subscription covers model {model}, or its allowance is used up (your billing preference uses subscriptions only)', zh: '没有可用于模型 {model} 的有效订阅，或其额度已用尽（当前计费偏好为仅使用订阅）' },
  redisDown: { en: 'The gateway cannot reach its quota store; please retry shortly', zh: '网关暂时无法访问额度存储，请稍后重试' },
  // A channel's own failure: the upstream's words are for admins only (the log's admin_info),
  // the request id lets an admin find them; the gateway's own reason (a timeout) may be said.
  upstreamFailed: { en: 'The upstream provider failed to answer (request id: {requestId})', zh: '上游服务未能正常应答（请求 ID：{requestId}）' },
  upstreamFailedBecause: { en: 'The upstream provider failed to answer: {detail} (request id: {requestId})', zh: '上游服务未能正常应答：{detail}（请求 ID：{requestId}）' },
  upstreamRateLimited: { en: 'The upstream provider is rate limited; please retry later (request id: {requestId})', zh: '上游服务限流，请稍后重试（请求 ID：{requestId}）' },
  streamInterrupted: { en: 'The upstream stream ended unexpectedly', zh: '上游数据流意外中断' },
  sensitive: { en: 'The prompt contains sensitive words', zh: '提示词包含敏感词' },
  loadSaturated: { en: 'The upstream load of group {group} is saturated; please retry later', zh: '当前分组 {group} 上游负载已饱和，请稍后再试' },
  tokenBusy: { en: 'This API key already has {limit} requests in flight; please wait for one to finish', zh: '该令牌同时进行的请求已达上限 {limit}，请等待其中之一完成' },
  tokenRpm: { en: 'This API key may make {limit} requests per minute; retry in {seconds} s', zh: '该令牌每分钟最多请求 {limit} 次，请 {seconds} 秒后重试' },
  tokenTpm: { en: 'This API key may use {limit} tokens per minute; retry in {seconds} s', zh: '该令牌每分钟最多使用 {limit} 个 token，请 {seconds} 秒后重试' },
  promptTooLong: { en: 'The prompt (about {tokens} tokens) is longer than any channel for model {model} accepts (at most {max})', zh: '提示词（约 {tokens} 个 token）超过了模型 {model} 所有渠道的输入上限（最多 {max}）' },
  rateLimited: { en: 'Too many requests, please slow down', zh: '请求过于频繁，请稍后再试' },
  userRateLimited: { en: 'You have reached the limit of {count} requests in {minutes} minutes; please wait', zh: '您已达到请求数限制：{minutes} 分钟内最多请求 {count} 次' },
  notLoggedIn: { en: 'Not logged in, or the login has expired', zh: '未登录或登录已过期' }
} as const

export type RelayMessage = { en: string, zh: string }

/** A refusal of the relay, sent in OpenAI's error envelope. */
export class RelayError extends Error {
  readonly status: number
  readonly type: string
  readonly code: string | null
  readonly msg?: RelayMessage
  readonly vars: Record<string, string>
  /** Response headers of the refusal (Retry-After). */
  headers?: Record<string, string>

  constructor (status: number, type: string, code: string | null, msg: RelayMessage | string, vars: Record<string, string> = {}) {
    super(typeof msg === 'string' ? msg : msg.en)
    this.status = status
    this.type = type
    this.code = code
    if (typeof msg !== 'string') this.msg = msg
    this.vars = vars
    // Every 429 says when to come back; refusals that know better set their own.
    if (status === 429) this.headers = { 'retry-after': '1' }
  }
}

function prefersChinese (req: FastifyRequest): boolean {
  const lang = req.headers['accept-language']
  return typeof lang === 'string' && /^\s*zh/i.test(lang)
}

/** `text` with the error's variables filled in; `{requestId}` is the request's id unless the error names one. */
function filled (text: string, err: RelayError, requestId: string): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => err.vars[name] ?? (name === 'requestId' ? requestId : whole))
}

export function relayMessage (req: FastifyRequest, err: RelayError): string {
  if (err.msg === undefined) return err.message
  return filled(prefersChinese(req) ? err.msg.zh : err.msg.en, err, req.id)
}

/** What the client of request `requestId` was told, in English: the message its log keeps. */
export function englishMessage (err: RelayError, requestId: string): string {
  return filled(err.msg?.en ?? err.message, err, requestId)
}

/** An error in the OpenAI wire format, which OpenAI SDKs parse and surface to the caller. */
export function sendOpenAIError (
  reply: FastifyReply,
  status: number,
  error: { message: string, type: string, code: string | null, param?: string | null }
): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8')
    .send({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } })
}

/** Unknown relay path: the same answer OpenAI gives for an endpoint it does not have. */
export async function unknownRelayPath (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const path = req.url.split('?')[0] ?? req.url
  return sendOpenAIError(reply, 404, {
    message: `Invalid URL (${req.method} ${path})`,
    type: 'invalid_request_error',
    code: 'unknown_url'
  })
}
