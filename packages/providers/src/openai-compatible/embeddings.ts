import { requestPayload } from './api.js'
import type { Capability } from './types.js'
import { readUsage, usageConverter } from './usage.js'

/** Embeddings: `usage.prompt_tokens` (or only `total_tokens`), no completion. */
export const embeddingsCapability: Capability = {
  body: (req) => requestPayload(req),
  convert: usageConverter((json) => readUsage(json.usage))
}
