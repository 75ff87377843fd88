import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClassifiedFailure, ClientFormat, ConvertedResponse, Endpoint, ProviderAdaptor, RelayRequest, StreamConverter, UpstreamRequest } from '../core/adaptor.js'
import {
  CLAUDE_BASE_URL,
  CLAUDE_MODELS,
  claudeChatBody,
  claudePassThroughBody,
  claudeTestRequest,
  claudeUrl,
  classifyClaudeFailure,
  convertClaudeChat,
  convertClaudePassThrough,
  createClaudeChatStream,
  createClaudePassThroughStream
} from '../claude/index.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { parseOpenAIModels } from '../openai-compatible/models.js'
import { authorizeClaudeCode, CLAUDE_CODE_MESSAGES_PATH, claudeCodeHeaders, withClaudeCodeSystem } from './api.js'

export { CLAUDE_CODE_CLIENT_ID, CLAUDE_CODE_SYSTEM_PREFIX, mergeBetas, withClaudeCodeSystem } from './api.js'

const NAME = 'Claude Code'

/** Anthropic's text for a request that did not present itself as Claude Code to a Claude Code token. */
const ONLY_CLAUDE_CODE = /only authorized for use with Claude Code/i

function passThrough (req: RelayRequest): boolean {
  return req.endpoint === 'messages' && req.format === 'anthropic'
}

function supports (endpoint: Endpoint, format: ClientFormat): boolean {
  return (endpoint === 'chat' && format === 'openai') || (endpoint === 'messages' && format === 'anthropic')
}

function checked (req: RelayRequest): RelayRequest {
  if (!supports(req.endpoint, req.format)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, `${NAME} does not serve ${req.endpoint} to ${req.format} clients`)
  }
  return req
}

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const body = withClaudeCodeSystem(passThrough(req) ? claudePassThroughBody(req) : claudeChatBody(req))
  return {
    method: 'POST',
    url: claudeUrl(resolveBaseUrl(channel, CLAUDE_BASE_URL), CLAUDE_CODE_MESSAGES_PATH),
    headers: claudeCodeHeaders(channel, req),
    body: JSON.stringify(body)
  }
}

/**
 * Anthropic's classification (classifyClaudeFailure), and a request refused as not coming from
 * Claude Code disables the channel: every request of it would be refused the same way.
 */
function classifyFailure (status: number, body: string): ClassifiedFailure {
  const failure = classifyClaudeFailure(status, body)
  if (status >= 400 && status < 500 && ONLY_CLAUDE_CODE.test(body)) failure.action = 'disable'
  return failure
}

/**
 * Type 44: Anthropic's Messages API with a Claude subscription's OAuth sign-in, as the Claude
 * Code CLI calls it: `Authorization: Bearer <access token>` (no x-api-key), the
 * `claude-code-20250219` and `oauth-2025-04-20` beta flags merged with the client's, and Claude
 * Code's identity as the first system block. The key is an access token (`sk-ant-oat01-...`,
 * from `claude setup-token`) or a JSON object of OAuth credentials (see net/oauth.ts
 * readOAuthCredentials; the CLI's `.credentials.json` works as is); with a refresh token the
 * access token is renewed at the token endpoint (`setting.token_url`, else Anthropic's) before it
 * expires. Everything else is the Claude adaptor's: Anthropic clients pass through, OpenAI chat
 * clients are converted both ways.
 */
export const claudeCode: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.claudeCode,
  name: NAME,
  defaultBaseUrl: CLAUDE_BASE_URL,
  defaultModels: Object.freeze([...CLAUDE_MODELS]),
  supports,
  buildRequest,
  authorize: authorizeClaudeCode,
  convertResponse: (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse =>
    passThrough(checked(req)) ? convertClaudePassThrough(req, status, contentType, body) : convertClaudeChat(req, status, contentType, body),
  createStream: (_channel: ChannelConfig, req: RelayRequest): StreamConverter =>
    passThrough(checked(req)) ? createClaudePassThroughStream() : createClaudeChatStream(req),
  classifyFailure,
  listModelsRequest: (channel: ChannelConfig): UpstreamRequest => ({
    method: 'GET',
    url: claudeUrl(resolveBaseUrl(channel, CLAUDE_BASE_URL), '/v1/models?limit=1000'),
    headers: claudeCodeHeaders(channel)
  }),
  parseModels: parseOpenAIModels,
  testRequest: (_channel: ChannelConfig, model: string) => claudeTestRequest(model)
} satisfies ProviderAdaptor)
