import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { anthropicToChatRequest, chatStreamToAnthropic, chatToAnthropicResponse } from '../inbound/anthropic/index.js'
import { claudeChatBody, claudePassThroughBody, convertClaudeChat, convertClaudePassThrough, createClaudeChatStream, createClaudePassThroughStream } from '../claude/index.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { convertGeminiChat, convertGeminiPassThrough, createGeminiChatStream, createGeminiPassThroughStream, geminiChatBody, geminiPassThroughBody } from '../gemini/index.js'
import { chatStreamToGemini, chatToGeminiResponse, geminiToChatRequest } from '../inbound/gemini/index.js'
import { isRecord, parseJson } from '../core/json.js'
import { servesOnly } from '../core/served.js'
import { isClaudeModel, serviceAccount, VERTEX_GLOBAL_BASE_URL, vertexUrl } from './api.js'
import { authorizeVertex } from './auth.js'
import { classifyVertexFailure } from './errors.js'
import { VERTEX_MODELS, vertexTestRequest } from './models.js'

export { serviceAccount, vertexClaudeName, vertexRegion } from './api.js'
export { vertexAssertion } from './auth.js'

const NAME = 'Vertex AI'

/** The `anthropic_version` Vertex wants in the body of Anthropic models. */
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'

/**
 * `supports` is asked without a model, and one Vertex channel serves both families: OpenAI chat
 * clients, Anthropic clients and Gemini clients are all served. A client whose protocol is the
 * model's own (Anthropic for Claude, Gemini for Gemini) passes through; any other is converted
 * through OpenAI chat here, as the gateway converts for channels that speak only that.
 */
const { supports, checked } = servesOnly(NAME, { openai: ['chat'], anthropic: ['messages'], gemini: ['generate_content'] })

/** Whether the client speaks the model's own protocol (its body is sent as written). */
function native (req: RelayRequest): boolean {
  return isClaudeModel(req.model) ? req.format === 'anthropic' : req.format === 'gemini'
}

/** The OpenAI chat request a client's request becomes for a model of the other family. */
function chatRequest (req: RelayRequest): RelayRequest {
  if (req.format === 'openai') return req
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, `a ${req.endpoint} request needs a JSON body`)
  const body = req.format === 'anthropic' ? anthropicToChatRequest(req.body) : geminiToChatRequest(req.body, req.model, req.stream)
  return { endpoint: 'chat', format: 'openai', model: req.model, stream: req.stream, body, ...(req.headers === undefined ? {} : { headers: req.headers }) }
}

/** The OpenAI chat request an answer for a converted client is read as (only its model and stream matter). */
function answerRequest (req: RelayRequest): RelayRequest {
  return req.format === 'openai' ? req : { endpoint: 'chat', format: 'openai', model: req.model, stream: req.stream, body: {} }
}

/** The client's `anthropic-beta` header (any case). */
function betaHeader (req: RelayRequest): string | undefined {
  for (const [name, value] of Object.entries(req.headers ?? {})) if (name.toLowerCase() === 'anthropic-beta' && value.trim() !== '') return value
  return undefined
}

/**
 * Anthropic's Messages body as Vertex's rawPredict takes it: without `model` (it is in the URL),
 * with `anthropic_version: vertex-2023-10-16`, `stream: true` for streamRawPredict.
 */
function claudeBody (req: RelayRequest): Record<string, unknown> {
  const body = native(req) ? claudePassThroughBody(req) : claudeChatBody(chatRequest(req))
  delete body.model
  delete body.anthropic_version
  if (req.stream) body.stream = true
  else delete body.stream
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body }
}

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const account = serviceAccount(channel)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  let body: Record<string, unknown>
  if (isClaudeModel(req.model)) {
    body = claudeBody(req)
    const beta = betaHeader(req)
    if (beta !== undefined) headers['anthropic-beta'] = beta
  } else {
    body = native(req) ? geminiPassThroughBody(channel, req) : geminiChatBody(channel, chatRequest(req))
  }
  return { method: 'POST', url: vertexUrl(channel, account, req.model, req.stream), headers, body: JSON.stringify(body) }
}

/** An OpenAI chat answer reshaped for the client's protocol. */
function reshaped (chat: ConvertedResponse, req: RelayRequest): ConvertedResponse {
  if (req.format === 'openai') return chat
  const answer = parseJson(Buffer.isBuffer(chat.body) ? chat.body.toString('utf8') : chat.body)
  if (!isRecord(answer)) return chat
  const body = req.format === 'anthropic' ? chatToAnthropicResponse(answer, req.model) : chatToGeminiResponse(answer, req.model)
  return { ...chat, contentType: 'application/json', body: JSON.stringify(body) }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  checked(req)
  const claude = isClaudeModel(req.model)
  if (native(req)) return claude ? convertClaudePassThrough(req, status, contentType, body) : convertGeminiPassThrough(req, status, contentType, body)
  const chat = claude ? convertClaudeChat(answerRequest(req), status, contentType, body) : convertGeminiChat(answerRequest(req), status, contentType, body)
  return reshaped(chat, req)
}

/** `inner` (the model's stream as OpenAI chat chunks) followed by `outer`, which turns them into the client's protocol. */
function chained (inner: StreamConverter, outer: StreamConverter): StreamConverter {
  return {
    push: (chunk) => outer.push(inner.push(chunk)),
    end: () => {
      const rest = outer.push(inner.end())
      const last = outer.end()
      return rest.length === 0 ? last : last.length === 0 ? rest : Buffer.concat([rest, last])
    },
    usage: () => inner.usage() ?? outer.usage(),
    takeText: () => inner.takeText(),
    untakenBytes: () => inner.untakenBytes(),
    finished: () => outer.finished()
  }
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  checked(req)
  const claude = isClaudeModel(req.model)
  if (native(req)) return claude ? createClaudePassThroughStream() : createGeminiPassThroughStream(req)
  const inner = claude ? createClaudeChatStream(answerRequest(req)) : createGeminiChatStream(answerRequest(req))
  if (req.format === 'openai') return inner
  return chained(inner, req.format === 'anthropic' ? chatStreamToAnthropic(req.model) : chatStreamToGemini(req.model, 'sse'))
}

/**
 * Type 41: Google Cloud Vertex AI, with a service account's JSON key (an RS256 assertion signed
 * with its private key, exchanged for an hour's access token, cached and renewed before expiry).
 * Gemini models go to `publishers/google/models/{model}:generateContent` (or
 * `:streamGenerateContent?alt=sse`) with Gemini's body; models whose name starts with `claude`
 * go to `publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict`) with Anthropic's
 * body and `anthropic_version: vertex-2023-10-16`, Anthropic's ids mapped to Vertex's `@` ids.
 * The region comes from the channel's `other` (a region, or regions by model with a default;
 * `global` when empty); a base URL replaces the regional host. OpenAI chat clients are converted
 * with the Claude and Gemini adaptors' converters; Anthropic clients of Claude models and Gemini
 * clients of Gemini models pass through; the other pairs are converted through OpenAI chat. Vertex
 * has no list of the publisher models a project may call: no model list.
 */
export const vertexAI: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.vertex,
  name: NAME,
  defaultBaseUrl: VERTEX_GLOBAL_BASE_URL,
  defaultModels: Object.freeze([...VERTEX_MODELS]),
  supports,
  buildRequest,
  authorize: authorizeVertex,
  convertResponse,
  createStream,
  classifyFailure: classifyVertexFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [],
  testRequest: (_channel: ChannelConfig, model: string) => vertexTestRequest(model)
} satisfies ProviderAdaptor)
