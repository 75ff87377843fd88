// Anthropic Messages API wire shapes, for reference; values are read from `unknown` through the
// checks in json.ts, never trusted as typed.

/** A content block of a request or an answer. */
export type ClaudeBlock =
  | { type: 'text', text: string, cache_control?: unknown }
  | { type: 'image', source: ClaudeImageSource, cache_control?: unknown }
  | { type: 'document', source: { type: 'base64', media_type: string, data: string }, cache_control?: unknown }
  | { type: 'tool_use', id: string, name: string, input: unknown }
  | { type: 'tool_result', tool_use_id: string, content: string | ClaudeBlock[], is_error?: boolean }
  | { type: 'thinking', thinking: string, signature: string }
  | { type: 'redacted_thinking', data: string }

type ClaudeImageSource =
  | { type: 'base64', media_type: string, data: string }
  | { type: 'url', url: string }

export interface ClaudeMessage {
  role: 'user' | 'assistant'
  content: ClaudeBlock[]
}

/** `tool_choice` of a request. */
export type ClaudeToolChoice =
  | { type: 'auto' | 'any' | 'none', disable_parallel_tool_use?: boolean }
  | { type: 'tool', name: string, disable_parallel_tool_use?: boolean }

