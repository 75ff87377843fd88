export type {
  ChannelConfig,
  ClassifiedFailure,
  ClientFormat,
  ConvertedResponse,
  CredentialStore,
  CredentialUpdate,
  Endpoint,
  FailureAction,
  ProviderAdaptor,
  RelayRequest,
  StreamConverter,
  UpstreamRequest,
  Usage
} from './adaptor.js'
export { PROVIDER_ERROR_CODES, ProviderError, type ProviderErrorCode } from './errors.js'
export { classifyAnswer, cleanUpstreamMessage, failureSummary, looksLikeJson, nonJsonAnswer, REDACTED, unexpectedAnswer, UPSTREAM_MESSAGE_MAX_CHARS } from './failure-text.js'
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
export { defaultOutbound, Outbound, type OutboundPolicy, OutboundRefused, outboundRefusal, parseAddress, type RefusalReason, type TargetKind } from './outbound.js'
export { realtimeRequest, realtimeSupported, realtimeUsage, REALTIME_CHANNEL_TYPES, type RealtimeOptions } from './openai-compatible/realtime.js'
export { AZURE_REALTIME_API_VERSION } from './azure/realtime.js'
export { fetchModels, testChannel } from './probe.js'
export type { ChannelTestResult } from './probe.js'
export { authorized, isStreamAnswer, upstreamRequest, withOverrides } from './overrides.js'
export { cachedToken, clearTokenCache, CredentialError, exchange, forgetToken, malformedKey, TOKEN_RENEW_MARGIN_MS, type Token } from './credentials.js'
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
  geminiEmbedToOpenAIRequest,
  geminiError,
  geminiFinishReason,
  geminiSchemaToJsonSchema,
  geminiStatus,
  geminiToChatRequest,
  geminiUsageMetadata,
  openAIEmbeddingsToGemini,
  reasoningEffortForThinking,
  type GeminiErrorBody,
  type GeminiStreamMode,
  type GeminiUsageMetadata
} from './gemini-inbound/index.js'
export {
  chatReasoningEffort,
  chatStreamToResponses,
  chatToResponsesResponse,
  CUSTOM_TOOL_INPUT,
  customToolNames,
  responsesToChatRequest,
  responsesUsage,
  type ResponsesUsage
} from './responses-inbound/index.js'
export * from './tasks/types.js'
export * from './tasks/midjourney.js'
export { pollTasks } from './tasks/poll.js'
export { TASK_POLL_PROTOCOLS } from './tasks/registry.js'
export * from './tasks/suno.js'
export * from './tasks/video.js'
