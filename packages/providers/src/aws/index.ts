import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ConvertedResponse, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { CLAUDE_MODELS, claudeTestRequest, convertClaudeChat, convertClaudePassThrough } from '../claude/index.js'
import { servesOnly } from '../core/served.js'
import { awsCredentials, BEDROCK_MODELS_PATH, BEDROCK_RUNTIME_BASE_URL, controlBase, invokeUrl, runtimeBase, signAws } from './api.js'
import { classifyBedrockFailure } from './errors.js'
import { bedrockModelId, parseBedrockModels } from './models.js'
import { bedrockBody, isPassThrough } from './request.js'
import { createBedrockChatStream, createBedrockPassThroughStream, EVENT_STREAM_CONTENT_TYPE } from './stream.js'

export { signAws } from './api.js'
export { bedrockModelId, parseBedrockModels } from './models.js'
export { bedrockEventReader } from './stream.js'
export { classifyBedrockFailure } from './errors.js'

const NAME = 'AWS Claude'

const { supports, checked } = servesOnly(NAME, { openai: ['chat'], anthropic: ['messages'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const { region } = awsCredentials(channel)
  return {
    method: 'POST',
    url: invokeUrl(runtimeBase(channel, region), bedrockModelId(req.model, region), req.stream),
    // InvokeModel takes the answer's type in Accept; the stream's Accept is its framing and the
    // type of the events' payload goes in X-Amzn-Bedrock-Accept.
    headers: req.stream
      ? { 'content-type': 'application/json', accept: EVENT_STREAM_CONTENT_TYPE, 'x-amzn-bedrock-accept': 'application/json' }
      : { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(bedrockBody(req))
  }
}

function convertResponse (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  return isPassThrough(checked(req)) ? convertClaudePassThrough(req, status, contentType, body) : convertClaudeChat(req, status, contentType, body)
}

function createStream (_channel: ChannelConfig, req: RelayRequest): StreamConverter {
  return isPassThrough(checked(req)) ? createBedrockPassThroughStream() : createBedrockChatStream(req)
}

/**
 * Type 33: Anthropic's Claude on Amazon Bedrock (InvokeModel and InvokeModelWithResponseStream
 * of the bedrock-runtime endpoint), signed with AWS Signature Version 4. The key is
 * `ACCESS_KEY_ID|SECRET_ACCESS_KEY|REGION` (a fourth part: the session token of temporary
 * credentials; without a region in the key, the channel's `other` names it). Anthropic model ids
 * become Bedrock ids with the region's inference profile (bedrockModelId). The body is Anthropic's
 * Messages body with `anthropic_version: bedrock-2023-05-31` (OpenAI chat clients converted as for
 * Claude; Anthropic clients' bodies sent as written), and the answer is Anthropic's: streams come
 * in AWS event stream framing and are decoded to Anthropic events, converted for OpenAI clients or
 * sent to Anthropic clients as server-sent events. A base URL replaces the regional host (VPC
 * endpoints); the model list is the control plane's foundation models (signed as well).
 */
export const awsClaude: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.aws,
  name: NAME,
  defaultBaseUrl: BEDROCK_RUNTIME_BASE_URL,
  defaultModels: Object.freeze([...CLAUDE_MODELS]),
  supports,
  buildRequest,
  authorize: signAws,
  isStream: (contentType: string) => /application\/vnd\.amazon\.eventstream/i.test(contentType),
  convertResponse,
  createStream,
  classifyFailure: classifyBedrockFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({
    method: 'GET',
    url: controlBase(channel, awsCredentials(channel).region) + BEDROCK_MODELS_PATH,
    headers: { accept: 'application/json' }
  }),
  parseModels: parseBedrockModels,
  testRequest: (_channel: ChannelConfig, model: string) => claudeTestRequest(model)
} satisfies ProviderAdaptor)
