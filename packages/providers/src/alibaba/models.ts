import type { RelayRequest } from '../core/adaptor.js'
import { chatTestRequest } from '../openai-compatible/probe.js'

/**
 * Models offered when a channel is created: the current Qwen text models (Qwen3-Max, Max, Plus,
 * Flash, Turbo, the QwQ reasoner), the vision models and the text-embedding models (an admin can
 * add any other by name, or fetch the list the key may use).
 */
export const DASHSCOPE_MODELS: readonly string[] = [
  'qwen3-max',
  'qwen-max',
  'qwen-plus',
  'qwen-flash',
  'qwen-turbo',
  'qwq-plus',
  'qwen3-vl-plus',
  'qwen-vl-max',
  'qwen-vl-plus',
  'text-embedding-v4',
  'text-embedding-v3'
]

/** An embedding of one word for embedding models, else a one-word chat capped at 16 tokens. */
export function dashscopeTestRequest (model: string): RelayRequest {
  const base = { format: 'openai', model, stream: false } as const
  if (/embedding/i.test(model)) return { ...base, endpoint: 'embeddings', body: { model, input: 'hi' } }
  return chatTestRequest(model)
}
