// Gemini clients (@google/genai, REST generateContent / streamGenerateContent) served by
// OpenAI-compatible channels: the request converted to chat completions, the answer and its
// stream converted back, errors in Google's envelope; embedContent and batchEmbedContents as
// OpenAI embeddings.
export { geminiEmbedToOpenAIRequest, openAIEmbeddingsToGemini } from './embed.js'
export { geminiError, geminiStatus, type GeminiErrorBody } from './errors.js'
export { geminiSchemaToJsonSchema, geminiToChatRequest, reasoningEffortForThinking } from './request.js'
export { chatToGeminiResponse, geminiFinishReason, geminiUsageMetadata, type GeminiUsageMetadata } from './response.js'
export { chatStreamToGemini, type GeminiStreamMode } from './stream.js'
