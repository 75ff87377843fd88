import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClientFormat, ConvertedResponse, Endpoint, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { authorizeCodex, CODEX_BASE_URL, codexHeaders, codexUrl } from './api.js'
import { classifyCodexFailure } from './errors.js'
import { CODEX_MODELS, codexTestRequest } from './models.js'
import { codexChatBody, codexResponsesBody } from './request.js'
import { convertCodexAnswer } from './response.js'
import { createCodexChatStream, createCodexResponsesStream } from './stream.js'

// What the tests drive directly: the OAuth client, the instructions, the converters.
export { CODEX_CLIENT_ID } from './api.js'
export { DEFAULT_INSTRUCTIONS } from './request.js'
export { convertCodexAnswer } from './response.js'
export { createCodexChatStream, createCodexResponsesStream, MAX_BACKFILL_BYTES } from './stream.js'

const NAME = 'Codex'

function supports (endpoint: Endpoint, format: ClientFormat): boolean {
  return format === 'openai' && (endpoint === 'chat' || endpoint === 'responses')
}

function checked (req: RelayRequest): RelayRequest {
  if (!supports(req.endpoint, req.format)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, `${NAME} does not serve ${req.endpoint} to ${req.format} clients`)
  }
  return req
}

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const body = req.endpoint === 'responses' ? codexResponsesBody(channel, req) : codexChatBody(channel, req)
  return { method: 'POST', url: codexUrl(channel), headers: codexHeaders(body), body: JSON.stringify(body) }
}

/**
 * Type 45: the ChatGPT backend's Codex endpoint (`POST {base}/responses`, base
 * https://chatgpt.com/backend-api/codex) with a ChatGPT plan's sign-in, as the Codex CLI calls
 * it: `Authorization: Bearer <access token>`, `chatgpt-account-id`, `OpenAI-Beta:
 * responses=experimental`, `originator: codex_cli_rs`, `session_id`. The key is a JSON object of
 * OAuth credentials (`access_token`, `refresh_token`, `account_id`, `expires_at`; the CLI's
 * `auth.json` works as is), or an access token with the rest in `setting`; the access token is
 * renewed at the token endpoint (`setting.token_url`, else OpenAI's) before it expires.
 *
 * Responses clients (the Codex CLI pointed at the gateway) are served natively, OpenAI chat
 * clients converted both ways. The backend only streams and keeps nothing (`stream: true`,
 * `store: false` on every request): a non-streamed client's answer is assembled from the
 * stream. Usage comes from `response.completed`: input tokens with their cached part, output
 * tokens with their reasoning part.
 */
export const codex: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.codex,
  name: NAME,
  defaultBaseUrl: CODEX_BASE_URL,
  defaultModels: Object.freeze([...CODEX_MODELS]),
  supports,
  buildRequest,
  authorize: authorizeCodex,
  convertResponse: (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse =>
    convertCodexAnswer(checked(req), status, contentType, body),
  createStream: (_channel: ChannelConfig, req: RelayRequest): StreamConverter =>
    checked(req).endpoint === 'responses' ? createCodexResponsesStream() : createCodexChatStream(req),
  classifyFailure: classifyCodexFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [...CODEX_MODELS],
  testRequest: (_channel: ChannelConfig, model: string) => codexTestRequest(model)
} satisfies ProviderAdaptor)
