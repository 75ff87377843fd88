import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { isRecord, list, num, parseJson, str } from '../core/json.js'
import { choiceText } from '../openai-compatible/chat.js'
import { errorChunk } from '../core/openai-shapes.js'
import { outbox, streamConverter } from '../core/stream-converter.js'
import { textKeeper } from '../core/text-keeper.js'
import { fastGPTUsage } from './api.js'

const DONE = 'data: [DONE]\n\n'

/** Events that carry chat chunks: unnamed (detail off) or named `answer` / `fastAnswer` (detail on). */
const CHUNK_EVENTS: ReadonlySet<string | undefined> = new Set([undefined, 'answer', 'fastAnswer'])

/**
 * Converts a FastGPT app's stream into a plain OpenAI chat stream. With `detail` off FastGPT
 * sends OpenAI-like chunks; with it on each comes as `event: answer` (or `fastAnswer`, a fixed
 * reply) among workflow events (`flowNodeStatus`, `flowResponses`, tool and variable events),
 * which are dropped, as are the event names. Chunks get OpenAI's fields back (FastGPT leaves
 * `object`, `id` and `model` empty); `[DONE]` (which FastGPT sends before its `flowResponses`)
 * ends the stream. FastGPT reports no usage (a placeholder at most, dropped), so the gateway
 * counts the text. An `error` event before any chunk is dropped, so the relay can try another
 * channel; after one it becomes an OpenAI error chunk.
 */
export function createFastGPTStream (req: RelayRequest): StreamConverter {
  const text = textKeeper()
  const created = Math.floor(Date.now() / 1000)
  let usage: Usage | undefined
  let started = false
  let done = false
  const out = outbox()

  const reader = sseReader((event) => {
    if (done) return
    const data = event.data.toString('utf8')
    if (event.name === 'error') {
      if (!started) return
      const json = parseJson(data)
      const message = isRecord(json) ? str(json.message) ?? str(json.statusText) : undefined
      out.push(errorChunk(message ?? 'the FastGPT app failed', isRecord(json) ? str(json.statusText) ?? 'fastgpt_error' : 'fastgpt_error'))
      return
    }
    if (!CHUNK_EVENTS.has(event.name)) return
    if (data.trim() === '[DONE]') {
      out.push(DONE)
      done = true
      return
    }
    const json = parseJson(data)
    if (!isRecord(json)) return
    if (isRecord(json.error)) {
      if (started) out.push(`data: ${data}\n\n`)
      return
    }
    const chunk: Record<string, unknown> = {
      ...json,
      id: str(json.id) || 'chatcmpl-fastgpt',
      object: 'chat.completion.chunk',
      created: num(json.created) || created,
      model: str(json.model) || req.model
    }
    const reported = fastGPTUsage(json.usage)
    if (reported !== undefined) usage = reported
    else delete chunk.usage
    for (const choice of list(json.choices)) text.keep(choiceText(choice, 'delta'))
    started = true
    out.push(`data: ${JSON.stringify(chunk)}\n\n`)
  })

  return streamConverter(reader, { flush: out.flush, usage: () => usage, finished: () => done, text })
}
