import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ProviderAdaptor, RelayRequest } from '../core/adaptor.js'
import { openAICompatible } from '../openai-compatible/index.js'
import { chatTestRequest } from '../openai-compatible/probe.js'
import { servesOnly } from '../core/served.js'
import { fastGPTUrl } from './api.js'
import { classifyFastGPTFailure } from './errors.js'
import { convertFastGPTResponse } from './response.js'
import { createFastGPTStream } from './stream.js'

const NAME = 'FastGPT (private deployment)'

/**
 * The OpenAI-compatible request side: the client's body passes through (FastGPT's `chatId`,
 * `detail`, `variables`, `responseChatItemId`, `customUid` included) with the app key as a
 * bearer token; `stream_options` is not sent (FastGPT reports no usage anyway).
 */
const compatible = openAICompatible({
  type: CHANNEL_TYPE.fastgpt,
  name: NAME,
  defaultBaseUrl: '',
  defaultModels: ['fastgpt'],
  urlFor: fastGPTUrl,
  streamUsage: 'strip'
})

const { supports, checked } = servesOnly(NAME, { openai: ['chat'] })

/**
 * Type 22: a FastGPT app (self-hosted, or FastGPT's cloud) through its OpenAI-compatible
 * `/api/v1/chat/completions` with the app's key. There is no default base URL: the admin gives
 * the deployment's (`https://host` or `https://host/api`). The app decides the model, so the
 * requested one is a label; the answer and the stream are made plain OpenAI (detail-mode events
 * dropped), FastGPT's placeholder usage is dropped so the gateway counts the text. OpenAI chat
 * clients only; no model list.
 */
export const fastGPT: ProviderAdaptor = Object.freeze({
  ...compatible,
  supports,
  buildRequest: (channel: ChannelConfig, req: RelayRequest) => compatible.buildRequest(channel, checked(req)),
  convertResponse: (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer) =>
    convertFastGPTResponse(checked(req), status, contentType, body),
  createStream: (_channel: ChannelConfig, req: RelayRequest) => createFastGPTStream(checked(req)),
  classifyFailure: classifyFastGPTFailure,
  testRequest: (_channel: ChannelConfig, model: string) => chatTestRequest(model)
} satisfies ProviderAdaptor)
