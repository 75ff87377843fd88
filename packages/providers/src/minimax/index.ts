import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { bearerHeaders, resolveBaseUrl } from '../openai-compatible/api.js'
import { parseOpenAIModels } from '../openai-compatible/models.js'
import { openAITestRequest } from '../openai-compatible/probe.js'
import { servesOnly } from '../core/served.js'
import { convertMiniMaxChat, miniMaxChatBody } from './chat.js'
import { classifyMiniMaxFailure } from './errors.js'
import { createMiniMaxChatStream } from './stream.js'

export { splitThink, thinkSplitter } from './think.js'

const NAME = 'MiniMax'

/** Used when the channel has no base URL: the international API (mainland China: https://api.minimaxi.com). */
const MINIMAX_BASE_URL = 'https://api.minimax.io'

/** MiniMax's chat endpoint (OpenAI's body and answer, plus `base_resp`). */
const MINIMAX_CHAT_PATH = '/v1/text/chatcompletion_v2'

/** MiniMax's current text models (an admin can add any other by name). */
const MINIMAX_MODELS: readonly string[] = [
  'MiniMax-M3',
  'MiniMax-M2.7',
  'MiniMax-M2.7-highspeed',
  'MiniMax-M2.5',
  'MiniMax-M2.5-highspeed',
  'MiniMax-M2.1',
  'MiniMax-M2',
  'MiniMax-M1',
  'MiniMax-Text-01'
]

/** `${base}/v1/text/chatcompletion_v2`; a base URL pasted with its `/v1` is not doubled. */
function miniMaxChatUrl (base: string): string {
  return base.endsWith('/v1') ? base + MINIMAX_CHAT_PATH.slice(3) : base + MINIMAX_CHAT_PATH
}

const { supports, checked } = servesOnly(NAME, { openai: ['chat'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  const payload = miniMaxChatBody(checked(req))
  return {
    method: 'POST',
    url: miniMaxChatUrl(resolveBaseUrl(channel, MINIMAX_BASE_URL)),
    headers: { ...bearerHeaders(channel), 'Content-Type': payload.contentType },
    body: payload.body
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return convertMiniMaxChat(checked(req), status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return createMiniMaxChatStream(checked(req))
}

/**
 * Type 35: MiniMax's chat API (`/v1/text/chatcompletion_v2` on api.minimax.io, or
 * api.minimaxi.com in mainland China; Bearer key). The body is OpenAI's; answers are cleaned
 * into OpenAI's: the reasoning models' `<think>` block becomes `reasoning_content` (and goes
 * back into the content of later turns), and an error MiniMax reports with HTTP 200 in
 * `base_resp` is a failure classified by its code.
 */
export const miniMax: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.minimax,
  name: NAME,
  defaultBaseUrl: MINIMAX_BASE_URL,
  defaultModels: Object.freeze([...MINIMAX_MODELS]),
  supports,
  buildRequest,
  convertResponse,
  createStream,
  classifyFailure: classifyMiniMaxFailure,
  // MiniMax publishes no model list for API keys.
  listModelsRequest: () => undefined,
  parseModels: parseOpenAIModels,
  testRequest: (_channel: ChannelConfig, model: string) => openAITestRequest(model)
} satisfies ProviderAdaptor)
