import type { RelayRequest, StreamConverter, Usage } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { parseJson } from '../core/json.js'
import { chatChunkWriter, openAIUsageOf } from '../core/openai-shapes.js'
import { streamConverter } from '../core/stream-converter.js'
import type { DifyOptions } from './api.js'
import { difyEvents } from './events.js'

/**
 * Converts a Dify app's stream (server-sent events whose JSON names its `event`) into OpenAI
 * chat.completion.chunk events as they come (see difyEvents): the role chunk first, content
 * and (with `thoughts`) `reasoning_content` deltas, then the finish reason, a usage chunk when
 * Dify reported usage, and `data: [DONE]` on `message_end` (`workflow_finished` for workflow
 * apps). An `error` event before any text is dropped, so the relay can try another channel;
 * after text it goes to the client as an OpenAI error chunk, and the stream does not finish.
 * Keeps only the text not yet taken.
 */
export function createDifyStream (req: RelayRequest, options: DifyOptions): StreamConverter {
  const writer = chatChunkWriter(req.model, 'chatcmpl-dify')
  let usage: Usage | undefined
  const handle = difyEvents(options, {
    name: (id) => { writer.head(`chatcmpl-${id}`, req.model) },
    content: writer.content,
    reasoning: writer.reasoning,
    finish: (reason, reported) => {
      writer.finish(reason, reported === undefined ? undefined : openAIUsageOf(reported))
      usage = reported
    },
    error: (_status, code, message) => { if (writer.started()) writer.error(message, code) }
  })
  const reader = sseReader((event) => handle(parseJson(event.data.toString('utf8'))))
  return streamConverter(reader, { flush: writer.flush, usage: () => usage, finished: writer.finished, text: writer.text })
}
