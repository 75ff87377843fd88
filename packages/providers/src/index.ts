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
export { ProviderError } from './core/errors.js'
export { classifyAnswer, cleanUpstreamMessage, failureSummary, looksLikeJson, nonJsonAnswer, REDACTED, unexpectedAnswer, UPSTREAM_MESSAGE_MAX_CHARS } from './core/failure-text.js'
export { adaptorFor, CHANNEL_TYPE_NAMES, defaultModelsByType, registeredTypes } from './core/registry.js'
export {
  classifyOpenAIFailure,
  openAICompatible,
  openAIErrorBody,
  type OpenAIEndpoint,
  type UrlTarget
} from './openai-compatible/index.js'
export { defaultOutbound, Outbound, OutboundRefused, outboundRefusal, parseAddress, type RefusalReason, type TargetKind } from './net/outbound.js'
export { realtimeRequest, realtimeSupported, realtimeUsage } from './openai-compatible/realtime.js'
export { fetchModels, testChannel } from './net/probe.js'
export { authorized, isStreamAnswer, upstreamRequest, withOverrides } from './core/overrides.js'
export { clearTokenCache, CredentialError, exchange, type Token } from './net/credentials.js'
export { balanceSupported, CNY_PER_USD, queryBalance, type ChannelBalance } from './net/balance.js'
export {
  anthropicError,
  anthropicToChatRequest,
  chatStreamToAnthropic,
  chatToAnthropicResponse,
  CUT_STREAM_MESSAGE,
  reasoningEffortForBudget
} from './inbound/anthropic/index.js'
export {
  chatStreamToGemini,
  chatToGeminiResponse,
  geminiEmbedToOpenAIRequest,
  geminiError,
  geminiToChatRequest,
  openAIEmbeddingsToGemini,
  reasoningEffortForThinking
} from './inbound/gemini/index.js'
export {
  chatReasoningEffort,
  chatStreamToResponses,
  chatToResponsesResponse,
  responsesToChatRequest,
  responsesUsage
} from './inbound/responses/index.js'
export * from './tasks/types.js'
export * from './tasks/midjourney.js'
export { pollTasks } from './tasks/poll.js'
export { TASK_POLL_PROTOCOLS } from './tasks/registry.js'
export * from './tasks/suno.js'
export * from './tasks/video.js'
