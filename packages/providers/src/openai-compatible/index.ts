import type { ChannelConfig, ClientFormat, Endpoint, ProviderAdaptor, RelayRequest, UpstreamRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { bearerHeaders, defaultUrlFor, resolveBaseUrl } from './api.js'
import { speechCapability, transcriptionCapability } from './audio.js'
import { chatCapability } from './chat.js'
import { embeddingsCapability } from './embeddings.js'
import { classifyOpenAIFailure } from './errors.js'
import { imagesCapability } from './images.js'
import { parseOpenAIModels } from './models.js'
import { moderationsCapability } from './moderations.js'
import { openAITestRequest } from './probe.js'
import { rerankCapability } from './rerank.js'
import { createOpenAIStream } from './stream.js'
import type { Capability, OpenAIEndpoint, StreamUsageMode, UrlContext } from './types.js'

export { bearerHeaders, openAIUrl } from './api.js'
export { classifyOpenAIFailure, openAIErrorBody } from './errors.js'
export type { OpenAIEndpoint, UrlContext, UrlTarget } from './types.js'

const CAPABILITIES: Readonly<Record<OpenAIEndpoint, Capability>> = {
  chat: chatCapability,
  completions: chatCapability,
  responses: chatCapability,
  embeddings: embeddingsCapability,
  images_generations: imagesCapability,
  images_edits: imagesCapability,
  audio_speech: speechCapability,
  audio_transcriptions: transcriptionCapability,
  audio_translations: transcriptionCapability,
  moderations: moderationsCapability,
  rerank: rerankCapability
}

function isOpenAIEndpoint (endpoint: Endpoint): endpoint is OpenAIEndpoint {
  return Object.hasOwn(CAPABILITIES, endpoint)
}

/** What sets one OpenAI-compatible channel type apart from the others. */
interface OpenAICompatibleOptions {
  /** Channel type number (docs/domain.md). */
  type: number
  /** Display name, as in CHANNEL_TYPE_NAMES. */
  name: string
  /** Base URL used when the channel has none, without `/v1`; '' when the channel must give one. */
  defaultBaseUrl: string
  /** Models offered when a channel of this type is created. */
  defaultModels: readonly string[]
  /**
   * The upstream URL of an endpoint, or of the model list (`target: 'models'`, `model: ''`);
   * undefined when the upstream has none. Default: `${base}/v1/...` (OPENAI_PATHS).
   */
  urlFor?: (context: UrlContext) => string | undefined
  /** Authentication and extra headers. Default: `Authorization: Bearer <key>` when a key is set. */
  headersFor?: (channel: ChannelConfig) => Record<string, string>
  /** How a streamed chat or completions request asks for usage. Default `'include_usage'`. */
  streamUsage?: StreamUsageMode
}

/**
 * A ProviderAdaptor speaking the OpenAI wire protocol to an OpenAI-compatible upstream. It serves
 * OpenAI-format clients on every OpenAI endpoint (not Anthropic `messages` nor Gemini
 * `generate_content`): bodies pass through with `model` replaced, multipart bodies byte for byte,
 * answers and streams unchanged with usage read on the way.
 */
export function openAICompatible (options: OpenAICompatibleOptions): ProviderAdaptor {
  const { type, name, defaultBaseUrl } = options
  const urlFor = options.urlFor ?? defaultUrlFor
  const headersFor = options.headersFor ?? bearerHeaders
  const streamUsage = options.streamUsage ?? 'include_usage'

  function supports (endpoint: Endpoint, format: ClientFormat): boolean {
    return format === 'openai' && isOpenAIEndpoint(endpoint)
  }

  function endpointOf (req: RelayRequest): OpenAIEndpoint {
    const endpoint = req.endpoint
    if (req.format !== 'openai' || !isOpenAIEndpoint(endpoint)) {
      throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, `${name} does not serve ${endpoint} to ${req.format} clients`)
    }
    return endpoint
  }

  function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
    const endpoint = endpointOf(req)
    const url = urlFor({ base: resolveBaseUrl(channel, defaultBaseUrl), channel, target: endpoint, model: req.model })
    if (url === undefined) {
      throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, `${name} has no upstream URL for ${endpoint}`)
    }
    const payload = CAPABILITIES[endpoint].body(req, streamUsage)
    return { method: 'POST', url, headers: { ...headersFor(channel), 'Content-Type': payload.contentType }, body: payload.body }
  }

  function listModelsRequest (channel: ChannelConfig): UpstreamRequest | undefined {
    const url = urlFor({ base: resolveBaseUrl(channel, defaultBaseUrl), channel, target: 'models', model: '' })
    return url === undefined ? undefined : { method: 'GET', url, headers: headersFor(channel) }
  }

  return Object.freeze({
    type,
    name,
    defaultBaseUrl,
    defaultModels: Object.freeze([...options.defaultModels]),
    supports,
    buildRequest,
    convertResponse: (_channel, req, status, contentType, body) => CAPABILITIES[endpointOf(req)].convert(req, status, contentType, body),
    createStream: () => createOpenAIStream(),
    classifyFailure: classifyOpenAIFailure,
    listModelsRequest,
    parseModels: parseOpenAIModels,
    testRequest: (_channel, model) => openAITestRequest(model)
  } satisfies ProviderAdaptor)
}
