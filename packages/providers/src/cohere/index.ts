import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { openAITestRequest } from '../openai-compatible/probe.js'
import { createOpenAIStream } from '../openai-compatible/stream.js'
import { servesOnly } from '../core/served.js'
import { COHERE_BASE_URL, COHERE_MODELS_PATH, COHERE_PATHS, cohereHeaders, cohereUrl } from './api.js'
import { classifyCohereFailure } from './errors.js'
import { COHERE_MODELS, parseCohereModels } from './models.js'
import { cohereChatBody, cohereEmbedBody, cohereRerankBody } from './request.js'
import { convertCohereChat, convertCohereEmbed, convertCohereRerank } from './response.js'
import { createCohereChatStream } from './stream.js'


const NAME = 'Cohere'

type CohereEndpoint = keyof typeof COHERE_PATHS

const { supports, endpointOf } = servesOnly<CohereEndpoint>(NAME, { openai: ['chat', 'embeddings', 'rerank'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  const endpoint = endpointOf(req)
  const body = endpoint === 'chat' ? cohereChatBody(req) : endpoint === 'embeddings' ? cohereEmbedBody(req) : cohereRerankBody(req)
  return {
    method: 'POST',
    url: cohereUrl(resolveBaseUrl(channel, COHERE_BASE_URL), COHERE_PATHS[endpoint]),
    headers: cohereHeaders(channel, true),
    body: JSON.stringify(body)
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const endpoint = endpointOf(req)
  if (endpoint === 'chat') return convertCohereChat(req, status, contentType, body)
  return endpoint === 'embeddings' ? convertCohereEmbed(req, status, contentType, body) : convertCohereRerank(req, status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  // Only chat streams; an embeddings or rerank body with a stream flag gets a JSON answer.
  return endpointOf(req) === 'chat' ? createCohereChatStream(req) : createOpenAIStream()
}

/**
 * Type 34: Cohere's API v2 (api.cohere.com, Bearer key). OpenAI chat clients are converted both
 * ways (messages, images, tools, thinking, JSON output, finish reasons, usage from the billed
 * units), streams included; embeddings go to `/v2/embed` and answer in OpenAI's shape (base64
 * vectors included); rerank goes to `/v2/rerank` and answers in Cohere's shape, which is the
 * gateway's, billed by search unit.
 */
export const cohere: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.cohere,
  name: NAME,
  defaultBaseUrl: COHERE_BASE_URL,
  defaultModels: Object.freeze([...COHERE_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  createStream,
  classifyFailure: classifyCohereFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({
    method: 'GET',
    url: cohereUrl(resolveBaseUrl(channel, COHERE_BASE_URL), COHERE_MODELS_PATH),
    headers: cohereHeaders(channel)
  }),
  parseModels: parseCohereModels,
  // A rerank for rerankers, an embedding for embedding models, else a 16-token chat.
  testRequest: (_channel: ChannelConfig, model: string) => openAITestRequest(model)
} satisfies ProviderAdaptor)
