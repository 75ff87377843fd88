import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ProviderAdaptor, RelayRequest, UpstreamRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { classifyGeminiFailure } from '../gemini/index.js'
import { isRecord, list, parseJson, str } from '../core/json.js'
import { chatTestRequest } from '../openai-compatible/probe.js'
import { servesOnly } from '../core/served.js'
import { PALM_BASE_URL, PALM_MODELS_PATH, palmHeaders, palmMessagePath, palmUrl } from './api.js'
import { palmMessageBody } from './request.js'
import { convertPalmMessage, createPalmStream, isPalmAnswer } from './response.js'

const NAME = 'PaLM2'

/** PaLM's chat model (Google retired the PaLM API; the model serves where it is still offered). */
const PALM_MODELS: readonly string[] = ['chat-bison-001']

const { supports, checked } = servesOnly(NAME, { openai: ['chat'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  return { method: 'POST', url: palmUrl(channel, palmMessagePath(req.model)), headers: palmHeaders(channel, true), body: JSON.stringify(palmMessageBody(req)) }
}

/** The models of Google's list that serve generateMessage, without their `models/` prefix. */
function parsePalmModels (body: string): string[] {
  const json = parseJson(body)
  if (!isRecord(json) || (json.models !== undefined && !Array.isArray(json.models))) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badUpstreamBody, 'the upstream did not answer with a PaLM model list')
  }
  const ids: string[] = []
  for (const model of list(json.models)) {
    if (!isRecord(model) || !list(model.supportedGenerationMethods).includes('generateMessage')) continue
    const name = str(model.name)
    if (name !== undefined && name !== '') ids.push(name.startsWith('models/') ? name.slice('models/'.length) : name)
  }
  return ids
}

/**
 * Type 11: Google's PaLM 2 chat API (`v1beta2/models/{model}:generateMessage`, key in
 * `x-goog-api-key`). OpenAI chat clients are converted both ways. PaLM reports no token usage
 * (the gateway counts) and cannot stream: a streamed request is asked unstreamed and its answer
 * sent as one burst of OpenAI chunk events (isStream accepts the JSON answer, see
 * createPalmStream). Errors are Google's, classified as Gemini's are.
 */
export const palm2: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.palm2,
  name: NAME,
  defaultBaseUrl: PALM_BASE_URL,
  defaultModels: Object.freeze([...PALM_MODELS]),
  supports,
  buildRequest,
  isStream: isPalmAnswer,
  convertResponse: (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer) => convertPalmMessage(checked(req), status, contentType, body),
  createStream: (_channel: ChannelConfig, req: RelayRequest) => createPalmStream(checked(req)),
  classifyFailure: classifyGeminiFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({ method: 'GET', url: palmUrl(channel, PALM_MODELS_PATH), headers: palmHeaders(channel, false) }),
  parseModels: parsePalmModels,
  testRequest: (_channel: ChannelConfig, model: string) => chatTestRequest(model)
} satisfies ProviderAdaptor)
