import type { ChannelConfig } from '../core/adaptor.js'
import { bearerHeaders } from '../openai-compatible/index.js'

export const OPENAI_BASE_URL = 'https://api.openai.com'

/** Bearer key, plus `OpenAI-Organization` when the channel names an organization. */
export function openAIHeaders (channel: ChannelConfig): Record<string, string> {
  const headers = bearerHeaders(channel)
  const organization = channel.organization?.trim()
  if (organization) headers['OpenAI-Organization'] = organization
  return headers
}
