// Anthropic's Messages API on the wire, for the fixtures of the types that speak it (Claude, AWS Claude, Vertex AI, Claude Code).
import { MODEL } from '../kit.js'

export const anthropicEvents = (events: Array<Record<string, unknown>>): string =>
  events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('')

export const anthropicMessage = (content: unknown[], stopReason: string) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content, stop_reason: stopReason, stop_sequence: null,
  usage: { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 7 }
})

export function anthropicStream (blocks: Array<{ start: Record<string, unknown>, deltas: Array<Record<string, unknown>> }>, stopReason: string): string {
  const events: Array<Record<string, unknown>> = [
    { type: 'message_start', message: { ...anthropicMessage([], stopReason), stop_reason: null, usage: { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 1 } } }
  ]
  blocks.forEach((block, index) => {
    events.push({ type: 'content_block_start', index, content_block: block.start })
    if (index === 0) events.push({ type: 'ping' })
    for (const delta of block.deltas) events.push({ type: 'content_block_delta', index, delta })
    events.push({ type: 'content_block_stop', index })
  })
  events.push({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 7 } }, { type: 'message_stop' })
  return anthropicEvents(events)
}

export const anthropicError = (type: string, message: string, details?: unknown) =>
  JSON.stringify({ type: 'error', error: { type, message, ...(details === undefined ? {} : { details }) }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' })
