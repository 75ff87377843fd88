import type { RelayRequest } from '../core/adaptor.js'

/**
 * The models Codex serves to ChatGPT plans (its model picker), newest first; `-codex` slugs
 * other than Spark are refused with a ChatGPT sign-in ("not supported when using Codex with a
 * ChatGPT account"). The backend has no public model list: an admin adds other names by hand.
 */
export const CODEX_MODELS: readonly string[] = [
  'gpt-5.6-sol',
  'gpt-5.6-terra',
  'gpt-5.6-luna',
  'gpt-5.5',
  'gpt-5.4',
  'gpt-5.4-mini',
  'gpt-5.3-codex-spark'
]

/**
 * A one-word chat: the cheapest request that proves the channel serves `model` (the backend
 * takes no output cap, so none is asked for).
 */
export function codexTestRequest (model: string): RelayRequest {
  return { endpoint: 'chat', format: 'openai', model, stream: false, body: { model, messages: [{ role: 'user', content: 'hi' }] } }
}
