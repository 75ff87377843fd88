import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClientFormat, ConvertedResponse, Endpoint, ProviderAdaptor, RelayRequest } from '../core/adaptor.js'
import { isRecord, parseJson } from '../core/json.js'
import { openAICompatible, type UrlContext } from '../openai-compatible/index.js'
import { base64Embeddings } from '../core/openai-shapes.js'
import { authorizeZhipu, ZHIPU_BASE_URL, zhipuUrlFor } from './api.js'
import { classifyZhipuFailure } from './errors.js'

export { ZHIPU_TOKEN_TTL_MS } from './api.js'

/** What sets one Zhipu channel type apart: its endpoints and models, and how a request is adjusted. */
interface ZhipuOptions {
  type: number
  name: string
  defaultModels: readonly string[]
  /** The OpenAI endpoints served (chat, embeddings). */
  endpoints: ReadonlySet<Endpoint & UrlContext['target']>
  /** Changes a request before it is built (GLM-4V's images). */
  adjust?: (req: RelayRequest) => RelayRequest
}

/** An embeddings request without `encoding_format`, which Zhipu does not take (base64 is made here, see encodedEmbeddings). */
function withoutEncodingFormat (req: RelayRequest): RelayRequest {
  if (req.endpoint !== 'embeddings' || req.body?.encoding_format === undefined) return req
  const { encoding_format: _dropped, ...body } = req.body
  return { ...req, body }
}

/**
 * The embeddings answer with its vectors in OpenAI's base64 encoding when the client asked for it
 * (the OpenAI SDKs do by default, and decode what comes back); Zhipu answers floats.
 */
function encodedEmbeddings (req: RelayRequest, converted: ConvertedResponse): ConvertedResponse {
  if (req.endpoint !== 'embeddings' || req.body?.encoding_format !== 'base64') return converted
  const json = parseJson(Buffer.isBuffer(converted.body) ? converted.body.toString('utf8') : converted.body)
  if (!isRecord(json) || !Array.isArray(json.data)) return converted
  return { ...converted, contentType: 'application/json', body: JSON.stringify({ ...json, data: base64Embeddings(json.data) }) }
}

/**
 * A Zhipu (BigModel) channel type: the OpenAI-compatible v4 API (`/api/paas/v4/...`, answers and
 * streams read as OpenAI's, usage included in the last chunk of a stream), authorized by a JWT
 * made from the `id.secret` key, errors classified by Zhipu's business codes. Zhipu has no
 * model list.
 */
export function zhipuAdaptor (options: ZhipuOptions): ProviderAdaptor {
  const base = openAICompatible({
    type: options.type,
    name: options.name,
    defaultBaseUrl: ZHIPU_BASE_URL,
    defaultModels: options.defaultModels,
    urlFor: zhipuUrlFor(options.endpoints),
    // authorize adds the JWT (unless a header override set an Authorization header).
    headersFor: () => ({}),
    // Zhipu reports usage in a stream's last chunk unasked.
    streamUsage: 'strip'
  })
  const adjust = options.adjust ?? ((req: RelayRequest) => req)
  return Object.freeze({
    ...base,
    supports: (endpoint: Endpoint, format: ClientFormat) => format === 'openai' && (options.endpoints as ReadonlySet<Endpoint>).has(endpoint),
    buildRequest: (channel: ChannelConfig, req: RelayRequest) => base.buildRequest(channel, adjust(withoutEncodingFormat(req))),
    convertResponse: (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer) =>
      encodedEmbeddings(req, base.convertResponse(channel, req, status, contentType, body)),
    authorize: authorizeZhipu,
    classifyFailure: classifyZhipuFailure
  } satisfies ProviderAdaptor)
}

/** ChatGLM's current models (GLM-4.6, 4.5, the GLM-4 series) and its embedding models. */
const CHATGLM_MODELS: readonly string[] = [
  'glm-4.6',
  'glm-4.5',
  'glm-4.5-air',
  'glm-4.5-flash',
  'glm-4-plus',
  'glm-4-air',
  'glm-4-air-250414',
  'glm-4-airx',
  'glm-4-flash',
  'glm-4-flash-250414',
  'glm-4-long',
  'embedding-3',
  'embedding-2'
]

/** Type 16: Zhipu's ChatGLM models (chat completions and embeddings). */
export const chatGLM = zhipuAdaptor({
  type: CHANNEL_TYPE.chatglm,
  name: 'ChatGLM',
  defaultModels: CHATGLM_MODELS,
  endpoints: new Set(['chat', 'embeddings'] as const)
})
