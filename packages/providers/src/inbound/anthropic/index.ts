// Anthropic Messages clients (Claude Code, @anthropic-ai/sdk) served by OpenAI-compatible
// channels: the request converted to chat completions, the answer and its stream converted back.
export { anthropicError, anthropicErrorType, type AnthropicErrorBody } from './errors.js'
export { anthropicToChatRequest, REASONING_BUDGET_THRESHOLDS, reasoningEffortForBudget } from './request.js'
export { anthropicStopReason, anthropicUsage, chatToAnthropicResponse, type AnthropicUsage } from './response.js'
export { chatStreamToAnthropic, CUT_STREAM_MESSAGE } from './stream.js'
