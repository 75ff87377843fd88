import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { parseOpenAIModels } from '../openai-compatible/models.js'
import { servesOnly } from '../core/served.js'
import { DASHSCOPE_BASE_URL, DASHSCOPE_EMBEDDINGS_PATH, DASHSCOPE_MODELS_PATH, DASHSCOPE_MULTIMODAL_PATH, DASHSCOPE_TEXT_PATH, dashscopeHeaders, dashscopeUrl } from './api.js'
import { classifyDashScopeFailure } from './errors.js'
import { DASHSCOPE_MODELS, dashscopeTestRequest } from './models.js'
import { dashscopeChatBody, dashscopeEmbeddingsBody, isMultimodal } from './request.js'
import { convertDashScopeChat, convertDashScopeEmbeddings } from './response.js'
import { createDashScopeChatStream } from './stream.js'

export { classifyDashScopeFailure, readDashScopeError } from './errors.js'
export { isMultimodal } from './request.js'
export { convertDashScopeChat } from './response.js'

const NAME = 'Alibaba'

const { supports, checked } = servesOnly(NAME, { openai: ['chat', 'embeddings'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const base = resolveBaseUrl(channel, DASHSCOPE_BASE_URL)
  if (req.endpoint === 'embeddings') {
    return { method: 'POST', url: dashscopeUrl(base, DASHSCOPE_EMBEDDINGS_PATH), headers: dashscopeHeaders(channel, true), body: JSON.stringify(dashscopeEmbeddingsBody(req)) }
  }
  const path = isMultimodal(req) ? DASHSCOPE_MULTIMODAL_PATH : DASHSCOPE_TEXT_PATH
  return { method: 'POST', url: dashscopeUrl(base, path), headers: dashscopeHeaders(channel, true, req.stream), body: JSON.stringify(dashscopeChatBody(req)) }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return checked(req).endpoint === 'embeddings' ? convertDashScopeEmbeddings(req, status, contentType, body) : convertDashScopeChat(req, status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return createDashScopeChatStream(checked(req))
}

/**
 * Type 17: Alibaba Cloud Model Studio's DashScope API (dashscope.aliyuncs.com, `Authorization:
 * Bearer <API key>`). OpenAI chat clients are converted to text-generation, or to
 * multimodal-generation for vision, QVQ, Omni and audio models and for messages with images
 * (messages, tools and tool calls, Qwen's thinking and search switches, finish reasons, usage
 * with cached, cache-write and reasoning tokens), streams included (`X-DashScope-SSE: enable`,
 * incremental output); OpenAI embeddings go to text-embedding. The model list comes from
 * DashScope's OpenAI-compatible mode. A base URL of another region (dashscope-intl.aliyuncs.com,
 * a workspace endpoint) replaces the default.
 */
export const alibaba: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.alibaba,
  name: NAME,
  defaultBaseUrl: DASHSCOPE_BASE_URL,
  defaultModels: Object.freeze([...DASHSCOPE_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  createStream,
  classifyFailure: classifyDashScopeFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({
    method: 'GET',
    url: dashscopeUrl(resolveBaseUrl(channel, DASHSCOPE_BASE_URL), DASHSCOPE_MODELS_PATH),
    headers: dashscopeHeaders(channel, false)
  }),
  parseModels: parseOpenAIModels,
  testRequest: (_channel: ChannelConfig, model: string) => dashscopeTestRequest(model)
} satisfies ProviderAdaptor)
