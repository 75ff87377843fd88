import type { RelayRequest } from '../core/adaptor.js'
import { chatTestRequest } from '../openai-compatible/probe.js'

/**
 * Spark models offered when a channel is created, by their HTTP API names: Lite, Pro (generalv3),
 * Pro-128K, Max (generalv3.5), Max-32K, 4.0 Ultra and the X1 reasoning model (served on /v2).
 */
export const SPARK_MODELS: readonly string[] = ['lite', 'generalv3', 'pro-128k', 'generalv3.5', 'max-32k', '4.0Ultra', 'x1']

/** A one-word chat capped at 16 tokens. */
export function sparkTestRequest (model: string): RelayRequest {
  return chatTestRequest(model)
}
