// Gemini clients (@google/genai, REST generateContent / streamGenerateContent) served by
// OpenAI-compatible channels: the request converted to chat completions, the answer and its
// stream converted back, errors in Google's envelope; embedContent and batchEmbedContents as
// OpenAI embeddings.
export { geminiEmbedToOpenAIRequest, openAIEmbeddingsToGemini } from './embed.js'
export { geminiError } from './errors.js'
export { geminiToChatRequest, reasoningEffortForThinking } from './request.js'
export { chatToGeminiResponse } from './response.js'
export { chatStreamToGemini } from './stream.js'
