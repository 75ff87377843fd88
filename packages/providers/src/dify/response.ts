import type { ConvertedResponse, RelayRequest, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { isRecord, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { openAIErrorBody } from '../openai-compatible/errors.js'
import { chatCompletion, openAIUsageOf } from '../core/openai-shapes.js'
import type { DifyOptions } from './api.js'
import { difyEvents, difyUsage, outputsText } from './events.js'

/** An upstream failure reported inside a 2xx answer, for the client in OpenAI's error envelope. */
function failed (status: number, code: string, message: string): ConvertedResponse {
  return { status: status >= 400 && status < 600 ? status : 502, contentType: 'application/json', body: openAIErrorBody(message, 'upstream_error', code) }
}

/** A whole answer read from Dify's events (agent apps stream even for non-streamed clients). */
function fromEvents (req: RelayRequest, options: DifyOptions, body: Buffer): ConvertedResponse {
  let id = ''
  let content = ''
  let reasoning = ''
  let finish = 'stop'
  let usage: Usage | undefined
  let error: { status: number, code: string, message: string } | undefined
  const handle = difyEvents(options, {
    name: (value) => { id = value },
    content: (value) => { content += value },
    reasoning: (value) => { reasoning += value },
    finish: (reason, reported) => {
      finish = reason
      usage = reported
    },
    error: (status, code, message) => { error = { status, code, message } }
  })
  const reader = sseReader((event) => handle(parseJson(event.data.toString('utf8'))))
  reader.push(body)
  reader.end()
  if (error !== undefined && content === '') return failed(error.status, error.code, error.message)
  const converted: ConvertedResponse = {
    status: 200,
    contentType: 'application/json',
    body: chatCompletion({ id: `chatcmpl-${id || 'dify'}`, model: req.model, content, reasoning, finishReason: finish, ...(usage === undefined ? {} : { usage: openAIUsageOf(usage) }) }),
    text: content + reasoning
  }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/** A blocking chat or completion answer (`{event: 'message', answer, metadata: {usage}}`). */
function fromMessage (req: RelayRequest, json: JsonRecord): ConvertedResponse {
  const content = str(json.answer) ?? ''
  const usage = difyUsage(json.metadata)
  const conversation = str(json.conversation_id)
  const converted: ConvertedResponse = {
    status: 200,
    contentType: 'application/json',
    body: chatCompletion({
      id: `chatcmpl-${str(json.message_id) ?? str(json.id) ?? 'dify'}`,
      model: req.model,
      ...(num(json.created_at) === undefined ? {} : { created: num(json.created_at) }),
      content,
      finishReason: 'stop',
      ...(usage === undefined ? {} : { usage: openAIUsageOf(usage) }),
      ...(conversation === undefined || conversation === '' ? {} : { extra: { conversation_id: conversation } })
    }),
    text: content
  }
  if (usage !== undefined) converted.usage = usage
  return converted
}

/** A blocking workflow run (`{workflow_run_id, data: {status, outputs, error}}`); Dify reports only a total of tokens, so no usage. */
function fromWorkflow (req: RelayRequest, json: JsonRecord, data: JsonRecord): ConvertedResponse {
  const status = str(data.status) ?? 'succeeded'
  if (status === 'failed' || status === 'stopped') return failed(500, `workflow_${status}`, str(data.error) ?? `the workflow ${status}`)
  const content = outputsText(data.outputs)
  return {
    status: 200,
    contentType: 'application/json',
    body: chatCompletion({ id: `chatcmpl-${str(json.workflow_run_id) ?? str(data.id) ?? 'dify'}`, model: req.model, content, finishReason: 'stop' }),
    text: content
  }
}

/**
 * A non-streamed Dify answer as an OpenAI chat completion: a blocking chat or completion message
 * (usage from `metadata.usage`, the Dify `conversation_id` beside it for clients that continue the
 * conversation), a blocking workflow run (its outputs as the text), or a whole event stream (agent
 * apps, asked to stream for a non-streamed client). An error inside the answer goes to the client
 * in OpenAI's error envelope; a body of another shape is forwarded unchanged.
 */
export function convertDifyResponse (req: RelayRequest, options: DifyOptions, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const text = body.toString('utf8')
  if (/event-stream/i.test(contentType) || /^\s*(data|event):/.test(text)) return fromEvents(req, options, body)
  const json = parseJson(text)
  if (!isRecord(json)) return { status, contentType: contentType || 'application/json', body }
  if (typeof json.answer === 'string') return fromMessage(req, json)
  if (isRecord(json.data) && (json.workflow_run_id !== undefined || json.data.outputs !== undefined)) return fromWorkflow(req, json, json.data)
  return { status, contentType: contentType || 'application/json', body }
}
