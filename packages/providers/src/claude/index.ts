import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { parseOpenAIModels } from '../openai-compatible/models.js'
import { servesOnly } from '../core/served.js'
import { CLAUDE_BASE_URL, CLAUDE_MESSAGES_PATH, CLAUDE_MODELS_PATH, claudeHeaders, claudeUrl } from './api.js'
import { classifyClaudeFailure } from './errors.js'
import { CLAUDE_MODELS, claudeTestRequest } from './models.js'
import { claudeChatBody, claudePassThroughBody } from './request.js'
import { convertClaudeChat, convertClaudePassThrough } from './response.js'
import { createClaudeChatStream, createClaudePassThroughStream } from './stream.js'

// Building blocks for the channel types that speak Anthropic's Messages API behind another
// endpoint or framing (AWS Claude, Vertex AI).
export { CLAUDE_BASE_URL, claudeHeaders, claudeUrl } from './api.js'
export { classifyClaudeFailure } from './errors.js'
export { CLAUDE_MODELS, claudeTestRequest } from './models.js'
export { claudeChatBody, claudePassThroughBody } from './request.js'
export { claudeUsage, convertClaudeChat, convertClaudePassThrough, readClaudeTokens, type ClaudeTokens } from './response.js'
export { claudeChatEvents, createClaudeChatStream, createClaudePassThroughStream } from './stream.js'
export { sseReader } from './sse.js'

const NAME = 'Claude'

/** Whether `req` is an Anthropic client's own messages request (sent through as written). */
function passThrough (req: RelayRequest): boolean {
  return req.endpoint === 'messages' && req.format === 'anthropic'
}

const { supports, checked } = servesOnly(NAME, { openai: ['chat'], anthropic: ['messages'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const body = passThrough(req) ? claudePassThroughBody(req) : claudeChatBody(req)
  return {
    method: 'POST',
    url: claudeUrl(resolveBaseUrl(channel, CLAUDE_BASE_URL), CLAUDE_MESSAGES_PATH),
    headers: claudeHeaders(channel, req),
    body: JSON.stringify(body)
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return passThrough(checked(req)) ? convertClaudePassThrough(req, status, contentType, body) : convertClaudeChat(req, status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return passThrough(checked(req)) ? createClaudePassThroughStream() : createClaudeChatStream(req)
}

/**
 * Type 14: Anthropic's Messages API (api.anthropic.com, or a base URL speaking it). OpenAI chat
 * clients are converted both ways (messages, images, tools, thinking, stop reasons, usage with
 * prompt-cache reads and writes), streams included; Anthropic clients' messages requests pass
 * through with only `model` replaced and their `anthropic-beta` / `anthropic-version` headers
 * forwarded.
 */
export const claude: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.claude,
  name: NAME,
  defaultBaseUrl: CLAUDE_BASE_URL,
  defaultModels: Object.freeze([...CLAUDE_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  createStream,
  classifyFailure: classifyClaudeFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({
    method: 'GET',
    url: claudeUrl(resolveBaseUrl(channel, CLAUDE_BASE_URL), CLAUDE_MODELS_PATH),
    headers: claudeHeaders(channel)
  }),
  parseModels: parseOpenAIModels,
  testRequest: (_channel: ChannelConfig, model: string) => claudeTestRequest(model)
} satisfies ProviderAdaptor)
