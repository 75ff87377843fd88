// OpenAI Responses clients (Codex CLI, the openai SDK's client.responses) served by channels
// without the Responses API: the request converted to chat completions, the answer and its
// stream converted back. Errors keep OpenAI's envelope, which the Responses API shares.
export { chatReasoningEffort, responsesToChatRequest } from './request.js'
export { chatToResponsesResponse, responsesUsage } from './response.js'
export { chatStreamToResponses } from './stream.js'
