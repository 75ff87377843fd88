import type { Usage } from '../core/adaptor.js'
import { at, isRecord, num, str, type JsonRecord } from '../core/json.js'
import { readUsage } from '../openai-compatible/usage.js'
import type { DifyOptions } from './api.js'

/** What a Dify answer amounts to, event by event. */
interface DifySink {
  /** The answer's id (message, workflow run or task). */
  name: (id: string) => void
  content: (text: string) => void
  reasoning: (text: string) => void
  /** The answer ended normally. */
  finish: (reason: 'stop' | 'content_filter', usage: Usage | undefined) => void
  error: (status: number, code: string, message: string) => void
}

/** Keys of a workflow's outputs read as its answer, in this order. */
const ANSWER_KEYS = ['answer', 'text', 'output', 'result', 'content']

/** A workflow's outputs as text: a usual answer key, else the only string, else the JSON. */
export function outputsText (outputs: unknown): string {
  if (typeof outputs === 'string') return outputs
  if (!isRecord(outputs)) return ''
  for (const key of ANSWER_KEYS) {
    const value = str(outputs[key])
    if (value !== undefined) return value
  }
  const values = Object.values(outputs)
  const only = values[0]
  if (values.length === 1 && typeof only === 'string') return only
  return values.length === 0 ? '' : JSON.stringify(outputs)
}

/**
 * Dify's usage: prompt and completion tokens (the prices and latency beside them are Dify's own
 * accounting). All zeros (an answer that used no model the app reports on) count as none, so the
 * gateway counts the text.
 */
export function difyUsage (metadata: unknown): Usage | undefined {
  const usage = readUsage(at(metadata, 'usage'))
  return usage === undefined || (usage.promptTokens === 0 && usage.completionTokens === 0) ? undefined : usage
}

/** A markdown link to a file the app produced (images shown inline). */
function fileMarkdown (event: JsonRecord): string {
  const url = str(event.url) ?? ''
  if (url === '' || event.belongs_to === 'user') return ''
  return event.type === 'image' ? `\n![image](${url})\n` : `\n[file](${url})\n`
}

/**
 * Reads Dify's events (the JSON `data` of each server-sent event, named by its `event` field) of
 * chat, agent, completion and workflow apps into `sink`:
 *
 * - `message` and `agent_message` are answer text; a `message` after agent messages is the
 *   agent's closing copy of the whole answer (newer agent apps) and is skipped;
 * - `message_replace` (output moderation) is the replacement text, the answer then finishes
 *   with `content_filter`;
 * - `message_file` from the app becomes a markdown link (an image inline);
 * - `text_chunk` is a workflow's text; `workflow_finished` ends a workflow app (its outputs are
 *   the answer when no text streamed; a failed or stopped run is an error);
 * - `message_end` ends the other apps, with the usage;
 * - with `thoughts`, `node_started` and agent tool calls (`agent_thought` with a tool, once per
 *   thought and tool) go to `reasoning`;
 * - `error` is an error; `ping`, `tts_message`, other workflow events are ignored.
 *
 * After the end, nothing more is read. Returns the event handler.
 */
export function difyEvents (options: DifyOptions, sink: DifySink): (json: unknown) => void {
  let ended = false
  let agent = false
  let replaced = false
  let workflowText = false
  let named = false
  const tools = new Set<string>()

  return (json) => {
    if (ended || !isRecord(json)) return
    if (!named) {
      const id = str(json.message_id) ?? str(json.workflow_run_id) ?? str(json.task_id)
      if (id !== undefined && id !== '') {
        named = true
        sink.name(id)
      }
    }
    switch (str(json.event)) {
      case 'agent_message':
        agent = true
        sink.content(str(json.answer) ?? '')
        break
      case 'message':
        if (!agent) sink.content(str(json.answer) ?? '')
        break
      case 'message_replace':
        replaced = true
        sink.content(str(json.answer) ?? '')
        break
      case 'message_file':
        sink.content(fileMarkdown(json))
        break
      case 'agent_thought': {
        const tool = str(json.tool) ?? ''
        const key = `${str(json.id) ?? ''}\0${tool}`
        if (!options.thoughts || tool === '' || tools.has(key)) break
        tools.add(key)
        const input = str(json.tool_input) ?? ''
        sink.reasoning(`Tool ${tool}${input === '' ? '' : `: ${input}`}\n`)
        break
      }
      case 'node_started': {
        const title = str(at(json, 'data', 'title')) ?? ''
        if (options.thoughts && title !== '') sink.reasoning(`Node ${title}\n`)
        break
      }
      case 'text_chunk':
        workflowText = true
        sink.content(str(at(json, 'data', 'text')) ?? '')
        break
      case 'workflow_finished': {
        if (options.mode !== 'workflow') break
        ended = true
        const data = isRecord(json.data) ? json.data : {}
        const status = str(data.status) ?? 'succeeded'
        if (status === 'failed' || status === 'stopped') {
          sink.error(500, `workflow_${status}`, str(data.error) ?? `the workflow ${status}`)
          break
        }
        if (!workflowText) sink.content(outputsText(data.outputs))
        sink.finish('stop', undefined)
        break
      }
      case 'message_end':
        ended = true
        sink.finish(replaced ? 'content_filter' : 'stop', difyUsage(json.metadata))
        break
      case 'error':
        ended = true
        sink.error(num(json.status) ?? 500, str(json.code) ?? 'dify_error', str(json.message) ?? 'the Dify app failed')
        break
      default:
        break
    }
  }
}
