import type { RelayRequest, StreamConverter } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { at, isRecord, list, num, parseJson, str, type JsonRecord } from '../core/json.js'
import { geminiFinishReason, geminiOpenAIUsage, geminiUsage, partsText, readGeminiTokens, toolCallOf, type GeminiTokens } from './response.js'
import { outbox, streamConverter } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'

const DONE = 'data: [DONE]\n\n'

/** How many candidates a request asked for (each ends with its own finishReason). */
function candidatesAsked (count: unknown): number {
  const n = num(count)
  return n !== undefined && n > 1 ? Math.floor(n) : 1
}

/**
 * Converts Gemini's streamed answer (`alt=sse`: one GenerateContentResponse per event) into
 * OpenAI chat.completion.chunk events, event by event: a role chunk first (per candidate), then
 * text deltas, `reasoning_content` deltas for thought parts and tool calls (Gemini sends each
 * function call whole: id, name and all arguments in one chunk), the finish reason, a usage
 * chunk (from the last usageMetadata) and `data: [DONE]`. Gemini has no end marker of its own:
 * the stream is finished once every candidate asked for has sent its finishReason (a blocked
 * prompt finishes at once with `content_filter`), and those bytes go out with [DONE], so an
 * upstream that ends later ends cleanly while one cut before any finishReason never counts as
 * finished. Nothing is sent before the first event, so an upstream failing at once can be
 * retried; an error event after content goes to the client as an OpenAI error chunk. Keeps only
 * the counts, the candidates' indexes and the text not yet taken.
 */
export function createGeminiChatStream (req: RelayRequest): StreamConverter {
  const asked = candidatesAsked(req.body?.n)
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` without its closing brace. */
  let prefix: string | undefined
  const started = new Set<number>()
  const calledTools = new Set<number>()
  const finished = new Set<number>()
  let calls = 0
  const tokens: GeminiTokens = {}
  let done = false
  const text = textKeeper()
  const out = outbox()

  function chunk (index: number, delta: JsonRecord, finish: string | null = null): void {
    if (prefix === undefined) prefix = JSON.stringify({ id: 'chatcmpl-', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: req.model }).slice(0, -1)
    if (!started.has(index)) {
      started.add(index)
      out.push(`data: ${prefix},"choices":[{"index":${index},"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`)
    }
    out.push(`data: ${prefix},"choices":[{"index":${index},"delta":${JSON.stringify(delta)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`)
  }

  function finish (): void {
    const usage = geminiOpenAIUsage(tokens)
    if (usage !== undefined) out.push(`data: ${prefix},"choices":[],"usage":${JSON.stringify(usage)}}\n\n`)
    out.push(DONE)
    done = true
  }

  function candidate (value: JsonRecord): void {
    const index = num(value.index) ?? 0
    if (finished.has(index)) return
    for (const part of list(at(value, 'content', 'parts'))) {
      if (!isRecord(part)) continue
      const call = toolCallOf(part, `call_${calls + 1}`)
      if (call !== undefined) {
        chunk(index, { tool_calls: [{ index: calls, ...call }] })
        calls++
        calledTools.add(index)
        text.keep(partsText([part]))
        continue
      }
      const value = str(part.text) ?? ''
      if (value === '') continue
      chunk(index, part.thought === true ? { reasoning_content: value } : { content: value })
      text.keep(value)
    }
    const reason = str(value.finishReason)
    if (reason !== undefined && reason !== 'FINISH_REASON_UNSPECIFIED') {
      finished.add(index)
      chunk(index, {}, geminiFinishReason(reason, calledTools.has(index)))
    }
  }

  function event (json: unknown): void {
    if (!isRecord(json)) return
    // Counts that come after the finish still bill (the client's stream has ended by then).
    if (done) {
      readGeminiTokens(json.usageMetadata, tokens)
      return
    }
    if (isRecord(json.error)) {
      if (started.size === 0) return
      const status = str(json.error.status) ?? 'upstream_error'
      out.push(`data: ${JSON.stringify({ error: { message: str(json.error.message) ?? 'upstream error', type: status, param: null, code: status } })}\n\n`)
      return
    }
    if (prefix === undefined) {
      const head = JSON.stringify({ id: `chatcmpl-${str(json.responseId) ?? ''}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: str(json.modelVersion) ?? req.model })
      prefix = head.slice(0, -1)
    }
    readGeminiTokens(json.usageMetadata, tokens)
    const candidates = list(json.candidates)
    for (const value of candidates) if (isRecord(value)) candidate(value)
    if (candidates.length === 0 && str(at(json, 'promptFeedback', 'blockReason')) !== undefined) {
      chunk(0, { content: '' }, 'content_filter')
      finish()
      return
    }
    if (finished.size >= asked) finish()
  }

  const reader = sseReader((sse) => event(parseJson(sse.data.toString('utf8'))))
  return streamConverter(reader, { flush: out.flush, usage: () => (done ? geminiUsage(tokens) : undefined), finished: () => done, text })
}

/**
 * Relays a Gemini client's `alt=sse` stream unchanged (complete events only: a cut last event is
 * held back), reading usage from the last usageMetadata and the text of each candidate's parts;
 * finished once every candidate asked for sent its finishReason (or the prompt was blocked).
 */
export function createGeminiPassThroughStream (req: RelayRequest): StreamConverter {
  const asked = candidatesAsked(at(req.body, 'generationConfig', 'candidateCount'))
  const finished = new Set<number>()
  const tokens: GeminiTokens = {}
  let done = false
  const text = textKeeper()

  const reader = sseReader((sse) => {
    const json = parseJson(sse.data.toString('utf8'))
    if (!isRecord(json)) return
    readGeminiTokens(json.usageMetadata, tokens)
    if (done) return
    const candidates = list(json.candidates)
    for (const candidate of candidates) {
      if (!isRecord(candidate)) continue
      text.keep(partsText(list(at(candidate, 'content', 'parts'))))
      const reason = str(candidate.finishReason)
      if (reason !== undefined && reason !== 'FINISH_REASON_UNSPECIFIED') finished.add(num(candidate.index) ?? 0)
    }
    if (finished.size >= asked || (candidates.length === 0 && str(at(json, 'promptFeedback', 'blockReason')) !== undefined)) done = true
  })

  return {
    push: (bytes) => reader.push(bytes),
    end: () => reader.end(),
    usage: () => (done ? geminiUsage(tokens) : undefined),
    takeText: () => text.take(),
    untakenBytes: () => text.bytes(),
    finished: () => done
  }
}
