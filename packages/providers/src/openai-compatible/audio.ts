import type { ConvertedResponse } from '../core/adaptor.js'
import { requestPayload } from './api.js'
import type { Capability } from './types.js'
import { readUsage, usageConverter } from './usage.js'

/** Text to speech: JSON in, audio bytes out (no usage; priced on the input). */
export const speechCapability: Capability = {
  body: (req) => requestPayload(req),
  convert: (_req, status, contentType, body): ConvertedResponse => ({
    status,
    contentType: contentType || 'application/octet-stream',
    body
  })
}

/**
 * Transcriptions and translations: multipart in, forwarded byte for byte with its content type.
 * The answer is JSON or plain text/srt/vtt (`response_format`); gpt-4o-transcribe reports token
 * usage, whisper-1 a duration, which is no token count.
 */
export const transcriptionCapability: Capability = {
  body: (req) => requestPayload(req),
  convert: usageConverter((json) => readUsage(json.usage))
}
