import type { RelayRequest } from '../core/adaptor.js'

/**
 * Claude models offered when a channel is created: the current ones by alias and, where
 * Anthropic gives one, by dated snapshot id (from Claude Opus 4.6 on, the id without a date is
 * itself the snapshot). Claude 3 models, deprecated or retired on Anthropic's API, are left out
 * (an admin can still add any model by name).
 */
export const CLAUDE_MODELS: readonly string[] = [
  'claude-opus-4-6',
  'claude-sonnet-4-6',
  'claude-opus-4-5', 'claude-opus-4-5-20251101',
  'claude-haiku-4-5', 'claude-haiku-4-5-20251001',
  'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929',
  'claude-opus-4-1', 'claude-opus-4-1-20250805',
  'claude-opus-4-0', 'claude-opus-4-20250514',
  'claude-sonnet-4-0', 'claude-sonnet-4-20250514'
]

/** A one-word chat capped at 16 tokens: the cheapest request that proves the channel serves `model`. */
export function claudeTestRequest (model: string): RelayRequest {
  return {
    endpoint: 'chat',
    format: 'openai',
    model,
    stream: false,
    body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }
  }
}
