import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { chatTestRequest } from '../openai-compatible/probe.js'
import { servesOnly } from '../core/served.js'
import { authorizeBaidu, BAIDU_BASE_URL, baiduUrl, isBaiduEmbeddingModel } from './api.js'
import { classifyBaiduFailure } from './errors.js'
import { baiduEmbeddingsBody, ernieChatBody } from './request.js'
import { convertBaiduEmbeddings, convertErnieChat } from './response.js'
import { createErnieStream } from './stream.js'


const NAME = 'Baidu'

/**
 * Models offered when a channel is created: the ERNIE 4.0, 3.5, Speed, Lite and Tiny services of
 * the Wenxin Workshop API, and its embedding models.
 */
const BAIDU_MODELS: readonly string[] = [
  'ERNIE-4.0-8K',
  'ERNIE-4.0-Turbo-8K',
  'ERNIE-4.0-Turbo-128K',
  'ERNIE-3.5-8K',
  'ERNIE-3.5-128K',
  'ERNIE-Speed-8K',
  'ERNIE-Speed-128K',
  'ERNIE-Speed-Pro-128K',
  'ERNIE-Lite-8K',
  'ERNIE-Lite-Pro-128K',
  'ERNIE-Tiny-8K',
  'ERNIE-Character-8K',
  'Embedding-V1',
  'bge-large-zh',
  'bge-large-en',
  'tao-8k'
]

const { supports, checked, endpointOf } = servesOnly(NAME, { openai: ['chat', 'embeddings'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  const endpoint = endpointOf(req)
  const body = endpoint === 'chat' ? ernieChatBody(req) : baiduEmbeddingsBody(req)
  return { method: 'POST', url: baiduUrl(channel, endpoint, req.model), headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
}

function convertResponse (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return endpointOf(req) === 'chat'
    ? convertErnieChat(channel, req, status, contentType, body)
    : convertBaiduEmbeddings(channel, req, status, contentType, body)
}

function createStream (channel: ChannelConfig, req: RelayRequest): StreamConverter {
  checked(req)
  return createErnieStream(channel, req)
}

/**
 * Type 15: Baidu's ERNIE models through the Wenxin Workshop API (aip.baidubce.com). The key is
 * `API_KEY|SECRET_KEY`, exchanged for an access token (cached until it expires) that every
 * request carries in its URL. OpenAI chat clients are converted both ways (system prompt, turns,
 * function calling, sampling, usage), streams included; embeddings too. Baidu reports errors
 * with HTTP 200: they come back as failures (ConvertedResponse.failure). Baidu has no model list.
 */
export const baidu: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.baidu,
  name: NAME,
  defaultBaseUrl: BAIDU_BASE_URL,
  defaultModels: Object.freeze([...BAIDU_MODELS]),
  supports,
  buildRequest,
  authorize: authorizeBaidu,
  convertResponse,
  createStream,
  classifyFailure: classifyBaiduFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [],
  testRequest: (_channel: ChannelConfig, model: string): RelayRequest => isBaiduEmbeddingModel(model)
    ? { endpoint: 'embeddings', format: 'openai', model, stream: false, body: { model, input: ['hi'] } }
    : chatTestRequest(model)
} satisfies ProviderAdaptor)
