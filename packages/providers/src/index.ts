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
} from './core/adaptor.js'
export { PROVIDER_ERROR_CODES, ProviderError, type ProviderErrorCode } from './core/errors.js'
export { classifyAnswer, cleanUpstreamMessage, failureSummary, looksLikeJson, nonJsonAnswer, REDACTED, unexpectedAnswer, UPSTREAM_MESSAGE_MAX_CHARS } from './core/failure-text.js'
export { adaptorFor, CHANNEL_TYPE_NAMES, defaultModelsByType, registeredTypes } from './core/registry.js'
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
export { defaultOutbound, Outbound, type OutboundPolicy, OutboundRefused, outboundRefusal, parseAddress, type RefusalReason, type TargetKind } from './net/outbound.js'
export { realtimeRequest, realtimeSupported, realtimeUsage, REALTIME_CHANNEL_TYPES, type RealtimeOptions } from './openai-compatible/realtime.js'
export { AZURE_REALTIME_API_VERSION } from './azure/realtime.js'
export { fetchModels, testChannel } from './net/probe.js'
export type { ChannelTestResult } from './net/probe.js'
export { authorized, isStreamAnswer, upstreamRequest, withOverrides } from './core/overrides.js'
export { cachedToken, clearTokenCache, CredentialError, exchange, forgetToken, malformedKey, TOKEN_RENEW_MARGIN_MS, type Token } from './net/credentials.js'
export { balanceSupported, CNY_PER_USD, queryBalance, type ChannelBalance } from './net/balance.js'
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
} from './inbound/anthropic/index.js'
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
} from './inbound/gemini/index.js'
export {
  chatReasoningEffort,
  chatStreamToResponses,
  chatToResponsesResponse,
  CUSTOM_TOOL_INPUT,
  customToolNames,
  responsesToChatRequest,
  responsesUsage,
  type ResponsesUsage
} from './inbound/responses/index.js'
export * from './tasks/types.js'
export * from './tasks/midjourney.js'
export { pollTasks } from './tasks/poll.js'
export { TASK_POLL_PROTOCOLS } from './tasks/registry.js'
export * from './tasks/suno.js'
export * from './tasks/video.js'
