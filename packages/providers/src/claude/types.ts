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

export type ClaudeImageSource =
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

/** `usage` of an answer, of `message_start` and (cumulative counts) of `message_delta`. */
export interface ClaudeUsage {
  /** Prompt tokens after the last cache breakpoint: neither read from nor written to the cache. */
  input_tokens?: number
  /** Prompt tokens written to the cache by this request (billed above the input price). */
  cache_creation_input_tokens?: number
  /** Prompt tokens read from the cache (billed at a tenth of the input price). */
  cache_read_input_tokens?: number
  output_tokens?: number
}

/** A non-streamed answer. */
export interface ClaudeResponse {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: ClaudeBlock[]
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | null
  stop_sequence: string | null
  usage: ClaudeUsage
}

/** The error envelope, of failed answers and of the stream's `error` event. */
export interface ClaudeError {
  type: 'error'
  error: { type: string, message: string, details?: { error_code?: string } }
  request_id?: string
}
