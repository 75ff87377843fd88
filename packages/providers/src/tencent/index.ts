import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { servesOnly } from '../core/served.js'
import { HUNYUAN_BASE_URL, hunyuanHeaders, hunyuanUrl, signHunyuan } from './api.js'
import { classifyTencentFailure } from './errors.js'
import { HUNYUAN_MODELS, hunyuanTestRequest } from './models.js'
import { hunyuanChatBody, hunyuanEmbeddingsBody } from './request.js'
import { convertHunyuanChat, convertHunyuanEmbeddings } from './response.js'
import { createHunyuanChatStream } from './stream.js'

export { hunyuanCredentials, signHunyuan } from './api.js'
export { classifyTencentFailure } from './errors.js'
export { tc3Sign } from './sign.js'

const NAME = 'Tencent'

const { supports, checked } = servesOnly(NAME, { openai: ['chat', 'embeddings'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const embeddings = req.endpoint === 'embeddings'
  return {
    method: 'POST',
    url: hunyuanUrl(resolveBaseUrl(channel, HUNYUAN_BASE_URL)),
    headers: hunyuanHeaders(channel, embeddings ? 'GetEmbedding' : 'ChatCompletions'),
    body: JSON.stringify(embeddings ? hunyuanEmbeddingsBody(req) : hunyuanChatBody(req))
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return checked(req).endpoint === 'embeddings' ? convertHunyuanEmbeddings(req, status, contentType, body) : convertHunyuanChat(req, status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return createHunyuanChatStream(checked(req))
}

/**
 * Type 23: Tencent Hunyuan through Tencent Cloud API 3.0 (hunyuan.tencentcloudapi.com, version
 * 2023-09-01), signed with TC3-HMAC-SHA256 from the key `SecretId|SecretKey` (or
 * `AppId|SecretId|SecretKey`) over the final body, region from `other` (optional). OpenAI chat
 * clients are converted to ChatCompletions (images as Contents, tools, tool calls, T1 reasoning,
 * finish reasons, usage), streams included; embeddings go to GetEmbedding. Tencent reports
 * errors with HTTP 200 (`Response.Error`): those are failures, classified by Tencent's codes.
 * Hunyuan has no model list.
 */
export const tencent: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.tencent,
  name: NAME,
  defaultBaseUrl: HUNYUAN_BASE_URL,
  defaultModels: Object.freeze([...HUNYUAN_MODELS]),
  supports,
  buildRequest,
  authorize: async (channel: ChannelConfig, up: UpstreamRequest) => signHunyuan(channel, up),
  convertResponse,
  createStream,
  classifyFailure: classifyTencentFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [],
  testRequest: (_channel: ChannelConfig, model: string) => hunyuanTestRequest(model)
} satisfies ProviderAdaptor)
