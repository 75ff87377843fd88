import type { RelayRequest } from '../core/adaptor.js'
import { CLAUDE_MODELS } from '../claude/index.js'
import { GEMINI_MODELS } from '../gemini/index.js'

/**
 * Models offered when a channel is created: Gemini's current models (Vertex names them as Google
 * AI Studio does) and Claude's under Anthropic's ids (mapped to Vertex's `@` ids per request).
 */
export const VERTEX_MODELS: readonly string[] = [...GEMINI_MODELS, ...CLAUDE_MODELS]

/** A one-word chat capped at 16 tokens: the cheapest request that proves the channel serves `model`. */
export function vertexTestRequest (model: string): RelayRequest {
  return {
    endpoint: 'chat',
    format: 'openai',
    model,
    stream: false,
    body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }
  }
}
