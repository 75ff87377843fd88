import type { ConvertedResponse, RelayRequest } from '../core/adaptor.js'
import { isRecord, list, parseJson, str } from '../core/json.js'
import { requestPayload } from './api.js'
import type { Capability, Payload, StreamUsageMode } from './types.js'
import { readUsage } from './usage.js'

/**
 * Chat completions, legacy completions and the responses API: the client's body with `model`
 * replaced; a streamed chat or completions request also asks for usage in the stream.
 */
function chatBody (req: RelayRequest, mode: StreamUsageMode): Payload {
  return requestPayload(req, (body) => {
    if (!req.stream || (req.endpoint !== 'chat' && req.endpoint !== 'completions')) return
    if (mode === 'strip') {
      delete body.stream_options
      return
    }
    const options = isRecord(body.stream_options) ? body.stream_options : {}
    body.stream_options = { ...options, include_usage: true }
  })
}

/** Completion text of one chat or completions choice, under `delta` (streams) or `message`. */
export function choiceText (choice: unknown, key: 'delta' | 'message'): string {
  if (!isRecord(choice)) return ''
  let text = str(choice.text) ?? ''
  const part = choice[key]
  if (!isRecord(part)) return text
  const content = part.content
  if (typeof content === 'string') text += content
  else for (const item of list(content)) if (isRecord(item)) text += str(item.text) ?? ''
  // Reasoning (DeepSeek, Ollama) and tool arguments are billed as completion tokens too.
  text += str(part.reasoning_content) ?? str(part.reasoning) ?? ''
  for (const call of list(part.tool_calls)) {
    if (isRecord(call) && isRecord(call.function)) text += str(call.function.arguments) ?? ''
  }
  return text
}

/** Output text of a complete responses-API `response` object. */
function responseText (response: unknown): string {
  let text = ''
  for (const item of list(isRecord(response) ? response.output : undefined)) {
    if (!isRecord(item)) continue
    for (const content of list(item.content)) if (isRecord(content)) text += str(content.text) ?? ''
    for (const summary of list(item.summary)) if (isRecord(summary)) text += str(summary.text) ?? ''
    text += str(item.arguments) ?? ''
  }
  return text
}

/** A non-streamed chat, completions or responses answer: forwarded unchanged, usage and text read. */
function convertChat (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return converted
  const usage = readUsage(json.usage)
  if (usage !== undefined) converted.usage = usage
  converted.text = req.endpoint === 'responses'
    ? responseText(json)
    : list(json.choices).map((choice) => choiceText(choice, 'message')).join('')
  return converted
}

export const chatCapability: Capability = { body: chatBody, convert: convertChat }
