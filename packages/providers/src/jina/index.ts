import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, UpstreamRequest } from '../core/adaptor.js'
import { bearerHeaders, openAIUrl, requestPayload, resolveBaseUrl } from '../openai-compatible/api.js'
import { parseOpenAIModels } from '../openai-compatible/models.js'
import { createOpenAIStream } from '../openai-compatible/stream.js'
import { readUsage, usageConverter } from '../openai-compatible/usage.js'
import { servesOnly } from '../core/served.js'
import { convertFloatEmbeddings, jinaEmbeddingsBody } from './embeddings.js'
import { classifyJinaFailure } from './errors.js'


const NAME = 'Jina'

/** Used when the channel has no base URL. */
const JINA_BASE_URL = 'https://api.jina.ai'

/** Jina's current embedding and reranking models (an admin can add any other by name). */
const JINA_MODELS: readonly string[] = [
  'jina-embeddings-v5-text-small',
  'jina-embeddings-v5-text-nano',
  'jina-embeddings-v4',
  'jina-embeddings-v3',
  'jina-clip-v2',
  'jina-reranker-v3',
  'jina-reranker-m0',
  'jina-reranker-v2-base-multilingual'
]

type JinaEndpoint = 'embeddings' | 'rerank'

const { supports, endpointOf } = servesOnly<JinaEndpoint>(NAME, { openai: ['embeddings', 'rerank'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  const endpoint = endpointOf(req)
  const payload = endpoint === 'embeddings' ? jinaEmbeddingsBody(req) : requestPayload(req)
  return {
    method: 'POST',
    url: openAIUrl(resolveBaseUrl(channel, JINA_BASE_URL), endpoint),
    headers: { ...bearerHeaders(channel), 'Content-Type': payload.contentType },
    body: payload.body
  }
}

/** Rerank answers (`{model, usage: {total_tokens}, results: [{index, relevance_score, document?}]}`) go through unchanged. */
const convertRerank = usageConverter((json) => readUsage(json.usage))

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return endpointOf(req) === 'embeddings' ? convertFloatEmbeddings(req, status, contentType, body) : convertRerank(req, status, contentType, body)
}

/** A rerank of one document for rerankers, else an embedding of one word: the cheapest proof that the channel serves `model`. */
function jinaTestRequest (model: string): RelayRequest {
  const base = { format: 'openai', model, stream: false } as const
  if (/rerank/i.test(model)) return { ...base, endpoint: 'rerank', body: { model, query: 'hi', documents: ['hi'], top_n: 1 } }
  return { ...base, endpoint: 'embeddings', body: { model, input: ['hi'] } }
}

/**
 * Type 38: Jina AI's embeddings and reranking API (api.jina.ai, Bearer key). No chat.
 * Embeddings keep Jina's own fields (task, dimensions, late_chunking, ...) and answer in
 * OpenAI's shape, base64 vectors included; reranking answers in Jina's shape, which is the
 * gateway's. Usage is Jina's token count.
 */
export const jina: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.jina,
  name: NAME,
  defaultBaseUrl: JINA_BASE_URL,
  defaultModels: Object.freeze([...JINA_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  // Jina does not stream; a stream flag on an embeddings body changes nothing.
  createStream: () => createOpenAIStream(),
  classifyFailure: classifyJinaFailure,
  listModelsRequest: () => undefined,
  parseModels: parseOpenAIModels,
  testRequest: (_channel: ChannelConfig, model: string) => jinaTestRequest(model)
} satisfies ProviderAdaptor)
