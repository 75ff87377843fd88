import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/sse.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { readUsage } from '../openai-compatible/usage.js'
import { errorChunk } from '../core/openai-shapes.js'
import { outbox, streamConverter } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'
import { detailsText, miniMaxOpenAIUsage } from './chat.js'
import { baseRespFailure } from './errors.js'
import { thinkSplitter, type TextPiece, type ThinkSplitter } from './think.js'

const DONE = 'data: [DONE]\n\n'

/**
 * Converts MiniMax's chat stream (OpenAI-like chunks; the last one carries the finish reason,
 * the whole message again, `usage` and `base_resp`) into clean OpenAI chat.completion.chunk
 * events: a role chunk per choice, content deltas with the `<think>` block (or
 * `reasoning_details`) as `reasoning_content` deltas, tool call deltas as they come, the finish
 * reason, a usage chunk and `data: [DONE]` once both the finish reason and the usage arrived
 * (or the upstream sent its own [DONE]). The repeated whole message is not sent again. Nothing
 * is sent before the first content, so an error reported in `base_resp` at once lets the
 * gateway retry; one after content reaches the client as an OpenAI error chunk.
 */
export function createMiniMaxChatStream (req: RelayRequest): StreamConverter {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  const started = new Set<number>()
  const splitters = new Map<number, ThinkSplitter>()
  const streamedTools = new Set<number>()
  const finished = new Set<number>()
  let usage: Usage | undefined
  let wireUsage: unknown
  let done = false
  const text = textKeeper()
  const out = outbox()

  function setPrefix (json: JsonRecord): void {
    const head = { id: str(json.id) ?? '', object: 'chat.completion.chunk', created: num(json.created) ?? Math.floor(Date.now() / 1000), model: str(json.model) ?? req.model }
    prefix = JSON.stringify(head).slice(0, -1)
  }

  function chunk (index: number, delta: JsonRecord, finish: string | null = null): void {
    if (!started.has(index)) {
      started.add(index)
      out.push(`data: ${prefix},"choices":[{"index":${index},"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":${index},"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  function emit (index: number, pieces: readonly TextPiece[]): void {
    for (const piece of pieces) {
      if (piece.text === '') continue
      chunk(index, piece.kind === 'reasoning' ? { reasoning_content: piece.text } : { content: piece.text })
      text.keep(piece.text)
    }
  }

  function toolCalls (index: number, calls: readonly unknown[]): void {
    if (calls.length === 0) return
    streamedTools.add(index)
    chunk(index, { tool_calls: calls })
    for (const call of calls) text.keep(str(at(call, 'function', 'arguments')) ?? '')
  }

  function splitter (index: number): ThinkSplitter {
    let found = splitters.get(index)
    if (found === undefined) splitters.set(index, found = thinkSplitter())
    return found
  }

  function finish (): void {
    if (prefix === undefined) return
    if (usage !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(miniMaxOpenAIUsage(usage, wireUsage))}}\n\n`)
    out.push(DONE)
    done = true
  }

  function choice (value: JsonRecord, position: number): void {
    const index = num(value.index) ?? position
    if (finished.has(index)) return
    const delta = isRecord(value.delta) ? value.delta : undefined
    if (delta !== undefined) {
      const reasoning = str(delta.reasoning_content) ?? detailsText(delta.reasoning_details)
      if (reasoning !== '') emit(index, [{ kind: 'reasoning', text: reasoning }])
      const content = str(delta.content)
      if (content !== undefined && content !== '') emit(index, splitter(index).push(content))
      toolCalls(index, list(delta.tool_calls))
    }
    const reason = str(value.finish_reason)
    if (reason === undefined || reason === '') return
    emit(index, splitter(index).end())
    // Tool calls sent only with the final whole message.
    if (!streamedTools.has(index)) {
      const calls = list(at(value, 'message', 'tool_calls')).map((call, i) => (isRecord(call) ? { index: i, ...call } : call))
      toolCalls(index, calls)
    }
    finished.add(index)
    chunk(index, {}, reason)
  }

  function event (data: string): void {
    if (done) return
    if (data === '[DONE]') {
      finish()
      return
    }
    const json = parseJson(data)
    if (!isRecord(json)) return
    const reported = baseRespFailure(json.base_resp)
    if (reported !== undefined) {
      if (started.size === 0) return
      out.push(errorChunk(reported.failure.message, reported.failure.code ?? 'upstream_error'))
      return
    }
    if (prefix === undefined) setPrefix(json)
    list(json.choices).forEach((value, position) => { if (isRecord(value)) choice(value, position) })
    const seen = readUsage(json.usage)
    if (seen !== undefined) {
      usage = seen
      wireUsage = json.usage
    }
    if (finished.size > 0 && usage !== undefined) finish()
  }

  const reader = sseReader((sse) => event(sse.data.toString('utf8')))
  return streamConverter(reader, { flush: out.flush, usage: () => (done ? usage : undefined), finished: () => done, text })
}
