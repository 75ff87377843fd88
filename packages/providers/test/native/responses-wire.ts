// The Responses API's stream on the wire as the ChatGPT Codex backend sends it, for the Codex
// fixture: `event:` and `data:` lines, and a final `response.completed` whose `output` is empty
// (with store: false the items come only in `response.output_item.done`).
import { MODEL } from '../kit.js'

/** input 12 (4 cached), output 7: the kit's NATIVE_USAGE in the Responses API's names. */
export const RESPONSES_USAGE = { input_tokens: 12, input_tokens_details: { cached_tokens: 4 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 19 }

export type WireItem =
  | { kind: 'text', pieces: string[] }
  | { kind: 'reasoning', pieces: string[] }
  | { kind: 'call', callId: string, name: string, pieces: string[] }

export interface StreamOptions {
  usage?: Record<string, unknown>
  /** `completed` (default), `incomplete` (max_output_tokens), or `failed` before any item. */
  status?: 'completed' | 'incomplete' | 'failed'
  /** Repeat the items in the final event's `output`, as the public Responses API does. */
  fullOutput?: boolean
}

export const responseShell = (status: string, usage: unknown, output: unknown[] = []) => ({
  id: 'resp_1', object: 'response', created_at: 1700000000, status, error: null, incomplete_details: null, instructions: 'x', model: MODEL,
  output, parallel_tool_calls: false, store: false, tool_choice: 'auto', tools: [], usage
})

/** The events of one answer made of `items`, as SSE text. */
export function responsesStream (items: WireItem[], options: StreamOptions = {}): string {
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: responseShell('in_progress', null) },
    { type: 'response.in_progress', response: responseShell('in_progress', null) }
  ]
  const done: unknown[] = []
  if (options.status === 'failed') {
    events.push({ type: 'response.failed', response: { ...responseShell('failed', null), error: { code: 'server_error', message: 'The model failed to answer.' } } })
    return encode(events)
  }
  items.forEach((item, index) => {
    const whole = item.pieces.join('')
    if (item.kind === 'text') {
      const id = `msg_${index}`
      events.push({ type: 'response.output_item.added', output_index: index, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } })
      events.push({ type: 'response.content_part.added', item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } })
      for (const delta of item.pieces) events.push({ type: 'response.output_text.delta', item_id: id, output_index: index, content_index: 0, delta, logprobs: [] })
      events.push({ type: 'response.output_text.done', item_id: id, output_index: index, content_index: 0, text: whole, logprobs: [] })
      events.push({ type: 'response.content_part.done', item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: whole, annotations: [] } })
      const final = { id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: whole, annotations: [] }] }
      events.push({ type: 'response.output_item.done', output_index: index, item: final })
      done.push(final)
    } else if (item.kind === 'reasoning') {
      const id = `rs_${index}`
      events.push({ type: 'response.output_item.added', output_index: index, item: { id, type: 'reasoning', summary: [] } })
      events.push({ type: 'response.reasoning_summary_part.added', item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } })
      for (const delta of item.pieces) events.push({ type: 'response.reasoning_summary_text.delta', item_id: id, output_index: index, summary_index: 0, delta })
      events.push({ type: 'response.reasoning_summary_text.done', item_id: id, output_index: index, summary_index: 0, text: whole })
      const final = { id, type: 'reasoning', summary: [{ type: 'summary_text', text: whole }], encrypted_content: 'gAAAA-opaque' }
      events.push({ type: 'response.output_item.done', output_index: index, item: final })
      done.push(final)
    } else {
      const id = `fc_${index}`
      events.push({ type: 'response.output_item.added', output_index: index, item: { id, type: 'function_call', status: 'in_progress', arguments: '', call_id: item.callId, name: item.name } })
      for (const delta of item.pieces) events.push({ type: 'response.function_call_arguments.delta', item_id: id, output_index: index, delta })
      events.push({ type: 'response.function_call_arguments.done', item_id: id, output_index: index, arguments: whole })
      const final = { id, type: 'function_call', status: 'completed', arguments: whole, call_id: item.callId, name: item.name }
      events.push({ type: 'response.output_item.done', output_index: index, item: final })
      done.push(final)
    }
  })
  const usage = options.usage ?? RESPONSES_USAGE
  if (options.status === 'incomplete') {
    events.push({ type: 'response.incomplete', response: { ...responseShell('incomplete', usage, options.fullOutput === true ? done : []), incomplete_details: { reason: 'max_output_tokens' } } })
  } else {
    events.push({ type: 'response.completed', response: responseShell('completed', usage, options.fullOutput === true ? done : []) })
  }
  return encode(events)
}

function encode (events: Array<Record<string, unknown>>): string {
  return events.map((event, i) => `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`).join('')
}

/** The backend's FastAPI-style error body. */
export const detail = (text: string): string => JSON.stringify({ detail: text })

/** The backend's OpenAI-style error body. */
export const codexError = (type: string, message: string, more: Record<string, unknown> = {}): string =>
  JSON.stringify({ error: { type, message, ...more } })
