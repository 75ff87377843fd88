import { requestPayload } from './api.js'
import type { Capability } from './types.js'
import { readUsage, usageConverter } from './usage.js'

/**
 * Image generations (JSON) and edits (multipart, forwarded as is; or JSON when the client sent
 * JSON). dall-e answers carry no usage (priced per image); gpt-image-1 reports input/output tokens.
 */
export const imagesCapability: Capability = {
  body: (req) => requestPayload(req),
  convert: usageConverter((json) => readUsage(json.usage))
}
