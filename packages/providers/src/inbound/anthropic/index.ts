// Anthropic Messages clients (Claude Code, @anthropic-ai/sdk) served by OpenAI-compatible
// channels: the request converted to chat completions, the answer and its stream converted back.
export { anthropicError } from './errors.js'
export { anthropicToChatRequest, reasoningEffortForBudget } from './request.js'
export { chatToAnthropicResponse } from './response.js'
export { chatStreamToAnthropic, CUT_STREAM_MESSAGE } from './stream.js'
