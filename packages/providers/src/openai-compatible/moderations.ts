import { requestPayload } from './api.js'
import type { Capability } from './types.js'
import { readUsage, usageConverter } from './usage.js'

/** Moderations: OpenAI reports no usage (the gateway counts the input); others may. */
export const moderationsCapability: Capability = {
  body: (req) => requestPayload(req),
  convert: usageConverter((json) => readUsage(json.usage))
}
