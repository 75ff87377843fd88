// The Responses API on the wire, as the ChatGPT Codex backend speaks it, for reference; values
// are read from `unknown` through the checks in json.ts, never trusted as typed. (Other folders
// converting to or from the Responses API may import these shapes.)

/** A content part of an input message. */
export type ResponsesInputPart =
  | { type: 'input_text', text: string }
  | { type: 'input_image', image_url: string, detail?: 'low' | 'high' | 'auto' }
  | { type: 'input_file', file_data?: string, file_id?: string, filename?: string }
  | { type: 'output_text', text: string }

/** An item of a request's `input`. */
export type ResponsesInputItem =
  | { type: 'message', role: 'user' | 'assistant' | 'system' | 'developer', content: ResponsesInputPart[] }
  | { type: 'function_call', call_id: string, name: string, arguments: string }
  | { type: 'function_call_output', call_id: string, output: string }

/** A function tool of a request. */
export interface ResponsesFunctionTool {
  type: 'function'
  name: string
  description?: string
  parameters: unknown
  strict: boolean
}

/** An item of a response's `output`. */
export type ResponsesOutputItem =
  | { type: 'message', id: string, role: 'assistant', status: string, content: Array<{ type: 'output_text', text: string, annotations: unknown[] } | { type: 'refusal', refusal: string }> }
  | { type: 'reasoning', id: string, summary: Array<{ type: 'summary_text', text: string }>, encrypted_content?: string }
  | { type: 'function_call', id: string, call_id: string, name: string, arguments: string, status: string }

/** `usage` of a response: input includes the cached tokens, output the reasoning tokens. */
export interface ResponsesUsageWire {
  input_tokens: number
  input_tokens_details?: { cached_tokens?: number }
  output_tokens: number
  output_tokens_details?: { reasoning_tokens?: number }
  total_tokens: number
}

/** A response object (of `response.created`, `response.completed`, ...). */
export interface ResponsesResponse {
  id: string
  object: 'response'
  created_at: number
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed'
  model: string
  /** The Codex backend's `response.completed` may leave this empty: items come in `response.output_item.done`. */
  output: ResponsesOutputItem[]
  usage: ResponsesUsageWire | null
  incomplete_details?: { reason: 'max_output_tokens' | 'content_filter' } | null
  error?: { code: string, message: string } | null
}

/** The stream's event types read here. */
export type ResponsesEventType =
  | 'response.created'
  | 'response.in_progress'
  | 'response.output_item.added'
  | 'response.output_item.done'
  | 'response.output_text.delta'
  | 'response.refusal.delta'
  | 'response.reasoning_summary_text.delta'
  | 'response.reasoning_text.delta'
  | 'response.function_call_arguments.delta'
  | 'response.completed'
  | 'response.incomplete'
  | 'response.failed'
  | 'error'
