import type { ConvertedResponse, RelayRequest } from '../core/adaptor.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { choiceText } from '../openai-compatible/chat.js'
import { openAIErrorBody } from '../openai-compatible/errors.js'
import { fastGPTUsage } from './api.js'

/** HTTP status of FastGPT's own error codes (`{code, statusText, message}`), for errors inside a 2xx answer. */
function errorStatus (code: number | undefined, statusText: string): number {
  if (code === 514 || code === 403 || code === 401 || /^(unAuth|openapiUn)/.test(statusText)) return 401
  if (code === 510 || /insufficientQuota|aiPointsNotEnough/i.test(statusText)) return 402
  if (code === 429 || statusText === 'tooManyRequest') return 429
  return code !== undefined && code >= 400 && code < 600 ? code : 502
}

/**
 * FastGPT's error envelope (`{code, statusText, message, data}`), which older deployments send
 * with HTTP 200; undefined for anything else.
 */
function fastGPTError (json: JsonRecord): { status: number, code: string, message: string } | undefined {
  if (Array.isArray(json.choices) || typeof json.message !== 'string' || (typeof json.code !== 'number' && typeof json.statusText !== 'string')) return undefined
  const code = num(json.code)
  if (code === 200) return undefined
  const statusText = str(json.statusText) ?? ''
  return { status: errorStatus(code, statusText), code: statusText || String(code ?? 'fastgpt_error'), message: json.message }
}

/**
 * The content of a detailed answer's message, which FastGPT gives as its list of responses
 * (`[{type: 'text', text: {content}}, {type: 'reasoning', reasoning: {content}}, {type: 'tool', …}]`)
 * when there are several: the text parts joined, the reasoning apart.
 */
function flatten (message: JsonRecord): JsonRecord {
  if (!Array.isArray(message.content)) return message
  let content = ''
  let reasoning = ''
  for (const item of message.content) {
    if (!isRecord(item)) continue
    content += str(at(item, 'text', 'content')) ?? ''
    reasoning += str(at(item, 'reasoning', 'content')) ?? ''
  }
  const flat: Record<string, unknown> = { ...message, content }
  if (reasoning !== '') flat.reasoning_content = reasoning
  return flat
}

/**
 * A non-streamed FastGPT answer as an OpenAI chat completion: FastGPT's fields (`id` is its chat
 * id, `object` and `model` empty) completed, a list of responses (detail mode) flattened to text,
 * the placeholder usage removed (fastGPTUsage) so the gateway counts the text, and FastGPT's
 * extras (`responseData`, `newVariables`) kept for clients that asked for `detail`. An error
 * envelope in a 2xx answer goes to the client as an OpenAI error; other bodies pass unchanged.
 */
export function convertFastGPTResponse (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return { status, contentType: contentType || 'application/json', body }
  const error = fastGPTError(json)
  if (error !== undefined) return { status: error.status, contentType: 'application/json', body: openAIErrorBody(error.message, 'upstream_error', error.code) }
  if (!Array.isArray(json.choices)) return { status, contentType: contentType || 'application/json', body }
  const usage = fastGPTUsage(json.usage)
  const choices = list(json.choices).map((choice) => isRecord(choice) && isRecord(choice.message) ? { ...choice, message: flatten(choice.message) } : choice)
  const answer: Record<string, unknown> = {
    ...json,
    id: `chatcmpl-${str(json.id) ?? ''}`,
    object: 'chat.completion',
    created: num(json.created) || Math.floor(Date.now() / 1000),
    model: str(json.model) || req.model,
    choices
  }
  delete answer.usage
  if (usage !== undefined) answer.usage = json.usage
  const converted: ConvertedResponse = {
    status,
    contentType: 'application/json',
    body: JSON.stringify(answer),
    text: choices.map((choice) => choiceText(choice, 'message')).join('')
  }
  if (usage !== undefined) converted.usage = usage
  return converted
}
