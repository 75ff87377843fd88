import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'

/** Used when the channel has no base URL. */
export const CLAUDE_BASE_URL = 'https://api.anthropic.com'

/** The `anthropic-version` this adaptor writes its requests for. */
const ANTHROPIC_VERSION = '2023-06-01'

export const CLAUDE_MESSAGES_PATH = '/v1/messages'
/** One page of up to 1000 models: Anthropic's largest page, more than it offers. */
export const CLAUDE_MODELS_PATH = '/v1/models?limit=1000'

/** `${base}/v1/...`; a base URL pasted with its `/v1` (as SDKs want it) is not doubled. */
export function claudeUrl (base: string, path: string): string {
  return base.endsWith('/v1') ? base + path.slice('/v1'.length) : base + path
}

/** The client's header `name` (any case), when the relay request carries it. */
function clientHeader (req: RelayRequest | undefined, name: string): string | undefined {
  const headers = req?.headers
  if (headers === undefined) return undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value.trim() !== '') return value
  }
  return undefined
}

/**
 * `x-api-key`, `anthropic-version` and the JSON content type. With a relay request: the client's
 * `anthropic-beta` is forwarded (beta features such as the 1M context window are asked for with
 * it), and an Anthropic client's own `anthropic-version` replaces ours, since its body is sent as
 * it wrote it.
 */
export function claudeHeaders (channel: ChannelConfig, req?: RelayRequest): Record<string, string> {
  const headers: Record<string, string> = {
    'x-api-key': channel.key.trim(),
    'anthropic-version': ANTHROPIC_VERSION
  }
  if (req === undefined) return headers
  headers['content-type'] = 'application/json'
  const beta = clientHeader(req, 'anthropic-beta')
  if (beta !== undefined) headers['anthropic-beta'] = beta
  const version = req.format === 'anthropic' ? clientHeader(req, 'anthropic-version') : undefined
  if (version !== undefined) headers['anthropic-version'] = version
  return headers
}
