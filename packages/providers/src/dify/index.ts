import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ProviderAdaptor, RelayRequest, UpstreamRequest } from '../core/adaptor.js'
import { bearerHeaders } from '../openai-compatible/index.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { chatTestRequest } from '../openai-compatible/probe.js'
import { servesOnly } from '../core/served.js'
import { DIFY_BASE_URL, difyOptions, difyUrl } from './api.js'
import { classifyDifyFailure } from './errors.js'
import { difyBody } from './request.js'
import { convertDifyResponse } from './response.js'
import { createDifyStream } from './stream.js'

// Building blocks for other adaptors of apps that take one query and stream text.
export { difyOptions } from './api.js'
export { foldedQuery } from './request.js'

const NAME = 'Dify'

const { supports, checked } = servesOnly(NAME, { openai: ['chat'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const options = difyOptions(channel)
  return {
    method: 'POST',
    url: difyUrl(resolveBaseUrl(channel, DIFY_BASE_URL), options.mode),
    headers: { ...bearerHeaders(channel), 'Content-Type': 'application/json' },
    body: JSON.stringify(difyBody(channel, req, options))
  }
}

/**
 * Type 37: a Dify app through its service API (`Authorization: Bearer <app key>`). The app
 * decides the model and prompt, so the requested model is only a label. The channel's `other`
 * names the app mode (difyOptions): `chat` (default: chatbots and chatflows, /v1/chat-messages),
 * `agent` (the same endpoint, always streamed: non-streamed clients get the assembled answer),
 * `completion` (/v1/completion-messages) or `workflow` (/v1/workflows/run), and with `thoughts`
 * node progress and tool calls as reasoning. OpenAI chat clients only; Dify lists no models.
 */
export const dify: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.dify,
  name: NAME,
  defaultBaseUrl: DIFY_BASE_URL,
  defaultModels: Object.freeze(['dify']),
  supports,
  buildRequest,
  convertResponse: (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer) =>
    convertDifyResponse(checked(req), difyOptions(channel), status, contentType, body),
  createStream: (channel: ChannelConfig, req: RelayRequest) => createDifyStream(checked(req), difyOptions(channel)),
  classifyFailure: classifyDifyFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [],
  testRequest: (_channel: ChannelConfig, model: string) => chatTestRequest(model)
} satisfies ProviderAdaptor)
