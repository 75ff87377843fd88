import type { RelayRequest } from '../core/adaptor.js'
import { claudeChatBody, claudePassThroughBody } from '../claude/index.js'
import { list } from '../core/json.js'

/** The `anthropic_version` Bedrock wants in the body of Anthropic models. */
const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31'

/** Whether `req` is an Anthropic client's own messages request (sent as written). */
export function isPassThrough (req: RelayRequest): boolean {
  return req.endpoint === 'messages' && req.format === 'anthropic'
}

/** The client's `anthropic-beta` header (any case), split into its flags. */
function betaFlags (req: RelayRequest): string[] {
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    if (name.toLowerCase() === 'anthropic-beta') return value.split(',').map((flag) => flag.trim()).filter((flag) => flag !== '')
  }
  return []
}

/**
 * The Messages body Bedrock's InvokeModel takes for an Anthropic model: an OpenAI chat request
 * converted (claudeChatBody), or an Anthropic client's own body, without `model` (it is in the
 * URL) and `stream` (the endpoint says it; Bedrock refuses the field), with
 * `anthropic_version: bedrock-2023-05-31`. Beta flags travel in the body on Bedrock: the client's
 * `anthropic-beta` header joins any `anthropic_beta` list it sent.
 */
export function bedrockBody (req: RelayRequest): Record<string, unknown> {
  const body = isPassThrough(req) ? claudePassThroughBody(req) : claudeChatBody(req)
  delete body.model
  delete body.stream
  delete body.anthropic_version
  const betas = [...list(body.anthropic_beta).filter((flag): flag is string => typeof flag === 'string')]
  for (const flag of betaFlags(req)) if (!betas.includes(flag)) betas.push(flag)
  if (betas.length > 0) body.anthropic_beta = betas
  return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...body }
}
