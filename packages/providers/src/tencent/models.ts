import type { RelayRequest } from '../core/adaptor.js'
import { chatTestRequest } from '../openai-compatible/probe.js'

/**
 * Hunyuan models offered when a channel is created: TurboS and the T1 reasoner (latest), Lite,
 * Standard, Large, the vision models and the embedding model.
 */
export const HUNYUAN_MODELS: readonly string[] = [
  'hunyuan-turbos-latest',
  'hunyuan-t1-latest',
  'hunyuan-lite',
  'hunyuan-standard',
  'hunyuan-large',
  'hunyuan-vision',
  'hunyuan-turbos-vision',
  'hunyuan-embedding'
]

/** An embedding of one word for the embedding model, else a one-word chat (Hunyuan has no token cap). */
export function hunyuanTestRequest (model: string): RelayRequest {
  const base = { format: 'openai', model, stream: false } as const
  if (/embedding/i.test(model)) return { ...base, endpoint: 'embeddings', body: { model, input: 'hi' } }
  return chatTestRequest(model)
}
