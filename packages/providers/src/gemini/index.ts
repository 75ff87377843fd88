import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { servesOnly } from '../core/served.js'
import { GEMINI_BASE_URL, GEMINI_MODELS_PATH, geminiGeneratePath, geminiHeaders, geminiUrl } from './api.js'
import { convertGeminiEmbed, geminiEmbedBody, geminiEmbedPath, isGeminiEmbed } from './embed.js'
import { classifyGeminiFailure } from './errors.js'
import { GEMINI_MODELS, geminiTestRequest, parseGeminiModels } from './models.js'
import { geminiChatBody, geminiPassThroughBody } from './request.js'
import { convertGeminiChat, convertGeminiPassThrough } from './response.js'
import { createGeminiChatStream, createGeminiPassThroughStream } from './stream.js'

// Building blocks for the channel types that speak Gemini's generateContent behind another
// endpoint or credential (Vertex AI).
export { geminiModelName } from './api.js'
export { classifyGeminiFailure } from './errors.js'
export { GEMINI_MODELS } from './models.js'
export { geminiChatBody, geminiPassThroughBody } from './request.js'
export { convertGeminiChat, convertGeminiPassThrough } from './response.js'
export { createGeminiChatStream, createGeminiPassThroughStream } from './stream.js'

const NAME = 'Gemini'

/** Whether `req` is a Gemini client's own generateContent request (sent through as written). */
function passThrough (req: RelayRequest): boolean {
  return req.endpoint === 'generate_content' && req.format === 'gemini'
}

const { supports, checked } = servesOnly(NAME, { openai: ['chat'], gemini: ['generate_content', 'embed_content', 'batch_embed_contents'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  if (isGeminiEmbed(req)) {
    const url = geminiUrl(resolveBaseUrl(channel, GEMINI_BASE_URL), geminiEmbedPath(req.model, req.endpoint === 'batch_embed_contents'))
    return { method: 'POST', url, headers: geminiHeaders(channel, req), body: JSON.stringify(geminiEmbedBody(req)) }
  }
  const body = passThrough(req) ? geminiPassThroughBody(channel, req) : geminiChatBody(channel, req)
  return {
    method: 'POST',
    url: geminiUrl(resolveBaseUrl(channel, GEMINI_BASE_URL), geminiGeneratePath(req.model, req.stream)),
    headers: geminiHeaders(channel, req),
    body: JSON.stringify(body)
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  if (isGeminiEmbed(checked(req))) return convertGeminiEmbed(req, status, contentType, body)
  return passThrough(req) ? convertGeminiPassThrough(req, status, contentType, body) : convertGeminiChat(req, status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return passThrough(checked(req)) ? createGeminiPassThroughStream(req) : createGeminiChatStream(req)
}

/**
 * Type 24: Google AI Studio's Gemini API (generativelanguage.googleapis.com, `x-goog-api-key`).
 * OpenAI chat clients are converted both ways (system instruction, images, tools and function
 * calls, JSON output, thinking, finish reasons, usage with thinking and cached tokens), streams
 * included (`streamGenerateContent?alt=sse`); Gemini clients' generateContent requests pass
 * through with the mapped model in the URL, and so do their embedContent and batchEmbedContents
 * requests (usage counted by the gateway: Google reports none).
 */
export const gemini: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.gemini,
  name: NAME,
  defaultBaseUrl: GEMINI_BASE_URL,
  defaultModels: Object.freeze([...GEMINI_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  createStream,
  classifyFailure: classifyGeminiFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({
    method: 'GET',
    url: geminiUrl(resolveBaseUrl(channel, GEMINI_BASE_URL), GEMINI_MODELS_PATH),
    headers: geminiHeaders(channel)
  }),
  parseModels: parseGeminiModels,
  testRequest: (_channel: ChannelConfig, model: string) => geminiTestRequest(model)
} satisfies ProviderAdaptor)
