import { StringDecoder } from 'node:string_decoder'
import type { StreamConverter, Usage } from '../adaptor.js'
import { at, isRecord, list, parseJson, str } from '../json.js'
import { choiceText } from './chat.js'
import { readUsage } from './usage.js'

/** Typed events (responses API, streamed audio and images) that end a stream normally. */
const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'transcript.text.done',
  'speech.audio.done',
  'image_generation.completed',
  'image_edit.completed'
])

/** Typed events whose `delta` is completion text. */
const TEXT_DELTA_EVENTS: ReadonlySet<string> = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
  'transcript.text.delta'
])

/**
 * Relays an OpenAI server-sent-event stream (chat, completions, responses, streamed audio and
 * images): events are forwarded unchanged as they complete, comments and keep-alives dropped;
 * usage, text and the end marker are read on the way. Keeps only the current event in memory.
 */
export function createOpenAIStream (): StreamConverter {
  const decoder = new StringDecoder('utf8')
  const lineEnd = /\r\n|\r|\n/g
  let pending = ''
  let eventName: string | undefined
  let data: string[] = []
  let usage: Usage | undefined
  let text = ''
  let done = false

  function inspect (payload: string): void {
    if (payload === '[DONE]') {
      done = true
      return
    }
    const json = parseJson(payload)
    if (!isRecord(json)) return
    const type = str(json.type)
    let seen = readUsage(json.usage) ?? readUsage(at(json, 'response', 'usage'))
    for (const choice of list(json.choices)) {
      text += choiceText(choice, 'delta')
      // Moonshot puts the usage inside the last choice instead of beside it.
      seen ??= isRecord(choice) ? readUsage(choice.usage) : undefined
    }
    if (seen !== undefined) usage = seen
    if (type === undefined) return
    if (TEXT_DELTA_EVENTS.has(type)) text += str(json.delta) ?? ''
    if (TERMINAL_EVENTS.has(type)) done = true
  }

  function dispatch (): string {
    const lines = data
    const name = eventName
    data = []
    eventName = undefined
    if (lines.length === 0) return ''
    inspect(lines.join('\n'))
    let out = name === undefined ? '' : `event: ${name}\n`
    for (const line of lines) out += `data: ${line}\n`
    return out + '\n'
  }

  function line (value: string): string {
    if (value === '') return dispatch()
    if (value.startsWith(':')) return ''
    const colon = value.indexOf(':')
    const field = colon === -1 ? value : value.slice(0, colon)
    let content = colon === -1 ? '' : value.slice(colon + 1)
    if (content.startsWith(' ')) content = content.slice(1)
    if (field === 'data') data.push(content)
    else if (field === 'event') eventName = content
    return ''
  }

  function feed (input: string): string {
    pending += input
    let out = ''
    let start = 0
    lineEnd.lastIndex = 0
    for (let match = lineEnd.exec(pending); match !== null; match = lineEnd.exec(pending)) {
      // A trailing CR may be the first half of a CRLF split across chunks.
      if (match[0] === '\r' && match.index === pending.length - 1) break
      out += line(pending.slice(start, match.index))
      start = match.index + match[0].length
    }
    pending = pending.slice(start)
    return out
  }

  return {
    push: (chunk) => feed(decoder.write(chunk)),
    end: () => {
      let out = feed(decoder.end())
      if (pending !== '') {
        line(pending.replace(/\r$/, ''))
        pending = ''
      }
      // No closing blank line: a complete event still counts, a cut one is dropped.
      if (data.length > 0) {
        const payload = data.join('\n')
        if (payload === '[DONE]' || parseJson(payload) !== undefined) out += dispatch()
        data = []
        eventName = undefined
      }
      return out
    },
    usage: () => usage,
    takeText: () => {
      const taken = text
      text = ''
      return taken
    },
    finished: () => done
  }
}
