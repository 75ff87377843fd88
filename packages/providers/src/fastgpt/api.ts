import type { Usage } from '../core/adaptor.js'
import type { UrlContext } from '../openai-compatible/index.js'
import { readUsage } from '../openai-compatible/usage.js'

/**
 * The chat URL of a FastGPT deployment: FastGPT calls `https://host/api` its base URL, admins
 * may also paste the bare origin or `…/api/v1`; all give `…/api/v1/chat/completions`. Apps have
 * no other OpenAI endpoint and no model list.
 */
export function fastGPTUrl ({ base, target }: UrlContext): string | undefined {
  if (target !== 'chat') return undefined
  const api = base.endsWith('/api/v1') ? base.slice(0, -'/v1'.length) : base.endsWith('/api') ? base : `${base}/api`
  return `${api}/v1/chat/completions`
}

/**
 * The usage of a FastGPT answer, when it is one. FastGPT's v1 chat API documents that it does
 * not return the tokens used and writes a placeholder (1 prompt, 1 completion, 1 in total) or
 * zeros: those count as none, so the gateway counts the text. A real count (a deployment that
 * reports it) is taken as it is.
 */
export function fastGPTUsage (value: unknown): Usage | undefined {
  const usage = readUsage(value)
  if (usage === undefined) return undefined
  const { promptTokens: prompt, completionTokens: completion } = usage
  if (prompt + completion === 0 || (prompt === 1 && completion === 1)) return undefined
  return usage
}
