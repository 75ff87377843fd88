import type { RelayRequest } from '../core/adaptor.js'

/**
 * The cheapest request that proves a channel serves `model`: a rerank, embedding or moderation
 * call for such models, else a chat completion capped at 16 tokens (`max_completion_tokens` for
 * OpenAI reasoning models, which refuse `max_tokens`).
 */
export function openAITestRequest (model: string): RelayRequest {
  const base = { format: 'openai', model, stream: false } as const
  // Before embeddings: bge-reranker-* is a reranker.
  if (/rerank/i.test(model)) return { ...base, endpoint: 'rerank', body: { model, query: 'hi', documents: ['hi'] } }
  if (/embed|^bge-|\/bge-/i.test(model)) return { ...base, endpoint: 'embeddings', body: { model, input: 'hi' } }
  if (/moderation/i.test(model)) return { ...base, endpoint: 'moderations', body: { model, input: 'hi' } }
  const limit = /^(o\d|gpt-5)/i.test(model) ? { max_completion_tokens: 16 } : { max_tokens: 16 }
  return { ...base, endpoint: 'chat', body: { model, messages: [{ role: 'user', content: 'hi' }], ...limit } }
}

/** A chat completion capped at 16 tokens (`max_tokens`): the test of channels that serve only chat. */
export function chatTestRequest (model: string): RelayRequest {
  return { endpoint: 'chat', format: 'openai', model, stream: false, body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 } }
}
