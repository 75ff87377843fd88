export type {
  ChannelConfig,
  ClassifiedFailure,
  ClientFormat,
  ConvertedResponse,
  Endpoint,
  FailureAction,
  ProviderAdaptor,
  RelayRequest,
  StreamConverter,
  UpstreamRequest,
  Usage
} from './adaptor.js'
export { PROVIDER_ERROR_CODES, ProviderError, type ProviderErrorCode } from './errors.js'
export { adaptorFor, CHANNEL_TYPE_NAMES, defaultModelsByType, registeredTypes } from './registry.js'
export {
  bearerHeaders,
  classifyOpenAIFailure,
  OPENAI_PATHS,
  openAICompatible,
  openAIErrorBody,
  openAIUrl,
  type OpenAICompatibleOptions,
  type OpenAIEndpoint,
  type StreamUsageMode,
  type UrlContext,
  type UrlTarget
} from './openai-compatible/index.js'
export { upstreamDispatcher } from './dispatcher.js'
export { fetchModels, testChannel } from './probe.js'
export type { ChannelTestResult } from './probe.js'
export { authorized, isStreamAnswer, upstreamRequest, withOverrides } from './overrides.js'
export { cachedToken, clearTokenCache, CredentialError, exchange, malformedKey, TOKEN_RENEW_MARGIN_MS, type Token } from './credentials.js'
export { balanceSupported, CNY_PER_USD, queryBalance, type ChannelBalance } from './balance.js'
export {
  anthropicError,
  anthropicErrorType,
  anthropicStopReason,
  anthropicToChatRequest,
  anthropicUsage,
  chatStreamToAnthropic,
  chatToAnthropicResponse,
  CUT_STREAM_MESSAGE,
  REASONING_BUDGET_THRESHOLDS,
  reasoningEffortForBudget,
  type AnthropicErrorBody,
  type AnthropicUsage
} from './anthropic/index.js'
export {
  chatStreamToGemini,
  chatToGeminiResponse,
  geminiError,
  geminiFinishReason,
  geminiSchemaToJsonSchema,
  geminiStatus,
  geminiToChatRequest,
  geminiUsageMetadata,
  reasoningEffortForThinking,
  type GeminiErrorBody,
  type GeminiStreamMode,
  type GeminiUsageMetadata
} from './gemini-inbound/index.js'
