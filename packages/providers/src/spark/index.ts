import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { servesOnly } from '../core/served.js'
import { SPARK_BASE_URL, sparkChatUrl, sparkHeaders } from './api.js'
import { classifySparkFailure } from './errors.js'
import { SPARK_MODELS, sparkTestRequest } from './models.js'
import { sparkChatBody } from './request.js'
import { convertSparkChat } from './response.js'
import { createSparkChatStream } from './stream.js'

export { sparkBearer, sparkChatUrl, sparkVersion } from './api.js'
export { classifySparkFailure } from './errors.js'

const NAME = 'iFlytek (Spark)'

const { supports, checked } = servesOnly(NAME, { openai: ['chat'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  return {
    method: 'POST',
    url: sparkChatUrl(channel, resolveBaseUrl(channel, SPARK_BASE_URL), req.model),
    headers: sparkHeaders(channel),
    body: JSON.stringify(sparkChatBody(req))
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return convertSparkChat(checked(req), status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return createSparkChatStream(checked(req))
}

/**
 * Type 18: iFlytek's Spark HTTP API (spark-api-open.xf-yun.com, OpenAI-like: `/v1/chat/completions`,
 * `/v2/...` for X1), `Authorization: Bearer <APIPassword>` (or `APIKey:APISecret`; a key in the
 * old websocket form `APPID|APISecret|APIKey` is sent as its `APIKey:APISecret`). Chat only:
 * answers and streams are rewritten as well-formed OpenAI ones (Spark's chunks carry no
 * `object` nor, mostly, a finish reason), and the errors Spark reports with HTTP 200
 * (`{code, message, sid}`, code not 0) are failures, classified by Spark's codes. `other` may
 * name the API version path (`v1`, `v2`). Spark has no model list.
 */
export const spark: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.spark,
  name: NAME,
  defaultBaseUrl: SPARK_BASE_URL,
  defaultModels: Object.freeze([...SPARK_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  createStream,
  classifyFailure: classifySparkFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [],
  testRequest: (_channel: ChannelConfig, model: string) => sparkTestRequest(model)
} satisfies ProviderAdaptor)
