import { at } from '../core/json.js'
import { requestPayload } from './api.js'
import type { Capability } from './types.js'
import { readUsage, usageConverter } from './usage.js'

/**
 * Rerank (`/v1/rerank`, Jina/Cohere shape: model, query, documents, top_n). Usage comes as
 * `usage` (Jina), `tokens` (SiliconFlow) or `meta.tokens` (Cohere).
 */
export const rerankCapability: Capability = {
  body: (req) => requestPayload(req),
  convert: usageConverter((json) => readUsage(json.usage) ?? readUsage(json.tokens) ?? readUsage(at(json, 'meta', 'tokens')))
}
